import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { svelteTesting } from "@testing-library/svelte/vite";

// The Tauri shell serves `dist/` from disk under a strict CSP
// (`default-src 'self'`), so the build emits plain files with relative URLs,
// external CSS, and no inline script.
export default defineConfig({
  base: "./",
  plugins: [svelte(), svelteTesting()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    modulePreload: { polyfill: false },
  },
  test: {
    environment: "jsdom",
    include: ["tests/**/*.test.ts"],
    setupFiles: ["tests/setup.ts"],
  },
});
