/**
 * `robot-army run`: the daemon. One per state dir (a lock names the pid holding it). Each
 * tick drains the exit spool, settles the sessions of active items, polls when due,
 * dispatches ready items and writes a heartbeat, and ends with one summary line; `--once`
 * runs one tick and exits, 1 when a step of it failed.
 */
import type { CommandDef } from "../lib/cli.ts";
import { JSON_OPTION, parse, runMain, stringOption, writeStderr, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION, configFromText, hostName, readConfigText } from "../lib/config.ts";
import { ConfigWatch } from "../lib/daemon/config-reload.ts";
import type { Config } from "../lib/config.ts";
import { EFFECT_LEVEL_OPTIONS, resolveLevel, wireEffects } from "../lib/effects.ts";
import type { EffectLevel } from "../lib/effects.ts";
import { PreconditionError } from "../lib/errors.ts";
import { reporter } from "../lib/events.ts";
import type { Report } from "../lib/events.ts";
import { readHeartbeat } from "../lib/daemon/heartbeat.ts";
import { acquireDaemonLock } from "../lib/daemon/lock.ts";
import { runLoop, stopSwitch } from "../lib/daemon/loop.ts";
import type { StopSwitch } from "../lib/daemon/loop.ts";
import { initialState } from "../lib/daemon/tick.ts";
import { ensureSessionRoot, sessionRoot as sessionRootOf } from "../lib/sessions/records.ts";
import { dryRunState } from "../lib/daemon/dry-run.ts";
import { spoolDir } from "../lib/sessions/spool.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";

export const command: CommandDef = {
  name: "run",
  summary: "Run the daemon: reconcile, poll, dispatch and heartbeat every tick",
  usage: "run [--once] [--dry-run] [--effect-level L] [--json] [--config FILE]",
  description: `\
Runs the supervisor for this state dir. Each tick, in order: drains the exit spool (a
worker that ended closes its session row and moves its item as its exit says: awaiting
review after exit 0 with a pull request open, failed after exit 1, 126 or 127, else
interrupted); settles the sessions
of active items (a worker proven gone with no exit record is lost) and claims cut short
(an item left dispatching by a process proven gone is interrupted); polls GitHub when
daemon.poll_seconds have passed; dispatches ready items under the caps; then writes a
reconcile.pass audit record and <state dir>/heartbeat.json. Nothing is dispatched in a
tick whose reconcile steps failed, so at start-up nothing starts before the spool is
drained and the sessions are settled.

A tick ends with one summary line, e.g. "tick 1: dispatched 1, failed 1, waiting 2; no
step failed" (with --json, one "tick" event with the same counts and steps_failed). A
failed step is one the tick could not do (the exit spool, settle, poll, dispatch, the
heartbeat): --once then exits 1. A dispatch that failed (its item is failed, its issue
told) is what happened to that item, not a failed step: it is counted in "failed N" and
--once exits 0. Without --once the summary is printed only when the tick dispatched,
saw a failure, or its counts changed, so an idle daemon stays quiet.

Only one daemon runs per state dir: <state dir>/daemon.lock holds its pid and start
time, and a second daemon is refused (exit 3) naming that pid. A lock whose daemon is
proven gone is taken over; one whose daemon cannot be checked is not.

Without --once it ticks every daemon.tick_seconds until SIGTERM or SIGINT, which stop it
between steps: the running step finishes, the lock is released, exit 0. Worker sessions
are not children of the daemon: they keep running after it stops.

Before each tick it reads config.toml again; SIGHUP starts that tick at once. A changed
file is validated whole and applied from that tick on, its log line naming each key that
changed; the effect level and the GitHub connection are wired at start and change at the
next restart. A file that does not validate is not applied: the daemon runs on with the
last good config and says why, with the line, in its log, as the config_refused anomaly
(status and notifications show it) and in the audit log. A new repository still needs
\`robot-army onboard\` before anything is dispatched for it. \`doctor\` says when the file
differs from what the running daemon applied.

--dry-run runs one tick that says what it would do and changes nothing, whatever the
effect level: it works on a copy of the state dir's store, exit spool and heartbeat in a
temporary folder (removed after), reads GitHub, the session root and the worktrees as a
tick does, and makes no comment, worktree, session, tab, cleanup or notification, saying
"would ..." for each. It takes no lock, so it runs beside a running daemon.
`,
  options: {
    once: { type: "boolean", description: "Run one tick, print its summary and exit (1 when a step failed)" },
    "dry-run": { type: "boolean", description: "One tick that says what it would do and changes nothing, whatever the effect level (on a copy of the state)" },
    ...EFFECT_LEVEL_OPTIONS,
    json: { ...JSON_OPTION, description: "Print one JSON object per event, one per line" },
    config: CONFIG_OPTION,
  },
  examples: ["robot-army run", "robot-army run --once --effect-level live", "robot-army run --once --dry-run", "robot-army run --json"],
};

