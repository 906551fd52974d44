/**
 * `npm test`: the whole suite: the typecheck, the unit tests on Node and on Deno, the
 * scenarios on Node and on Deno (on Deno each step's command runs under Deno; the Node run
 * also checks that the catalogue is what it produces, so the scenarios run once for both).
 *
 * The stages run one after another, each in a process group of its own, but for the
 * typecheck, which runs beside the unit tests on Node: it is one process on one core for
 * under a minute, and the unit stage leaves about a quarter of CI's two cores idle. (Two
 * lanes of tests side by side, unit tests beside scenarios, were measured on CI's two cores:
 * the unit stage took 601 s instead of 345 s and tests that wait on a tmux server or a
 * holder failed under the load, so a stage of tests has the machine to itself; within the
 * unit stage the test files run two at a time.) A stage's `after` names the stage it waits
 * for; output reads in stage order. Each stage's own counts are added up;
 * the last line is `N passed, N failed`. `npm test -- <word>...` runs the stages whose name
 * has one of the words.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { closingLines, readCounts } from "./_counts.ts";
import type { Counts } from "./_counts.ts";
import { running } from "./_groups.ts";

const root = new URL("../..", import.meta.url).pathname;
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const node = process.execPath;
const deno = [bin("deno"), "run", "-A", "--quiet", "--config", join(root, "deno.json")];

interface Stage {
  name: string;
  argv: string[];
  /** Stages that print `N passed, N failed` are counted by it; others count as one check. */
  counted: boolean;
  /** The stage this one runs after, in its lane (none: it starts at once). */
  after?: string;
}

/** The stages in the order their output is printed. */
const STAGES: Stage[] = [
  { name: "typecheck", argv: [node, bin("tsc"), "--noEmit", "-p", root], counted: false },
  { name: "unit tests on node", argv: [node, join(root, "scripts/dev/unit.ts")], counted: true },
  { name: "unit tests on deno", argv: [...deno, join(root, "scripts/dev/unit.ts")], counted: true, after: "unit tests on node" },
  // One run of the scenarios on Node both tests them and checks the catalogue made from them.
  { name: "scenarios on node, and the catalogue is fresh", argv: [node, join(root, "scripts/dev/scenarios.ts"), "--runtime", "node", "--check-catalogue"], counted: true, after: "unit tests on deno" },
  { name: "scenarios on deno", argv: [node, join(root, "scripts/dev/scenarios.ts"), "--runtime", "deno"], counted: true, after: "scenarios on node, and the catalogue is fresh" },
];



/** A stage's output: written through while it is the first unfinished stage in order, held until then. */
class Channel {
  #held: string[] = [];
  #live = false;
  ended = false;

  write(text: string): void {
    if (this.#live) process.stdout.write(text);
    else this.#held.push(text);
  }

  goLive(): void {
    this.#live = true;
    process.stdout.write(this.#held.join(""));
    this.#held = [];
  }
}

/** Runs one stage, its output into `out`, and reads its counts. */
async function runStage(stage: Stage, out: Channel): Promise<Counts> {
  out.write(`\n== ${stage.name}\n`);
  const started = Date.now();
  // Each stage in a process group of its own: a foreground session one stage runs waits for what starts in
  // its group after its command, never for the stage in the other lane.
  const child = spawn(stage.argv[0], stage.argv.slice(1), { cwd: root, stdio: ["ignore", "pipe", "pipe"], detached: true });
  running.add(child.pid!);
  let last = "";
  const take = (chunk: Buffer) => out.write(chunk.toString());
  child.stdout.on("data", (chunk: Buffer) => {
    take(chunk);
    last = (last + chunk.toString()).slice(-4000);
  });
  child.stderr.on("data", take);
  const code: number = await new Promise((resolve) => {
    child.on("error", (error) => {
      out.write(`${stage.name}: could not start ${stage.argv[0]}: ${error.message}\n`);
      resolve(127);
    });
    child.on("close", (c) => resolve(c ?? 1));
  });
  running.delete(child.pid!);
  const result = stageCounts(stage, last, code, out);
  out.write(`${stage.name}: ${result.failed ? "FAILED" : "ok"} (${Math.round((Date.now() - started) / 1000)} s)\n`);
  return result;
}

function stageCounts(stage: Stage, last: string, code: number, out: Channel): Counts {
  const counts = stage.counted ? readCounts(last) : undefined;
  if (counts) {
    // A stage that exits non-zero has failed at least once, whatever it counted.
    return { ...counts, failed: Math.max(counts.failed, code === 0 ? 0 : 1) };
  }
  if (stage.counted) out.write(`${stage.name}: printed no counts (exit ${code})\n`);
  return code === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 };
}

const only = process.argv.slice(2);
const chosen = STAGES.filter((stage) => !only.length || only.some((word) => stage.name.includes(word)));
const channels = new Map(chosen.map((stage) => [stage.name, new Channel()]));
const runs = new Map<string, Promise<Counts>>();
/** The first stage in order whose output is not all printed goes live, and so on past those that ended. */
const advance = () => {
  for (const stage of chosen) {
    const channel = channels.get(stage.name)!;
    channel.goLive();
    if (!channel.ended) return;
  }
};
for (const stage of chosen) {
  const before = stage.after && runs.has(stage.after) ? runs.get(stage.after)! : Promise.resolve();
  const channel = channels.get(stage.name)!;
  runs.set(stage.name, before.then(() => runStage(stage, channel)).then((result) => {
    channel.ended = true;
    advance();
    return result;
  }));
}
advance();
const results = await Promise.all(runs.values());
process.stdout.write(`\n${closingLines(results)}\n`);
process.exitCode = results.some((result) => result.failed) ? 1 : 0;
