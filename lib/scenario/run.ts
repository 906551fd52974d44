/**
 * The scenario runner: each scenario gets a fresh temp dir with its own HOME, state dir and
 * clock, a named setup, then its steps run as the real `robot-army` binary (a child process
 * with argv, never a shell) on Node or Deno; outputs are normalised and checked.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { startDashboard } from "../testing/dashboard.ts";
import type { Dashboard } from "../testing/dashboard.ts";
import { listRecords, sessionRoot } from "../sessions/records.ts";
import { checkExpectation } from "./expect.ts";
import type { StepOutcome } from "./expect.ts";
import { PROJECT_ROOT } from "./load.ts";
import type { Expectation, Scenario, Step } from "./load.ts";
import { Normaliser } from "./normalise.ts";
import { loadSetup } from "./setups/index.ts";
import { robotArmyCommand } from "./setup.ts";
import type { Runtime, SetupContext, SetupResult } from "./setup.ts";


/** How a run goes: the runtime, how many scenarios at once, whether temp dirs are kept. */
export interface RunOptions {
  runtime: Runtime;
  jobs?: number;
  keep?: boolean;
  /** A step still running after this long is killed and fails (default 60 s). */
  stepTimeoutMs?: number;
  root?: string;
}

/** One step as it ran: argv and env as the scenario wrote them, output normalised. */
export interface StepRecord extends StepOutcome {
  step: Step;
}

/** What happened to one scenario; `failure` is set when it stopped at a step (or its setup). */
export interface ScenarioResult {
  scenario: Scenario;
  steps: StepRecord[];
  failure?: { step: string; messages: string[]; expect?: Expectation; outcome?: StepOutcome; argv?: string[] };
  /** The temp dir, when `keep` asked to leave it. */
  kept?: string;
}

/** The clock every scenario starts at unless its env sets `RA_NOW`. */
export const SCENARIO_NOW = "2026-01-15T10:00:00Z";

/**
 * Runs scenarios, `jobs` at a time (default 2), calling `onResult` for each in the order
 * given, as soon as it and every one before it are done.
 */
export async function runScenarios(scenarios: Scenario[], options: RunOptions, onResult?: (result: ScenarioResult) => void): Promise<ScenarioResult[]> {
  // Both runtimes cache what they compile (NODE_COMPILE_CACHE, DENO_DIR); one cache per run
  // keeps each HOME fresh without paying for the compile at every step.
  const cacheDir = makeTempDir("robot-army-cache-");
  const results: ScenarioResult[] = new Array(scenarios.length);
  let next = 0;
  let reported = 0;
  const worker = async () => {
    while (next < scenarios.length) {
      const index = next++;
      results[index] = await runScenario(scenarios[index], { ...options, cacheDir });
      for (; reported < results.length && results[reported]; reported++) onResult?.(results[reported]);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs ?? 2, scenarios.length)) }, worker));
  } finally {
    removeTempDir(cacheDir);
  }
  return results;
}

