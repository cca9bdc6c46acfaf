/**
 * The system's look: a light and a dark palette with the same colours
 * defined, text on its background readable in both (WCAG 2 contrast of at
 * least 4.5:1, so better/worse stay legible in the dark), colours only as
 * variables, and text sizes in rem so they follow the desktop's font size.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");
const css = readFileSync(join(SRC, "app.css"), "utf8");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

/** The custom properties of the first `:root { … }` inside `text`. */
function palette(text: string): Map<string, string> {
  const body = /:root\s*\{([^}]*)\}/.exec(text)?.[1] ?? "";
  return new Map([...body.matchAll(/(--[a-z-]+)\s*:\s*([^;]+);/g)].map((m) => [m[1], m[2].trim()]));
}

const light = palette(css);
const darkBlock = /:root\[data-theme="dark"\]\s*\{([^}]*)\}/.exec(css)?.[1] ?? "";
const dark = palette(`:root {${darkBlock}}`);

function luminance(hex: string): number {
  const match = /^#([0-9a-f]{6})$/i.exec(hex);
  if (!match) throw new Error(`${hex} is not #rrggbb`);
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(match[1].slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Text colour on the background it is drawn on, as the stylesheets pair them. */
const PAIRS: [string, string][] = [
  ["--ink", "--bg"], ["--ink", "--panel"], ["--muted", "--panel"], ["--muted", "--bg"],
  ["--better", "--panel"], ["--worse", "--panel"], ["--better", "--better-soft"], ["--worse", "--worse-soft"],
  ["--warn", "--warn-soft"], ["--danger", "--danger-soft"], ["--accent", "--accent-soft"], ["--accent", "--panel"],
  ["--on-accent", "--accent"], ["--on-danger", "--danger-strong"], ["--ink", "--field"],
];

describe("the look follows the system", () => {
  it("defines a dark palette, chosen by the root's data-theme, with every colour of the light one", () => {
    expect(darkBlock).not.toBe("");
    expect([...dark.keys()].sort()).toEqual([...light.keys()].filter((k) => k !== "--mono").sort());
    for (const name of ["--bg", "--panel", "--ink", "--muted", "--better", "--worse", "--accent"]) {
      expect(dark.get(name), name).not.toBe(light.get(name));
    }
  });

  for (const [scheme, colours] of [["light", light], ["dark", dark]] as const) {
    it(`keeps text readable in the ${scheme} palette, better and worse included`, () => {
      for (const [text, background] of PAIRS) {
        const ratio = contrast(colours.get(text)!, colours.get(background)!);
        expect(ratio, `${text} on ${background}: ${ratio.toFixed(2)}:1`).toBeGreaterThanOrEqual(4.5);
      }
    });
  }

  it("names colours only through the palette", () => {
    const offenders = files(SRC).filter((p) => p.endsWith(".svelte"))
      .filter((p) => /#[0-9a-f]{3,8}\b|rgba?\(/i.test(readFileSync(p, "utf8").split("<style>")[1] ?? ""));
    expect(offenders.map((p) => relative(SRC, p))).toEqual([]);
  });

  it("sizes text in rem, so it scales with the desktop's font size", () => {
    expect(css).toMatch(/:root\s*\{[^}]*font-size:\s*81\.25%/);
    const offenders = files(SRC).filter((p) => /\.(svelte|css)$/.test(p))
      .filter((p) => /font-size:\s*[0-9.]+(px|pt)\b/.test(readFileSync(p, "utf8")));
    expect(offenders.map((p) => relative(SRC, p))).toEqual([]);
  });
});
