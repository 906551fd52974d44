/**
 * The crash suite's laboratory: one temp dir per crash with a sandbox forge (a copy of a
 * forge seeded once), a real clone of demo/widgets, a config that points robot-army at the
 * forge and runs the demo worker headless, an isolated HOME, state dir and clock, and a
 * way to run the real `robot-army` as a child process of the runtime running the suite.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { PROJECT_ROOT, isDeno, runtimeArgv } from "../runtime.ts";
import { seedForge } from "../forge/seed.ts";
import { startForge } from "../forge/server.ts";
import type { Forge } from "../forge/server.ts";
import { isolatedEnv } from "../scenario/run.ts";
import { git, makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { listRecords } from "../sessions/records.ts";
import { childRunning, sessionState } from "../sessions/state.ts";
import { stopSession } from "../sessions/stop.ts";

/** How a robot-army child process ended, and what it printed. */
export interface Run {
  argv: string[];
  /** The child's pid (the writer of every intent it wrote), when it started. */
  pid: number | undefined;
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** One crash's world: its folders, its forge, and robot-army run against them. */
export interface Lab {
  dir: string;
  clone: string;
  forgeDir: string;
  stateDir: string;
  sessionRoot: string;
  env: Record<string, string>;
  forge: Forge;
  /** The lab's config.toml. */
  configFile: string;
  /** Makes `argv` the worker dispatch starts (the demo worker unless changed), before the first dispatch. */
  useWorker(argv: string[]): void;
  /** Runs `robot-army <argv>` in the clone with the lab's env and `extra` on top. */
  robotArmy(argv: string[], extra?: { env?: Record<string, string>; stdin?: string; timeoutMs?: number }): Promise<Run>;
  /** Like `robotArmy`, and throws with its output unless it exits 0. */
  mustRun(argv: string[]): Promise<string>;
  /** A forge REST request as the owner, answered as JSON. */
  api(method: string, path: string, body?: unknown): Promise<any>;
  close(): Promise<void>;
}

/** The clock every crash starts at (a step may move it on with RA_NOW). */
export const LAB_NOW = "2026-01-15T10:00:00Z";

/** A seeded forge folder built once; `open` makes a lab over a fresh copy of it. */
export interface LabTemplate {
  open(): Promise<Lab>;
  remove(): void;
}

/** Seeds the forge once (demo/widgets with one labelled issue) and shares one compile cache between the crashes. */
export function labTemplate(): LabTemplate {
  const templates = makeTempDir("robot-army-crash-");
  const cache = join(templates, "cache");
  let seeded: Promise<string> | undefined;
  return {
    async open() {
      seeded ??= seedForge(join(templates, "forge"), { now: () => new Date(LAB_NOW), issues: 1 }).then((s) => s.dir);
      return await openLab(await seeded, cache);
    },
    remove() {
      removeTempDir(templates);
    },
  };
}

async function openLab(template: string, cache: string): Promise<Lab> {
  const dir = makeTempDir("robot-army-crash-lab-");
  const forgeDir = join(dir, "forge");
  cpSync(template, forgeDir, { recursive: true });
  const forge = await startForge({ dir: forgeDir, now: () => new Date(LAB_NOW) });
  try {
    return labOn(dir, forge, cache);
  } catch (error) {
    await forge.close();
    removeTempDir(dir);
    throw error;
  }
}

function labOn(dir: string, forge: Forge, cache: string): Lab {
  const forgeDir = join(dir, "forge");
  const clone = join(dir, "widgets");
  git(dir, "clone", "--quiet", join(forgeDir, "git", "demo", "widgets.git"), clone);
  const env: Record<string, string> = {
    ...isolatedEnv(dir),
    RA_NOW: LAB_NOW,
    RA_SESSION_ROOT: join(dir, "state", "sessions"),
    // The run's compile cache when the runner gave one (isolatedEnv keeps it), else the suite's own.
    ...(isDeno() ? { DENO_DIR: process.env.DENO_DIR || cache } : { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE || cache }),
  };
  mkdirSync(env.HOME, { recursive: true });
  const config = join(env.XDG_CONFIG_HOME, "robot-army", "config.toml");
  mkdirSync(dirname(config), { recursive: true });
  const writeConfig = (worker: string[]) => writeFileSync(config, [
    "[daemon]",
    "tick_seconds = 1",
    "",
    "[github]",
    `api_base = ${JSON.stringify(forge.url)}`,
    `token_file = ${JSON.stringify(join(forgeDir, "tokens", "owner"))}`,
    'author = "owner"',
    "",
    "[worker]",
    'launcher = "process"',
    `binary = ${JSON.stringify(worker[0])}`,
    `args = ${JSON.stringify(worker.slice(1))}`,
    "max_sessions = 1",
    "",
    '[repos."demo/widgets"]',
    `path = ${JSON.stringify(clone)}`,
    "",
  ].join("\n"));
  writeConfig(["demo-worker"]);
  const token = readFileSync(join(forgeDir, "tokens", "owner"), "utf8").trim();
  const lab: Lab = {
    dir, clone, forgeDir, forge, env, configFile: config, useWorker: writeConfig,
    stateDir: env.RA_STATE_DIR,
    sessionRoot: env.RA_SESSION_ROOT,
    robotArmy: (argv, extra = {}) => runChild(argv, clone, { ...env, ...extra.env }, extra.stdin, extra.timeoutMs ?? 60_000),
    async mustRun(argv) {
      const run = await lab.robotArmy(argv);
      if (run.code !== 0) throw new Error(`robot-army ${argv.join(" ")} exited ${run.code ?? run.signal}: ${(run.stderr || run.stdout).trim()}`);
      return run.stdout;
    },
    async api(method, path, body) {
      const res = await fetch(forge.url + path, {
        method, body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization: `token ${token}`, "content-type": "application/json" },
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`forge answered ${res.status} to ${method} ${path}: ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
    async close() {
      try {
        await stopWhatRuns(lab.sessionRoot);
      } finally {
        await forge.close();
        removeTempDir(dir);
      }
    },
  };
  return lab;
}

/**
 * Stops every session of the lab whose command still runs: by its holder (a short grace),
 * or, for a vanished holder, its command proven the recorded one by pid and start time. A
 * crash can leave a session that never got its holder ("starting"): it has no process.
 */
async function stopWhatRuns(root: string): Promise<void> {
  for (const record of listRecords(root)) {
    const state = sessionState(root, record);
    if (state === "running") await stopSession(root, record, { graceMs: 200 }).catch(() => {});
    // childRunning proves the pid is still the recorded command, by its start time.
    else if (state === "vanished" && childRunning(record) === true && record.childPid !== null && record.childPid > 1) process.kill(record.childPid, "SIGKILL");
  }
}

/** The router, run by the runtime running the suite. */
const ROBOT_ARMY = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));

/** Runs robot-army as a child of this runtime; a child still running at the timeout is SIGKILLed (and its run says so). */
function runChild(argv: string[], cwd: string, env: Record<string, string>, stdin: string | undefined, timeoutMs: number): Promise<Run> {
  const [bin, ...args] = ROBOT_ARMY;
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...args, ...argv], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const late = setTimeout(() => {
      stderr += `\n[crash suite: timed out after ${timeoutMs} ms]`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(late);
      resolve({ argv, pid: child.pid, code, signal, stdout, stderr });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(stdin ?? "");
  });
}
