/**
 * `robot-army capacity`: the live worker sessions on this machine and in each repository,
 * against their limits, and what keeps a new one from starting. Exits 4 when the count
 * cannot be observed: then nothing is dispatched, and the message says why.
 *
 * A read never creates anything: with no database yet, every worker is another's.
 */
import { existsSync, readFileSync } from "node:fs";
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, parse, runMain, stringOption, writeStdout } from "../lib/cli.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs, configPath } from "../lib/config.ts";
import { configuredLimits, observeCapacity, releaseHint } from "../lib/dispatch/capacity.ts";
import type { Capacity, DispatchAnswer } from "../lib/dispatch/capacity.ts";
import { describePause, pauseState } from "../lib/dispatch/controls.ts";
import type { Pause } from "../lib/dispatch/controls.ts";
import { CheckFailedError, EXIT } from "../lib/errors.ts";
import { sessionRoot } from "../lib/sessions/records.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "capacity",
  summary: "Live worker sessions against the machine's and each repository's limits",
  usage: "capacity [--config FILE] [--json]",
  description: `\
Counts the live worker sessions (managed sessions tagged ra_item) in the session root
($RA_SESSION_ROOT, else <state dir>/sessions). Every one counts against
daemon.max_concurrent_sessions, robot-army's and others'; robot-army's own count against
their repository's max_sessions (its own, else worker.max_sessions). Kept sessions count
too, and are shown apart: a worker whose item is kept ("robot-army keep <id>") while it is
the item's current session, or a session tagged keep. A limit a kept session fills names
what releases it ("robot-army unkeep <id>").

A worker session whose holder cannot be proven running or gone, or a record that cannot
be read, makes the count unobservable: the command says why and exits 4, and dispatch
waits; an unknown count is never taken as zero.
`,
  options: { config: CONFIG_OPTION, json: JSON_OPTION },
  examples: ["robot-army capacity", "robot-army capacity --json"],
};

/** What `capacity` reads: the limits, the store (ours, the pause), the session root. */
export interface CapacityDeps {
  config: Config;
  store: Store | undefined;
  sessionRoot: string;
  /** Repositories whose config table sets max_sessions itself. */
  configuredLimits?: ReadonlySet<string>;
  write: Write;
}

/** Everything `capacity` reports, as `--json` prints it. */
export interface CapacityReport {
  observable: boolean;
  why: string | null;
  machine: Capacity["machine"];
  repos: Capacity["repos"];
  workers: Capacity["workers"];
  dispatch: Record<string, DispatchAnswer>;
  paused: Pause | null;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const config = await configFromArgs(args);
  const file = configPath(stringOption(args, "config")).path;
  const limits = configuredLimits(existsSync(file) ? readFileSync(file, "utf8") : "", Object.keys(config.repos));
  return await withExistingStore(stateDirPath(), async (store) => {
    return run({ json: args.values.json === true }, { config, store, sessionRoot: sessionRoot(), configuredLimits: limits, write: writeStdout });
  });
}

/** Prints the capacity; throws CheckFailedError (exit 4) when it cannot be observed, or returns 4 after `--json`. */
export function run(opts: { json: boolean }, deps: CapacityDeps): number {
  const report = capacityReport(deps);
  if (opts.json) {
    deps.write(JSON.stringify(report, null, 2) + "\n");
    return report.observable ? EXIT.ok : EXIT.checkFailed;
  }
  if (!report.observable) {
    throw new CheckFailedError(`Capacity cannot be observed: ${report.why}; no worker session is dispatched until it can be`);
  }
  deps.write(formatCapacity(report).map((line) => line + "\n").join(""));
  return EXIT.ok;
}

/** Observes the capacity and asks it about every repository it knows. */
export function capacityReport(deps: Omit<CapacityDeps, "write">): CapacityReport {
  const capacity = observeCapacity(deps);
  const dispatch = Object.fromEntries(Object.keys(capacity.repos).map((repo) => [repo, capacity.canDispatch(repo)]));
  return {
    observable: capacity.observable,
    why: capacity.why ?? null,
    machine: capacity.machine,
    repos: capacity.repos,
    workers: capacity.workers,
    dispatch,
    paused: deps.store ? pauseState(deps.store) ?? null : null,
  };
}

/** The report as lines of text. */
export function formatCapacity(report: CapacityReport): string[] {
  const { machine } = report;
  const total = machine.ours + machine.other;
  const kept = machine.kept ? ` (${machine.kept} kept)` : "";
  const lines = [`machine: ${total} of ${machine.max} sessions: ${machine.ours} ours${kept}, ${machine.other} other`];
  const ours = report.workers.filter((w) => w.ours);
  if (total >= machine.max) lines.push(`  full: no new worker session starts on this machine${releaseHint(ours)}`);
  const repos = Object.entries(report.repos);
  if (repos.length === 0) lines.push("repositories: none in the config");
  for (const [repo, entry] of repos) {
    lines.push(`repository ${repo}: ${entry.live} of ${entry.max} sessions (${entry.source})${entry.kept ? `, ${entry.kept} kept` : ""}`);
    if (entry.live >= entry.max) lines.push(`  full: no new worker session starts in ${repo}${releaseHint(ours.filter((w) => w.repo === repo))}`);
  }
  if (report.paused) lines.push(describePause(report.paused));
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
