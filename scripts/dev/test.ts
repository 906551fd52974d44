/**
 * `npm test`: the whole suite, in the order CI runs it: the typecheck, the unit tests on
 * Node and on Deno, the scenarios on Node and on Deno (on Deno each step's command runs
 * under Deno; the Node run also checks that the catalogue is what it produces, so the
 * scenarios run once for both). Each stage's own counts are added up;
 * the last line is `N passed, N failed`.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";

const root = new URL("../..", import.meta.url).pathname;
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const node = process.execPath;
const deno = [bin("deno"), "run", "-A", "--quiet", "--config", join(root, "deno.json")];

interface Stage {
  name: string;
  argv: string[];
  /** Stages that print `N passed, N failed` are counted by it; others count as one check. */
  counted: boolean;
}

const STAGES: Stage[] = [
  { name: "typecheck", argv: [node, bin("tsc"), "--noEmit", "-p", root], counted: false },
  { name: "unit tests on node", argv: [node, join(root, "scripts/dev/unit.ts")], counted: true },
  { name: "unit tests on deno", argv: [...deno, join(root, "scripts/dev/unit.ts")], counted: true },
  // One run of the scenarios on Node both tests them and checks the catalogue made from them.
  { name: "scenarios on node, and the catalogue is fresh", argv: [node, join(root, "scripts/dev/scenarios.ts"), "--runtime", "node", "--check-catalogue"], counted: true },
  { name: "scenarios on deno", argv: [node, join(root, "scripts/dev/scenarios.ts"), "--runtime", "deno"], counted: true },
];

const COUNTS = /(\d+) passed, (\d+) failed/;

async function runStage(stage: Stage): Promise<{ passed: number; failed: number }> {
  process.stdout.write(`\n== ${stage.name}\n`);
  const child = spawn(stage.argv[0], stage.argv.slice(1), { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  let last = "";
  child.stdout.on("data", (chunk: Buffer) => {
    process.stdout.write(chunk);
    last = (last + chunk.toString()).slice(-4000);
  });
  const code: number = await new Promise((resolve) => child.on("close", (c) => resolve(c ?? 1)));
  const lines = last.replace(/\x1b\[[0-9;]*m/g, "").trimEnd().split("\n");
  const summary = stage.counted ? lines.map((l) => COUNTS.exec(l)).filter(Boolean).at(-1) : undefined;
  if (summary) {
    const passed = Number(summary[1]);
    // A stage that exits non-zero has failed at least once, whatever it counted.
    const failed = Math.max(Number(summary[2]), code === 0 ? 0 : 1);
    return { passed, failed };
  }
  if (stage.counted) process.stdout.write(`${stage.name}: printed no counts (exit ${code})\n`);
  return code === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 };
}

let passed = 0;
let failed = 0;
const only = process.argv.slice(2);
for (const stage of STAGES) {
  if (only.length && !only.some((word) => stage.name.includes(word))) continue;
  const result = await runStage(stage);
  passed += result.passed;
  failed += result.failed;
  process.stdout.write(`${stage.name}: ${result.failed ? "FAILED" : "ok"}\n`);
}
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exitCode = failed ? 1 : 0;
