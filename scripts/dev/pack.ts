/**
 * `npm run pack [-- --out DIR]`: the package robot-army is installed from, as a tarball
 * (`npm install -g ./robot-army-<version>.tgz --allow-scripts=node`). A clone runs its
 * TypeScript sources directly, but Node strips no types under node_modules, where an
 * installed package lives; so the package holds each source as JavaScript: its types
 * stripped as Node strips them when it runs a clone (module.stripTypeScriptTypes), its
 * imports of `.ts` files pointing at the `.js` beside them, in the clone's own layout. It
 * ships what a user runs (bin/, lib/ and scripts/ without their tests and test kits, the
 * session holder, the schemas and their validators, the dashboard's static files) and
 * none of the tests. Its package.json depends on Node 24 from npm (the `node` package,
 * whose install script fetches the binary: hence `--allow-scripts=node`), as a clone's
 * devDependencies give it, so a machine whose system Node is older runs it too.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import module from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import type { CommandDef } from "../../lib/cli.ts";
import { parse, runMain, stringOption, writeStdout } from "../../lib/cli.ts";
import { RobotArmyError } from "../../lib/errors.ts";
import { PROJECT_ROOT } from "../../lib/runtime.ts";

export const command: CommandDef = {
  name: "pack",
  summary: "Build the installable package: the sources as JavaScript, without tests, as a tarball",
  usage: "pack [--out DIR]",
  options: { out: { type: "string", value: "DIR", description: "Where the tarball is written (default: the current folder)" } },
};

/** Folders of lib/ that only the tests use. */
const TEST_KITS = ["lib/testing", "lib/scenario", "lib/crash"];

/** Whether a file of the clone (its path from the root, with `/`) goes into the package. */
export function shipped(path: string): boolean {
  if (path.endsWith(".test.ts")) return false;
  if (path === "bin/robot-army.mjs" || path === "README.md" || path === "deno.json") return true;
  if (path === "scripts/dev/session-holder.ts") return true;
  if (/^scripts\/[^/]+\.ts$/.test(path)) return true;
  if (path.startsWith("lib/")) {
    if (TEST_KITS.some((kit) => path.startsWith(`${kit}/`))) return false;
    return path.endsWith(".ts") || path.startsWith("lib/web/static/");
  }
  return /^schema\/[^/]+\.json$/.test(path) || /^schema\/validate\/[^/]+\.(mjs|json)$/.test(path);
}

/** Imports of our own `.ts` files (static, dynamic, re-exports, side effects) made to name the `.js` beside them. */
export function pointImportsAtJs(code: string): string {
  return code.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"'\n]+?)\.ts\2/g, "$1$2$3.js$2");
}

/** Builds the package in a new folder and packs it into `out`; returns the tarball's path. */
export function buildPackage(out: string): string {
  const stage = mkdtempSync(join(tmpdir(), "robot-army-pack-"));
  try {
    const root = join(stage, "package");
    for (const path of listFiles(PROJECT_ROOT).filter(shipped)) {
      const source = readFileSync(join(PROJECT_ROOT, path), "utf8");
      const target = join(root, path.endsWith(".ts") ? path.slice(0, -3) + ".js" : path);
      mkdirSync(dirname(target), { recursive: true });
      if (path.endsWith(".ts")) writeFileSync(target, pointImportsAtJs(stripTypes(source, path)));
      else if (path.endsWith(".mjs")) writeFileSync(target, pointImportsAtJs(source), { mode: 0o755 });
      else copyFileSync(join(PROJECT_ROOT, path), target);
    }
    writeFileSync(join(root, "package.json"), JSON.stringify(packageJson(), null, 2) + "\n");
    mkdirSync(out, { recursive: true });
    const packed = spawnSync("npm", ["pack", "--silent", "--pack-destination", resolve(out)], { cwd: root, encoding: "utf8" });
    if (packed.status !== 0) throw new RobotArmyError(`npm pack failed: ${packed.stderr.trim() || `exit ${packed.status}`}`);
    return join(resolve(out), packed.stdout.trim().split("\n").at(-1)!);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The package's own package.json: what runs it, nothing that builds or tests it. */
function packageJson(): Record<string, unknown> {
  const own = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8"));
  return {
    name: own.name, version: own.version, description: own.description, type: own.type, license: own.license,
    bin: own.bin, engines: own.engines, allowScripts: { node: true },
    // Node 24, which the entry point hands an older Node over to (bin/robot-army.mjs).
    dependencies: { ...own.dependencies, node: own.devDependencies.node },
  };
}

/** The types of a source stripped as Node strips them when it runs it (the code itself is left as written). */
function stripTypes(source: string, path: string): string {
  const strip = (module as unknown as { stripTypeScriptTypes?: (code: string) => string }).stripTypeScriptTypes;
  if (!strip) throw new RobotArmyError("npm run pack needs Node 24 (module.stripTypeScriptTypes)");
  // Node warns that it is experimental, once: the pack says nothing but the tarball's name.
  const warn = process.emitWarning;
  process.emitWarning = (() => {}) as typeof process.emitWarning;
  try {
    return strip(source);
  } catch (error) {
    throw new RobotArmyError(`Cannot strip the types of ${path}: ${(error as Error).message}`);
  } finally {
    process.emitWarning = warn;
  }
}

/** Every file under `root`, by its path from it with `/`; node_modules and dot-folders left out. */
function listFiles(root: string, under = ""): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(root, under), { withFileTypes: true })) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = under ? `${under}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...listFiles(root, path));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const tarball = buildPackage(stringOption(args, "out") ?? process.cwd());
  writeStdout(`${relative(process.cwd(), tarball) || tarball}\n`);
  return 0;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
