/**
 * The layout's rules, checked on the tree as it is: a file starting with `_` is private to
 * its folder; nothing in lib/ reaches into scripts/; and no command a user runs can reach
 * the test support in lib/testing/.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { PROJECT_ROOT } from "./runtime.ts";

const SOURCE = /\.(ts|mjs)$/;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (SOURCE.test(entry.name)) out.push(path);
  }
  return out;
}

/** The files a source file imports by a relative specifier, statically or with `import()`. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)["'](\.{1,2}\/[^"']+)["']/gm)) {
    found.push(resolve(dirname(file), match[1]));
  }
  return found;
}

const FILES = ["lib", "scripts", "bin"].flatMap((dir) => sourceFiles(join(PROJECT_ROOT, dir)));
const rel = (path: string) => relative(PROJECT_ROOT, path);

test("every relative import names a file that exists", () => {
  const missing = FILES.flatMap((file) => importsOf(file).filter((target) => !existsSync(target)).map((t) => `${rel(file)} -> ${rel(t)}`));
  assert.equal(missing, []);
});

test("a file starting with _ is imported only from its own folder", () => {
  const strays = FILES.flatMap((file) =>
    importsOf(file)
      .filter((target) => basename(target).startsWith("_") && dirname(target) !== dirname(file))
      .map((target) => `${rel(file)} -> ${rel(target)}`)
  );
  assert.equal(strays, []);
});

test("nothing in lib/ imports from scripts/", () => {
  const scripts = join(PROJECT_ROOT, "scripts") + "/";
  const strays = FILES.filter((file) => rel(file).startsWith("lib/"))
    .flatMap((file) => importsOf(file).filter((target) => target.startsWith(scripts)).map((t) => `${rel(file)} -> ${rel(t)}`));
  assert.equal(strays, []);
});

test("no command a user runs reaches lib/testing/", () => {
  // Everything the router, the entry point, the session holder and the demo worker load, followed import by import.
  const roots = ["bin/robot-army.mjs", "scripts/robot-army.ts", "scripts/dev/session-holder.ts", "scripts/demo-worker.ts"]
    .concat(readdirSync(join(PROJECT_ROOT, "scripts")).filter((n) => n.endsWith(".ts") && !n.endsWith(".test.ts")).map((n) => `scripts/${n}`));
  const testing = join(PROJECT_ROOT, "lib", "testing") + "/";
  const seen = new Map<string, string | null>();
  const queue = roots.map((r) => [join(PROJECT_ROOT, r), null] as [string, string | null]);
  while (queue.length) {
    const [file, from] = queue.pop()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.set(file, from);
    for (const target of importsOf(file)) queue.push([target, file]);
  }
  const reached = [...seen.keys()].filter((file) => file.startsWith(testing)).map((file) => {
    const chain = [file];
    for (let at = seen.get(file); at; at = seen.get(at)) chain.unshift(at);
    return chain.map(rel).join(" -> ");
  });
  assert.equal(reached, []);
});

test("scripts/ holds what a user runs; the project's own tooling is in scripts/dev/", () => {
  const tooling = ["test.ts", "unit.ts", "scenarios.ts", "catalogue.ts", "bench.ts", "session-holder.ts"];
  const top = readdirSync(join(PROJECT_ROOT, "scripts"));
  assert.equal(tooling.filter((name) => top.includes(name)), []);
  assert.equal(tooling.filter((name) => !existsSync(join(PROJECT_ROOT, "scripts", "dev", name))), []);
});

test("ARCHITECTURE.md's layout names every folder, and every path it names exists", () => {
  const text = readFileSync(join(PROJECT_ROOT, "ARCHITECTURE.md"), "utf8");
  const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(text)?.[1] ?? "";
  const named = new Set(layout.split("\n").map((line) => /^\s*([\w.-]+\/)/.exec(line)?.[1]).filter(Boolean));
  const folders = (dir: string): string[] => readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory()).flatMap((e) => [`${dir}/${e.name}`, ...folders(`${dir}/${e.name}`)]);
  const unnamed = ["lib", "scripts"].flatMap(folders).filter((dir) => !named.has(`${basename(dir)}/`));
  assert.equal(unnamed, [], "folders ARCHITECTURE.md's layout does not name");
  const paths = [...text.matchAll(/`((?:lib|scripts|bin|schema)\/[\w./-]+)`/g)].map((m) => m[1]);
  assert.ok(paths.length > 10);
  assert.equal(paths.filter((path) => !existsSync(join(PROJECT_ROOT, path))), [], "paths ARCHITECTURE.md names that do not exist");
});

test("README.md and ARCHITECTURE.md link only to files in the repository", () => {
  const dead = ["README.md", "ARCHITECTURE.md"].flatMap((doc) => {
    const text = readFileSync(join(PROJECT_ROOT, doc), "utf8");
    return [...text.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)|`(\.\.\/[^`]+)`/g)]
      .map((m) => m[1] ?? m[2])
      .filter((target) => !/^[a-z]+:/.test(target))
      .filter((target) => target.startsWith("../") || !existsSync(join(PROJECT_ROOT, target)))
      .map((target) => `${doc} -> ${target}`);
  });
  assert.equal(dead, []);
});

test.run();