/** Runs one scenario in a fresh temp dir, stopping at its first failing step. */
export async function runScenario(scenario: Scenario, options: RunOptions & { cacheDir?: string }): Promise<ScenarioResult> {
  const root = options.root ?? PROJECT_ROOT;
  const dir = makeTempDir("robot-army-scenario-");
  const result: ScenarioResult = { scenario, steps: [] };
  let current = "setup";
  let made: SetupResult | undefined;
  let dashboard: Dashboard | undefined;
  const fail = (step: string, messages: string[], more: Partial<NonNullable<ScenarioResult["failure"]>> = {}) => {
    result.failure = { step, messages, ...more };
  };
  try {
    const env: Record<string, string> = { ...isolatedEnv(dir), ...compileCache(options.runtime, options.cacheDir), ...scenario.env };
    mkdirSync(env.HOME, { recursive: true });
    const run = (argv: string[], cwd: string, stepEnv: Record<string, string>, stdin?: string) =>
      runRobotArmy(options.runtime, root, argv, { cwd, env: stepEnv, stdin, timeoutMs: options.stepTimeoutMs });
    const ctx: SetupContext = {
      dir,
      env: { ...env },
      runtime: options.runtime,
      robotArmy: (argv, o = {}) => run(argv, o.cwd ?? dir, { ...env, ...o.env }),
    };
    try {
      made = await (await loadSetup(scenario.setup)).setup(ctx);
    } catch (error) {
      fail("setup", [`setup "${scenario.setup}" failed: ${error instanceof Error ? error.message : String(error)}`]);
      return result;
    }
    const cwd = made.cwd;
    const stepsEnv = { ...env, ...made.env };
    const vars = { TMP: dir, HOME: env.HOME, STATE: env.RA_STATE_DIR, CWD: cwd, ...made.vars };
    const normaliser = new Normaliser([
      { path: cwd, placeholder: existsSync(join(cwd, ".git")) ? "<repo>" : "<work>" },
      { path: env.HOME, placeholder: "<home>" },
      { path: env.RA_STATE_DIR, placeholder: "<state>" },
      { path: dir, placeholder: "<tmp>" },
      { path: root, placeholder: "<robot-army>" },
      ...(options.cacheDir ? [{ path: options.cacheDir, placeholder: "<cache>" }] : []),
      ...Object.entries(made.placeholders ?? {}).map(([path, placeholder]) => ({ path, placeholder })),
    ]);
    // The sessions on record are known before any output is read, so a short id of eight decimal digits is still an id.
    const knowSessions = () => normaliser.knowIds(sessionIds(stepsEnv));
    knowSessions();
    for (const step of scenario.steps) {
      current = step.id;
      if (step.press) {
        // A button on the dashboard: serve started once, on the scenario's runtime, for every press.
        dashboard ??= await startDashboard({ env: stepsEnv, cwd, command: robotArmyCommand(options.runtime, root) });
        const expect = substituteFilePaths(step.expect, vars);
        const raw = await pressButton(dashboard.url, { path: substitute(step.press.path, vars), form: mapValues(step.press.form ?? {}, (value) => substitute(value, vars)) });
        knowSessions();
        const outcome = { code: raw.code, stdout: normaliser.normalise(raw.stdout), stderr: normaliser.normalise(raw.stderr) };
        result.steps.push({ step, ...outcome });
        const messages = [...raw.problems, ...checkExpectation(expect, outcome, cwd, (text) => normaliser.normalise(text, { record: false }))];
        if (messages.length) {
          fail(step.id, messages, { expect, outcome, argv: [`press ${step.press.path}`] });
          return result;
        }
        continue;
      }
      let argv: string[];
      let stepEnv: Record<string, string>;
      let expect: Expectation;
      let stdin: string | undefined;
      try {
        argv = step.run!.map((arg) => substitute(arg, vars));
        stdin = step.stdin === undefined ? undefined : substitute(step.stdin, vars);
        stepEnv = { ...stepsEnv, ...mapValues(step.env ?? {}, (value) => substitute(value, vars)) };
        expect = substituteFilePaths(step.expect, vars);
      } catch (error) {
        fail(step.id, [(error as Error).message]);
        return result;
      }
      const check = (o: StepOutcome, problems: string[]) =>
        [...problems, ...checkExpectation(expect, o, cwd, (text) => normaliser.normalise(text, { record: false }))];
      let raw = await run(argv, cwd, stepEnv, stdin);
      knowSessions();
      // `eventually`: re-run until the expectations hold; trial runs hand out no placeholder numbers.
      // Each run starts a runtime, so the pause between runs grows (to under a second) rather than spin a core.
      const deadline = Date.now() + (step.eventually ?? 0) * 1000;
      let pauseMs = 200;
      while (Date.now() < deadline) {
        const trial = { code: raw.code, stdout: normaliser.normalise(raw.stdout, { record: false }), stderr: normaliser.normalise(raw.stderr, { record: false }) };
        if (check(trial, raw.problems).length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 1.5, 800);
        raw = await run(argv, cwd, stepEnv, stdin);
        knowSessions();
      }
      const outcome = { code: raw.code, stdout: normaliser.normalise(raw.stdout), stderr: normaliser.normalise(raw.stderr) };
      result.steps.push({ step, ...outcome });
      const messages = check(outcome, raw.problems);
      if (messages.length) {
        fail(step.id, messages, { expect, outcome, argv: step.run! });
        return result;
      }
    }
    return result;
  } catch (error) {
    // A fault of the runner or a setup's helpers fails this scenario, not the whole run.
    fail(current, [`unexpected error: ${error instanceof Error ? error.stack : String(error)}`]);
    return result;
  } finally {
    await dashboard?.stop();
    // What the setup started (a sandbox forge) stops before its folder goes.
    await made?.cleanup?.().catch((error) => fail(current, [`setup cleanup failed: ${(error as Error).message}`]));
    if (options.keep) result.kept = dir;
    else removeTempDir(dir);
  }
}

/** The ids of the sessions on record in the scenario's session root; none when it cannot be read. */
function sessionIds(env: Record<string, string>): string[] {
  try {
    return listRecords(sessionRoot(env)).map((record) => record.id);
  } catch {
    return [];
  }
}

/** The environment a scenario starts from: nothing from outside but PATH and the compile caches (compileCaches), everything else in `dir`. */
export function isolatedEnv(dir: string, outer: Record<string, string | undefined> = process.env): Record<string, string> {
  const home = join(dir, "home");
  return {
    PATH: outer.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    RA_STATE_DIR: join(dir, "state"),
    RA_NOW: SCENARIO_NOW,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    NO_COLOR: "1",
    TZ: "UTC",
    LANG: "C.UTF-8",
    GIT_CONFIG_NOSYSTEM: "1",
    ...compileCaches(outer),
  };
}

