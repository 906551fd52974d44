/**
 * Runs the unit tests (`lib/**\/*.test.ts`, `scripts/**\/*.test.ts`) with uvu, on whichever
 * runtime runs this file, and ends with `unit tests on <runtime>: N passed, N failed`.
 *
 * Each test file runs in a process of its own, `--jobs` of them at once (default 2: most
 * files spend their time waiting on the processes, git calls and servers they start, not on
 * a core), the files known to take longest first. A file's output is printed whole when it
 * ends, under its name and duration, so files running side by side never interleave.
 *
 * `npm run unit [-- <filter>] [--jobs N]` on Node; `deno run -A scripts/dev/unit.ts` on Deno.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { isDeno, runtimeArgv } from "../../lib/runtime.ts";
import { SKIPPED } from "../../lib/testing/skip.ts";
import { running } from "./_groups.ts";

const root = new URL("../..", import.meta.url).pathname;

/**
 * The files that take longest (measured on both runtimes), started first so the run does not
 * end waiting on one of them. Only an order: a file missing here starts after these, larger
 * files first, and every file runs whatever this says.
 */
const LONGEST_FIRST = [
  "lib/crash/crash.test.ts",
  "scripts/claude-code.test.ts",
  "scripts/claude-code-lifecycle.test.ts",
  "scripts/codex.test.ts",
  "scripts/dev/bench-soak.test.ts",
  "scripts/dev/concurrency.test.ts",
  "lib/dispatch/verbs/relaunch.test.ts",
  "lib/web/browser.test.ts",
  "scripts/argv.fuzz.test.ts",
  "lib/episodes/journal.property.test.ts",
  "lib/sessions/gc.test.ts",
  "lib/sessions/holder.test.ts",
  "lib/dispatch/verbs/reset.test.ts",
  "lib/dispatch/verbs/cancel.test.ts",
  "lib/ending/retire.test.ts",
  "scripts/start.test.ts",
];

/** Test files below the given folders, sorted so runs are repeatable. */
export function findTestFiles(dirs: string[], filter?: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".test.ts")) found.push(path);
    }
  };
  for (const dir of dirs) walk(join(root, dir));
  return found.filter((file) => !filter || relative(root, file).includes(filter)).sort();
}

/** The order files start in: those known to take longest first, then larger files before smaller. */
export function startOrder(files: string[]): string[] {
  const rank = (file: string) => {
    const at = LONGEST_FIRST.indexOf(relative(root, file));
    return at === -1 ? LONGEST_FIRST.length : at;
  };
  const size = new Map(files.map((file) => [file, statSync(file).size]));
  return [...files].sort((a, b) => rank(a) - rank(b) || size.get(b)! - size.get(a)! || a.localeCompare(b));
}

/** What one test file's process reported: uvu's counts, or a failure when it printed none. */
export interface FileResult {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  ms: number;
  /** Its output without uvu's summary lines. */
  output: string;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { jobs: { type: "string", default: "2" } } });
  if (!/^[1-9]\d*$/.test(values.jobs) || positionals.length > 1) {
    console.error("Usage: unit.ts [filter] [--jobs N]");
    return 2;
  }
  const runtime = "Deno" in globalThis ? "deno" : "node";
  const files = startOrder(findTestFiles(["lib", "scripts"], positionals[0]));
  if (!files.length) console.log(positionals[0] ? `No test file's path contains "${positionals[0]}"` : "No test files under lib/ or scripts/");
  const results = await runTestFiles(files, Number(values.jobs), (text) => process.stdout.write(text));
  const sum = (key: "passed" | "failed" | "skipped") => results.reduce((total, result) => total + result[key], 0);
  const failing = results.filter((result) => result.failed > 0).map((result) => relative(root, result.file));
  if (failing.length) console.log(`failed in: ${failing.join(", ")}`);
  const skipped = sum("skipped");
  console.log(`unit tests on ${runtime}: ${sum("passed")} passed, ${sum("failed")} failed${skipped ? `, ${skipped} skipped` : ""}`);
  // Why tests were skipped, as their files said it (a line starting "skipped, "): beside the counts, never folded into them.
  for (const reason of new Set(results.flatMap((result) => result.output.split("\n").filter((line) => line.startsWith(SKIPPED))))) console.log(reason);
  return failing.length > 0 || files.length === 0 ? 1 : 0;
}

