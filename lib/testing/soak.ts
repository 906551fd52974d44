/**
 * The soak's moving parts (scripts/dev/bench-soak.ts, the concurrency test): a seeded random
 * source, so a failing seed reproduces; the daemon as a process of its own that can be
 * SIGKILLed by the pid this process started and started again on the same state dir; an
 * owner looping over the CLI (each command a process of its own, each JSON answer parsed,
 * no lock error let through); a reader of the dashboard's JSON, timed; and the processes
 * left behind, found by the soak's own folder in their environment. For tests and
 * benchmarks only.
 */
import { spawn } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT, runtimeArgv } from "../runtime.ts";
import { signalChild } from "./fixtures.ts";
import { sleep } from "./wait.ts";

/** A random source in [0, 1) that repeats for a seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** robot-army's router on the runtime running this process. */
export const ROBOT_ARMY = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));

/** What a lock error looks like when it reaches a user: SQLite's busy answer in any of its spellings. */
export const LOCK_ERROR = /SQLITE_BUSY|SQLITE_LOCKED|database is locked|database table is locked/i;

/** A stack trace in a command's output: an error that escaped the top-level catch. */
const STACK_TRACE = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;

/** One `robot-army run` started by this process. */
export interface DaemonProcess {
  pid: number;
  /** Resolves once it has exited, with how. */
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** SIGKILL by its pid (never by name), then waits for it to be gone. */
  kill(): Promise<void>;
  /** SIGTERM (its stop between steps), SIGKILL after `graceMs`; waits for it to be gone. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: string | null }>;
}

/** Starts `robot-army run` (argv after `run`) with `env`, in its own process group so nothing it leaves shares ours; its output is appended to `logFile`. */
export function startDaemon(args: string[], env: Record<string, string | undefined>, cwd: string, logFile: string): DaemonProcess {
  const log = createWriteStream(logFile, { flags: "a" });
  const child = spawn(ROBOT_ARMY[0], [...ROBOT_ARMY.slice(1), "run", ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("close", (code, signal) => {
      log.end(`[soak: daemon pid ${child.pid} ended ${code ?? signal}]\n`);
      resolve({ code, signal });
    });
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    pid: child.pid!,
    exited,
    async kill() {
      if (!gone()) child.kill("SIGKILL");
      await exited;
    },
    async stop(graceMs = 15_000) {
      // By its pid, so the exit status is the daemon's own on Deno too.
      if (!gone()) signalChild(child, "SIGTERM");
      const late = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const how = await exited;
      clearTimeout(late);
      return how;
    },
  };
}

/** How one CLI command answered. */
export interface CliAnswer {
  argv: string[];
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `robot-army <argv>` once as a child process (on the runtime running this code) and
 * gathers its answer; one still running after `timeoutMs` is SIGKILLed by its pid, and says so.
 */
export function runCli(argv: string[], env: Record<string, string | undefined>, cwd: string, timeoutMs = 120_000): Promise<CliAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(ROBOT_ARMY[0], [...ROBOT_ARMY.slice(1), ...argv], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const late = setTimeout(() => {
      stderr += `\n[killed after ${timeoutMs} ms]`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(late);
      resolve({ argv, code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** What the owner's CLI loop did, and what it found wrong. */
export interface CliFigures {
  commands: number;
  /** JSON answers parsed. */
  json: number;
  /** Exit codes seen, by code. */
  codes: Record<string, number>;
  /** Writes that changed something, by the audit kind each must have written once: `keep.placed:3`, `control.pause`. */
  writes: Record<string, number>;
  problems: string[];
}

/** The owner at a terminal: every command in turn, `--json` where it exists; `items()` says which items to show, keep and unkeep. */
export interface CliLoopOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  items: () => number[];
  /** Pause between two commands (default 50 ms): the loop is one owner, not a load generator. */
  pauseMs?: number;
}

/** The commands one round of the loop runs, in order. */
export function cliRound(items: number[]): string[][] {
  const round: string[][] = [["status", "--json"], ["log", "--json", "--limit", "20"], ["pause", "--reason", "soak"]];
  for (const item of items) round.push(["show", String(item), "--json"], ["keep", String(item)], ["unkeep", String(item)]);
  round.push(["unpause"]);
  return round;
}

/**
 * Loops over the CLI until stopped, checking each answer: JSON that parses, no lock error
 * and no stack trace on either stream, and an exit of 0 or 3 (a precondition, such as
 * keeping an item with no open session, is an answer); the round in progress is finished
 * first, so a pause is always lifted.
 */
export function loopOverCli(options: CliLoopOptions): { stop(): Promise<CliFigures> } {
  const figures: CliFigures = { commands: 0, json: 0, codes: {}, writes: {}, problems: [] };
  let stopped = false;
  const looping = (async () => {
    while (!stopped) {
      for (const argv of cliRound(options.items())) {
        const answer = await runCli(argv, options.env, options.cwd);
        figures.commands++;
        figures.codes[String(answer.code)] = (figures.codes[String(answer.code)] ?? 0) + 1;
        const problem = cliProblem(answer);
        if (problem) figures.problems.push(problem);
        else if (argv.includes("--json")) figures.json++;
        const wrote = writeOf(answer);
        if (wrote) figures.writes[wrote] = (figures.writes[wrote] ?? 0) + 1;
        await sleep(options.pauseMs ?? 50);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      await looping;
      return figures;
    },
  };
}

/** What is wrong with one answer, in words, or undefined. */
export function cliProblem(answer: CliAnswer): string | undefined {
  const said = `robot-army ${answer.argv.join(" ")} exited ${answer.code}: ${(answer.stderr.trim() || answer.stdout.trim()).slice(0, 300)}`;
  if (LOCK_ERROR.test(answer.stdout + answer.stderr)) return `a lock error reached the user: ${said}`;
  if (STACK_TRACE.test(answer.stdout + answer.stderr)) return `a stack trace reached the user: ${said}`;
  if (answer.code !== 0 && answer.code !== 3) return said;
  if (answer.code === 0 && answer.argv.includes("--json")) {
    try {
      JSON.parse(answer.stdout);
    } catch {
      return `not JSON: ${said}`;
    }
  }
  return undefined;
}

/** The audit record a write that changed something must have written, from what it printed; undefined for a read or a write that changed nothing. */
function writeOf(answer: CliAnswer): string | undefined {
  if (answer.code !== 0) return undefined;
  const [verb, item] = answer.argv;
  if (verb === "keep" && answer.stdout.startsWith("kept:")) return `keep.placed:${item}`;
  if (verb === "unkeep" && answer.stdout.startsWith("unkept:")) return `keep.released:${item}`;
  if (verb === "pause" && answer.stdout.startsWith("paused")) return "control.pause";
  if (verb === "unpause" && answer.stdout.startsWith("unpaused")) return "control.unpause";
  return undefined;
}

/** What the dashboard reader read: requests, their times, and what was wrong. */
export interface WebFigures {
  requests: number;
  /** Each request's time to the body's last byte, in milliseconds. */
  ms: number[];
  problems: string[];
}

/** The dashboard's JSON every round reads; `items()` adds each item's page. */
export const API_PATHS = ["/api/needs", "/api/active", "/api/queue", "/api/anomalies", "/api/log"];

/** Reads the dashboard's JSON in a loop until stopped: every answer a 200 with JSON that parses and no lock error. */
export function readDashboard(url: string, items: () => number[], pauseMs = 50): { stop(): Promise<WebFigures> } {
  const figures: WebFigures = { requests: 0, ms: [], problems: [] };
  let stopped = false;
  const reading = (async () => {
    while (!stopped) {
      for (const path of [...API_PATHS, ...items().map((id) => `/api/items/${id}`)]) {
        const started = performance.now();
        try {
          const response = await fetch(url + path);
          const body = await response.text();
          figures.ms.push(performance.now() - started);
          figures.requests++;
          if (LOCK_ERROR.test(body)) figures.problems.push(`a lock error reached the dashboard: GET ${path} answered ${response.status}: ${body.slice(0, 300)}`);
          else if (response.status !== 200) figures.problems.push(`GET ${path} answered ${response.status}: ${body.slice(0, 300)}`);
          else JSON.parse(body);
        } catch (error) {
          figures.problems.push(`GET ${path}: ${(error as Error).message}`);
        }
        await sleep(pauseMs);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      await reading;
      return figures;
    },
  };
}

/** The nearest-rank percentile `p` (0.99 is p99) of the samples, in their unit. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

/** A process still running whose environment names the soak's folder. */
export interface LeftBehind {
  pid: number;
  command: string;
}

/**
 * The processes still running whose environment names `dir` (the soak's own temp folder,
 * in RA_STATE_DIR or the like): daemons, dashboards, workers' holders and commands, and
 * anything they started. Only this user's processes can be read; this one is left out.
 * It reads, it never signals.
 */
export function processesNaming(dir: string): LeftBehind[] {
  const found: LeftBehind[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, "latin1").includes(dir)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue; // exited, waiting to be reaped
      found.push({ pid, command: readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim() });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Waits up to `ms` for no process to name `dir`; returns the ones still there. */
export async function waitUntilNoneNaming(dir: string, ms: number): Promise<LeftBehind[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processesNaming(dir);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(200);
  }
}
