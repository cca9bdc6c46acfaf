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

  it("keeps each protocol's views and models in its own folder: one protocol never imports another's", () => {
    const protocols = readdirSync(join(SRC, "lib", "protocols")).filter((name) => statSync(join(SRC, "lib", "protocols", name)).isDirectory());
    expect(protocols.sort()).toEqual(["anex", "anp", "concordia", "oanp", "plain"]);
    const offenders: string[] = [];
    for (const path of sources) {
      const where = relative(SRC, path);
      if (where === "lib/protocols/index.ts") continue; // the registry: the one place that knows them all
      const own = where.match(/^lib\/protocols\/([^/]+)\//)?.[1];
      for (const [, target] of readFileSync(path, "utf8").matchAll(/from\s+"([^"]+)"/g)) {
        const resolved = relative(SRC, join(path, "..", target));
        const theirs = resolved.match(/^lib\/protocols\/([^/]+)\//)?.[1];
        if (theirs && theirs !== own) offenders.push(`${where} imports ${target}`);
      }
    }
    // Shared views and models reach a protocol only through the registry (lib/protocols/index.ts).
    expect(offenders).toEqual([]);
  });

  it("chooses the view per proposal kind in one place", () => {
    const choosers = sources
      .filter((path) => /"?(anp_offer|concordia_offer|oanp_receipt)"?\s*:\s*\{/.test(readFileSync(path, "utf8")) || /KINDS\s*[:=]/.test(readFileSync(path, "utf8")))
      .map((path) => relative(SRC, path));
    expect(choosers).toEqual(["lib/protocols/index.ts"]);
  });

  it("uses no inline style attributes in components", () => {
    const offenders = sources.filter((path) => /\sstyle[=:]/.test(readFileSync(path, "utf8").replace(/<style[\s\S]*?<\/style>/g, "")));
    expect(offenders.map((path) => relative(SRC, path))).toEqual([]);
  });
});
