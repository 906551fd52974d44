/**
 * The layout's rules, checked on the tree as it is: the layers ARCHITECTURE.md lists stack in
 * one direction with no circles; a file starting with `_` is private to its folder; nothing in
 * lib/ reaches into scripts/; and no command a user runs can reach the test support in lib/testing/.
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

/** One layer of ARCHITECTURE.md's list: its number (1 is the bottom), name and members. */
interface Layer {
  rank: number;
  name: string;
  members: string[];
}

function readLayers(): Layer[] {
  const text = readFileSync(join(PROJECT_ROOT, "ARCHITECTURE.md"), "utf8");
  const section = /## Layers\n([\s\S]*?)\n## /.exec(text)?.[1] ?? "";
  return [...section.matchAll(/^(\d+)\. \*\*([^*]+)\*\* ([^:]+):/gm)].map((m) => ({
    rank: Number(m[1]),
    name: m[2],
    members: [...m[3].matchAll(/`([^`]+)`/g)].map((p) => p[1]),
  }));
}

/** How specifically a member names a file: a test file pattern, then the file itself, then the longest folder, then a glob. */
function specificity(member: string, path: string): number {
  if (member === "*.test.ts") return path.endsWith(".test.ts") ? 1e6 : -1;
  if (member.endsWith("/*.ts")) return dirname(path) === member.slice(0, -5) ? 1 : -1;
  if (member.endsWith("/")) return path.startsWith(member) ? member.length + 1 : -1;
  return path === member ? 1e5 : -1;
}

function layerOf(layers: Layer[], path: string): Layer | undefined {
  let best: Layer | undefined;
  let score = 0;
  for (const layer of layers) {
    for (const member of layer.members) {
      const s = specificity(member, path);
      if (s > score) [best, score] = [layer, s];
    }
  }
  return best;
}

/** The folder a file belongs to for the one-direction rule: lib/<folder>/, scripts/dev/, or the file's own folder. */
function unitOf(path: string): string {
  const parts = path.split("/");
  return parts.length > 2 ? parts.slice(0, 2).join("/") + "/" : parts[0] + "/";
}

const LAYERS = readLayers();

test("ARCHITECTURE.md lists the layers bottom first, and every file belongs to one", () => {
  assert.ok(LAYERS.length >= 8, "ARCHITECTURE.md's ## Layers list");
  assert.equal(LAYERS.map((l) => l.rank), LAYERS.map((_, i) => i + 1));
  assert.equal(FILES.map(rel).filter((path) => !layerOf(LAYERS, path)), [], "files no layer names");
});

test("no module imports from a layer above its own", () => {
  const upward = FILES.flatMap((file) => {
    const from = layerOf(LAYERS, rel(file));
    return importsOf(file).flatMap((target) => {
      const to = layerOf(LAYERS, rel(target));
      return from && to && to.rank > from.rank
        ? [`${rel(file)} imports ${rel(target)}: layer ${from.rank} (${from.name}) may not use layer ${to.rank} (${to.name})`]
        : [];
    });
  });
  assert.equal(upward, []);
});

test("folders in one layer import each other in one direction only", () => {
  // A test file is imported by nothing, so it closes no circle: its folder's imports are its modules'.
  const uses = new Map<string, string>();
  for (const file of FILES.filter((f) => !f.endsWith(".test.ts"))) {
    for (const target of importsOf(file)) {
      const [a, b] = [unitOf(rel(file)), unitOf(rel(target))];
      if (a !== b && layerOf(LAYERS, rel(file)) === layerOf(LAYERS, rel(target)) && !uses.has(`${a} ${b}`)) {
        uses.set(`${a} ${b}`, `${rel(file)} imports ${rel(target)}`);
      }
    }
  }
  const both = [...uses].filter(([key]) => uses.has(key.split(" ").reverse().join(" ")))
    .map(([, how]) => how).sort();
  assert.equal(both, [], "each pair of folders that import each other, by one import each way");
});

test("no files import each other in a circle", () => {
  const edges = new Map(FILES.map((file) => [file, importsOf(file).filter((t) => existsSync(t))]));
  const circles: string[] = [];
  // Tarjan's strongly connected components: every component of more than one file is a circle.
  let next = 0;
  const index = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], onStack = new Set<string>();
  const visit = (v: string) => {
    index.set(v, next), low.set(v, next), next++, stack.push(v), onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) visit(w), low.set(v, Math.min(low.get(v)!, low.get(w)!));
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = ""; w !== v;) (w = stack.pop()!), onStack.delete(w), component.push(rel(w));
    if (component.length > 1) circles.push(component.sort().join(" <-> "));
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  assert.equal(circles.sort(), []);
});

test("the forge is a world apart: nothing of the lifecycle uses it, only commands and test support", () => {
  const forge = join(PROJECT_ROOT, "lib", "forge") + "/";
  const commands = LAYERS.find((layer) => layer.name === "commands")!.rank;
  const users = FILES.filter((file) => !file.startsWith(forge))
    .flatMap((file) => importsOf(file).filter((t) => t.startsWith(forge)).map((t) => [rel(file), rel(t)]))
    .filter(([path]) => layerOf(LAYERS, path)!.rank < commands)
    .map(([path, target]) => `${path} imports ${target}: the forge is for commands and test support only`);
  assert.equal(users, []);
});

test("the dashboard reads through the commands' own modules: no query of its own, nothing from below that no command uses", () => {
  const web = FILES.filter((file) => rel(file).startsWith("lib/web/") && !file.endsWith(".test.ts"));
  const sql = web.filter((file) => /\.(statement|prepare)\(|\.db\b|\bSELECT\s[\s\S]*?\sFROM\s|\bUPDATE\s+\w+\s+SET\b|\bINSERT\s+INTO\b/.test(readFileSync(file, "utf8"))).map(rel);
  assert.equal(sql, [], "dashboard files that query the store themselves");
  const commands = FILES.filter((file) => /^scripts\/[^/]+\.ts$/.test(rel(file)) && !file.endsWith(".test.ts"));
  const usedByCommands = new Set(commands.flatMap(importsOf));
  const helpers = LAYERS[0];
  const own = web.flatMap((file) => importsOf(file).map((target) => [rel(file), rel(target)]))
    .filter(([, target]) => !target.startsWith("lib/web/") && layerOf(LAYERS, target) !== helpers)
    .filter(([, target]) => !usedByCommands.has(join(PROJECT_ROOT, target)))
    .map(([file, target]) => `${file} imports ${target}, which no command uses`);
  assert.equal(own, []);
});

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
