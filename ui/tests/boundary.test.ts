import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

const sources = files(SRC).filter((path) => /\.(ts|svelte)$/.test(path));

describe("source rules", () => {
  it("only src/lib/backend imports @tauri-apps/api", () => {
    const importers = sources
      .filter((path) => readFileSync(path, "utf8").includes("@tauri-apps/api"))
      .map((path) => relative(SRC, path));
    expect(importers).toEqual(["lib/backend/tauri.ts"]);
  });

  it("never renders markup from strings", () => {
    const offenders = sources.filter((path) =>
      /\{@html|innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(readFileSync(path, "utf8")));
    expect(offenders.map((path) => relative(SRC, path))).toEqual([]);
  });

  it("keeps index.html free of inline script, handlers and styles (the CSP forbids them)", () => {
    const html = readFileSync(join(import.meta.dirname, "..", "index.html"), "utf8");
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/\sstyle=|<style/i);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it("uses no inline style attributes in components", () => {
    const offenders = sources.filter((path) => /\sstyle[=:]/.test(readFileSync(path, "utf8").replace(/<style[\s\S]*?<\/style>/g, "")));
    expect(offenders.map((path) => relative(SRC, path))).toEqual([]);
  });
});