/** What `run` was asked for. */
export interface RunOptions {
  once: boolean;
  level: EffectLevel;
  /** One tick on a copy of the state that makes nothing real (lib/daemon/dry-run.ts). */
  dryRun?: boolean;
}

/** Parses argv, checks the config can take work, stops on SIGTERM or SIGINT, and runs the daemon. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const { path, text } = readConfigText(stringOption(args, "config"));
  const config = await configFromText(text, path);
  const dryRun = args.values["dry-run"] === true;
  const opts = { once: args.values.once === true || dryRun, level: resolveLevel(args, config), dryRun };
  checkConfig(config);
  // SIGHUP starts the next pass at once, which reads config.toml again first.
  const stop = stopSwitch(["SIGTERM", "SIGINT"], ["SIGHUP"]);
  const watch = await ConfigWatch.start(path, text);
  try {
    return await run(opts, { config, report: reporter(writeStdout, args.values.json === true), stop, env: process.env, watch });
  } finally {
    stop.dispose();
  }
}

/** What `run` works with. */
export interface RunDeps {
  config: Config;
  report: Report;
  stop: StopSwitch;
  env: Record<string, string | undefined>;
  /** This machine's name, for session rows, comments and claims (default: `daemon.host`, else the hostname). */
  host?: string;
  /** The config file, taken again when it changes (lib/daemon/config-reload.ts); without it the config stays as started. */
  watch?: ConfigWatch;
}

/** Takes the lock, wires the boundaries, runs the loop, and releases the lock however it ends. */
export async function run(opts: RunOptions, deps: RunDeps): Promise<number> {
  if (!opts.dryRun) return await runOn(opts, deps, ensureStateDir(deps.env));
  const copy = await dryRunState(deps.env, deps.config);
  deps.report({ event: "dry_run", line: `dry run: one pass at effect level ${opts.level} on a copy of ${copy.real}; nothing is changed, GitHub is only read`, state_dir: copy.real });
  try {
    const code = await runOn({ ...opts, once: true }, { ...deps, config: copy.config, env: copy.env, watch: undefined }, copy.dir, copy.standsFor);
    deps.report({ event: "dry_run_end", line: "dry run: done; every would above is what a pass would do now, and nothing was done" });
    return code;
  } finally {
    copy.remove();
  }
}

/** The daemon on `stateDir` (for a dry run, the copy, which answers to `standsFor`). */
async function runOn(opts: RunOptions, deps: RunDeps, stateDir: string, standsFor?: string): Promise<number> {
  const { config, report } = deps;
  return await withStore(stateDir, async (store) => {
    const lock = acquireDaemonLock(stateDir, store);
    try {
      const { connectGitHub } = await import("../lib/boundaries/github.ts");
      const { launcherFor } = await import("../lib/boundaries/launchers/select.ts");
      const github = await connectGitHub(config, store, {
        onRetry: (r) => writeStderr(`robot-army: ${r.method} ${r.path}: ${r.reason}; retrying in ${Math.round(r.delayMs / 1000)}s\n`),
      });
      const effects = wireEffects(opts.level, { github: github.writer }, { dryRun: opts.dryRun === true });
      const sessionRoot = opts.dryRun ? sessionRootOf(deps.env) : ensureSessionRoot(deps.env);
      const every = opts.once ? "one tick" : `a tick every ${config.daemon.tick_seconds}s`;
      if (!opts.dryRun) report({ event: "started", line: `daemon started: effect level ${opts.level}, ${every}; state dir ${stateDir}`, pid: process.pid, level: opts.level, state_dir: stateDir });
      const tickDeps = {
        store, config, stateDir, sessionRoot, github, effects, host: deps.host ?? hostName(config),
        launcher: launcherFor(config, { env: deps.env }), spoolDir: spoolDir(deps.env), report,
      };
      const state = initialState(readHeartbeat(stateDir)?.last_poll_at ?? null);
      return await runLoop(tickDeps, {
        once: opts.once, tickSeconds: config.daemon.tick_seconds, stop: deps.stop, state, watch: deps.watch,
        rewire: (changed) => ({ launcher: launcherFor(changed, { env: deps.env }) }),
      });
    } finally {
      lock.release();
    }
    // At start the daemon reads every page: a damaged store is refused before a tick writes to it.
  }, { checkPages: true, standsFor });
}

/** The daemon needs repositories and an author before it can take any work. */
function checkConfig(config: Config): void {
  if (Object.keys(config.repos).length === 0) {
    throw new PreconditionError(`No repositories are configured: add a [repos."owner/name"] table with the clone's path to config.toml`);
  }
  if (!config.github.author) {
    throw new PreconditionError("No github.author is configured, so the daemon would take nothing: set [github] author in config.toml");
  }
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