/**
 * Runs test files, each in a process of this runtime, `jobs` at a time in the order given,
 * printing each file's output whole (under its name and duration) as it ends.
 */
export async function runTestFiles(files: string[], jobs: number, print: (text: string) => void): Promise<FileResult[]> {
  const results: FileResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const result = await runTestFile(files[next++]);
      results.push(result);
      print(`${relative(root, result.file)} (${(result.ms / 1000).toFixed(1)} s)\n${result.output}\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, worker));
  return results;
}


let cache: string | undefined;

/** The run's compile cache folder, made on first use and removed when the run ends. */
function compileCache(): string {
  if (cache) return cache;
  const made = mkdtempSync(join(tmpdir(), "robot-army-unit-cache-"));
  process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  cache = made;
  return made;
}

/**
 * The folder Deno caches in when DENO_DIR is not set, as Deno finds it: ~/Library/Caches on
 * macOS; elsewhere $XDG_CACHE_HOME (made absolute), else ~/.cache.
 */
function denoDir(): string {
  if (process.platform === "darwin") return join(homedir(), "Library", "Caches", "deno");
  return join(resolve(process.env.XDG_CACHE_HOME || join(homedir(), ".cache")), "deno");
}

/** Runs one test file in a process of this runtime and reads uvu's counts from what it printed. */
async function runTestFile(file: string): Promise<FileResult> {
  const started = Date.now();
  const [bin, ...args] = runtimeArgv(file);
  // Colour as uvu would give a terminal, when this run has one.
  const env = {
    ...process.env,
    ...(process.stdout.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: "1" } : {}),
    // One compile cache for the run, as robot-army's own entry point keeps one: every Node process a test
    // starts (a command, a holder, a worker) reads its modules compiled once, not stripped and compiled anew.
    // On Deno the cache is its DENO_DIR, named outright so a test that gives a program a fresh HOME keeps it.
    ...(isDeno() ? { DENO_DIR: process.env.DENO_DIR ?? denoDir() } : { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? compileCache() }),
  };
  // A process group of its own, as a shell with job control runs a command: a foreground session a test
  // runs waits for what starts in its group after its command, never for the files running beside it.
  const child = spawn(bin, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  running.add(child.pid!);
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = await new Promise<string>((resolve) => {
    child.on("error", (error) => resolve(`could not start: ${error.message}`));
    child.on("close", (code, signal) => resolve(signal ? `was ended by ${signal}` : `exited ${code}`));
  });
  running.delete(child.pid!);
  const text = Buffer.concat(chunks).toString("utf8");
  return { file, ms: Date.now() - started, ...fileCounts(text, ended) };
}

/**
 * uvu's counts from a file's output and how its process ended (`exited 0` when all is well):
 * a process that printed no summary, or ended otherwise with none failed, is one failure.
 */
export function fileCounts(text: string, ended: string): Omit<FileResult, "file" | "ms"> {
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  const count = (label: string) => Number(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m").exec(plain)?.[1] ?? NaN);
  const [total, passed, skipped] = [count("Total"), count("Passed"), count("Skipped")];
  const output = text.replace(/\n*\s*Total:[^\n]*\n[^\n]*Passed:[^\n]*\n[^\n]*Skipped:[^\n]*\n[^\n]*Duration:[^\n]*\n*$/, "\n");
  if (Number.isNaN(total)) return { passed: 0, failed: 1, skipped: 0, output: `${output}  this file's process ${ended} before uvu reported its counts\n` };
  // uvu's total counts the tests it ran; skipped ones are apart from it.
  const failed = total - passed;
  if (ended !== "exited 0" && failed === 0) return { passed, failed: 1, skipped, output: `${output}  this file's process ${ended} though every test passed\n` };
  return { passed, failed, skipped, output };
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