/**
 * The compile caches the outer environment names (`NODE_COMPILE_CACHE`, `DENO_DIR`), kept
 * through a fresh HOME: each program a test starts reads robot-army's modules compiled once
 * per run instead of stripping and compiling them all again, which cost about half of each
 * start. Only what is compiled is shared; nothing of the state a test isolates.
 */
function compileCaches(outer: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(["NODE_COMPILE_CACHE", "DENO_DIR"].flatMap((name) => outer[name] ? [[name, outer[name]]] : []));
}

/** Replaces `${NAME}` with a variable; an unknown name is an error naming what is known. */
export function substitute(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
    if (Object.hasOwn(vars, name)) return vars[name];
    throw new Error(`Unknown variable "${whole}" (known: ${Object.keys(vars).sort().join(", ")})`);
  });
}

function substituteFilePaths(expect: Expectation, vars: Record<string, string>): Expectation {
  const paths = (list?: string[]) => list?.map((path) => substitute(path, vars));
  return {
    ...expect,
    ...(expect.files_exist ? { files_exist: paths(expect.files_exist) } : {}),
    ...(expect.files_absent ? { files_absent: paths(expect.files_absent) } : {}),
    ...(expect.files_contain
      ? { files_contain: Object.fromEntries(Object.entries(expect.files_contain).map(([path, f]) => [substitute(path, vars), f])) }
      : {}),
  };
}

function compileCache(runtime: Runtime, dir: string | undefined): Record<string, string> {
  if (!dir) return {};
  return runtime === "node" ? { NODE_COMPILE_CACHE: dir } : { DENO_DIR: dir };
}

function mapValues(record: Record<string, string>, f: (value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, f(value)]));
}

/**
 * Presses a button on the dashboard at `url` as its page's form does: the CSRF token from the
 * page's forms (`/`, which always has one), a fresh one-time key, and the press's fields, posted
 * for a JSON answer. What the command says goes to stdout, a refusal to stderr; the exit code
 * is the one the command would have returned (3 for a refusal with none).
 */
async function pressButton(url: string, press: { path: string; form: Record<string, string> }): Promise<{ code: number; stdout: string; stderr: string; problems: string[] }> {
  const page = await (await fetch(`${url}/`, { headers: { Accept: "text/html" } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!csrf) return { code: 127, stdout: "", stderr: "", problems: ["the dashboard's first page has no form to take a CSRF token from"] };
  const response = await fetch(url + press.path, {
    method: "POST", redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: url, Accept: "application/json" },
    body: new URLSearchParams({ ...press.form, csrf, once: globalThis.crypto.randomUUID() }).toString(),
  });
  const text = await response.text();
  let answer: { code?: number; lines?: string[]; error?: string };
  try {
    answer = JSON.parse(text);
  } catch {
    answer = { error: text.trim() };
  }
  const said = (answer.lines ?? [answer.error ?? `HTTP ${response.status}`]).join("\n") + "\n";
  return response.status === 200
    ? { code: answer.code ?? 0, stdout: said, stderr: "", problems: [] }
    : { code: answer.code ?? 3, stdout: "", stderr: said, problems: [] };
}

/** Runs `robot-army argv` as a child of this process and collects what it wrote. */
async function runRobotArmy(
  runtime: Runtime,
  root: string,
  argv: string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<{ code: number; stdout: string; stderr: string; problems: string[] }> {
  const [bin, ...args] = robotArmyCommand(runtime, root);
  // Each step in a process group of its own, as a shell with job control runs a command: a foreground
  // session waits for what its command started in its group, never for another scenario's processes.
  const child = spawn(bin, [...args, ...argv], { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
  child.stdin.on("error", () => {}); // a command that never reads stdin may close it first
  child.stdin.end(options.stdin ?? "");
  const problems: string[] = [];
  const timeoutMs = options.timeoutMs ?? 60_000;
  const code = await new Promise<number>((resolve) => {
    const timer = setTimeout(() => {
      problems.push(`timed out after ${timeoutMs / 1000}s and was killed`);
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      problems.push(`could not start ${bin}: ${error.message}`);
      resolve(127);
    });
    child.on("exit", (status, signal) => {
      clearTimeout(timer);
      if (signal) problems.push(`was ended by ${signal}`);
      // A shell reports a process ended by a signal as 128 + the signal's number.
      const code = status ?? 128 + (signal ? constants.signals[signal] : 0);
      // Wait for the pipes to drain, but not for a grandchild that kept them open.
      const settle = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        resolve(code);
      }, 2000);
      child.on("close", () => {
        clearTimeout(settle);
        resolve(code);
      });
    });
  });
  return { code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), problems };
}
