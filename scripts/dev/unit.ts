/**
 * Runs the unit tests (`lib/**\/*.test.ts`, `scripts/**\/*.test.ts`) with uvu, on whichever
 * runtime runs this file, and ends with `unit tests: N passed, N failed`.
 *
 * `npm run unit [-- <filter>]` on Node; `deno run -A scripts/dev/unit.ts` on Deno.
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";

const root = new URL("../..", import.meta.url).pathname;

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

async function main(argv: string[]): Promise<number> {
  const files = findTestFiles(["lib", "scripts"], argv[0]);
  const runtime = "Deno" in globalThis ? "deno" : "node";
  // uvu queues suites instead of running them when UVU_DEFER is set before it loads.
  const g = globalThis as unknown as { UVU_DEFER: number; UVU_QUEUE: unknown[][]; UVU_INDEX: number };
  g.UVU_DEFER = 1;
  g.UVU_QUEUE = [];
  const { exec } = await import("uvu");
  for (const [index, file] of files.entries()) {
    g.UVU_QUEUE.push([relative(root, file)]);
    g.UVU_INDEX = index;
    await import(pathToFileURL(file).href);
  }
  const captured: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    captured.push(String(chunk));
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  await exec(false);
  process.stdout.write = write;
  const text = captured.join("").replace(/\x1b\[[0-9;]*m/g, "");
  const total = Number(/Total:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const passed = Number(/Passed:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const skipped = Number(/Skipped:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const failed = total - passed - skipped;
  console.log(`unit tests on ${runtime}: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
  return failed > 0 || files.length === 0 ? 1 : 0;
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
