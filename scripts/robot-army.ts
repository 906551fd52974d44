#!/usr/bin/env node
/**
 * The `robot-army` router: `robot-army <command> ...` runs `scripts/<command>.ts`.
 * Commands are imported only when called, so a read command pays only for what it uses;
 * the overview loads them all, since each command's summary lives in its own definition.
 */
import { readFileSync } from "node:fs";
import { print, runMain, writeStdout } from "../lib/cli.ts";
import { UsageError } from "../lib/errors.ts";
import { nearestName } from "../lib/nearest-name.ts";
import type { CommandDef, FamilyDef } from "../lib/cli.ts";

/** What every command module exports. */
export interface CommandModule {
  command: CommandDef | FamilyDef;
  main: (argv: string[]) => Promise<number | void>;
}

/** Every command, in the order the overview lists them (COMMAND_GROUPS groups them). */
export const COMMANDS: Record<string, { load: () => Promise<CommandModule> }> = {
  start: { load: () => import("./start.ts") },
  status: { load: () => import("./status.ts") },
  show: { load: () => import("./show.ts") },
  run: { load: () => import("./run.ts") },
  serve: { load: () => import("./serve.ts") },
  attach: { load: () => import("./attach.ts") },
  log: { load: () => import("./log.ts") },
  doctor: { load: () => import("./doctor.ts") },
  resume: { load: () => import("./resume.ts") },
  restart: { load: () => import("./restart.ts") },
  retry: { load: () => import("./retry.ts") },
  abandon: { load: () => import("./abandon.ts") },
  cancel: { load: () => import("./cancel.ts") },
  reset: { load: () => import("./reset.ts") },
  keep: { load: () => import("./keep.ts") },
  unkeep: { load: () => import("./unkeep.ts") },
  keeps: { load: () => import("./keeps.ts") },
  approve: { load: () => import("./approve.ts") },
  prompt: { load: () => import("./prompt.ts") },
  pause: { load: () => import("./pause.ts") },
  unpause: { load: () => import("./unpause.ts") },
  hold: { load: () => import("./hold.ts") },
  unhold: { load: () => import("./unhold.ts") },
  holds: { load: () => import("./holds.ts") },
  capacity: { load: () => import("./capacity.ts") },
  poll: { load: () => import("./poll.ts") },
  onboard: { load: () => import("./onboard.ts") },
  repos: { load: () => import("./repos.ts") },
  trust: { load: () => import("./trust.ts") },
  health: { load: () => import("./health.ts") },
  anomalies: { load: () => import("./anomalies.ts") },
  cleanup: { load: () => import("./cleanup.ts") },
  worktree: { load: () => import("./worktree.ts") },
  "purge-simulated": { load: () => import("./purge-simulated.ts") },
  session: { load: () => import("./session.ts") },
  episode: { load: () => import("./episode.ts") },
  ledger: { load: () => import("./ledger.ts") },
  continuity: { load: () => import("./continuity.ts") },
  recover: { load: () => import("./recover.ts") },
  "example-config": { load: () => import("./example-config.ts") },
  forge: { load: () => import("./forge.ts") },
};

/** The overview's groups, everyday commands first; every command is in exactly one (scripts/robot-army.test.ts). */
export const COMMAND_GROUPS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["Every day", ["start", "status", "show", "run", "serve", "attach", "log", "doctor"]],
  ["When an item needs you", ["resume", "restart", "retry", "abandon", "cancel", "reset", "keep", "unkeep", "keeps", "approve", "prompt"]],
  ["What is dispatched", ["pause", "unpause", "hold", "unhold", "holds", "capacity", "poll"]],
  ["Repositories", ["onboard", "repos", "trust"]],
  ["Health and records", ["health", "anomalies", "cleanup", "worktree", "purge-simulated", "session", "episode", "ledger", "continuity", "recover"]],
  ["Set-up and rehearsal", ["example-config", "forge"]],
];

/** The overview printed by `robot-army --help`: every command, grouped, with the summary its own definition gives. */
export async function overview(): Promise<string> {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length)) + 2;
  const summaries = new Map(await Promise.all(Object.entries(COMMANDS).map(async ([name, entry]) => [name, (await entry.load()).command.summary] as const)));
  return [
    "Usage: robot-army <command> [options]",
    "",
    "robot-army supervises AI coding-agent sessions working on GitHub issues.",
    "",
    "Commands:",
    ...COMMAND_GROUPS.flatMap(([group, names], i) => [
      ...(i ? [""] : []),
      `  ${group}:`,
      ...names.map((name) => `    ${name.padEnd(width)}${summaries.get(name)}`),
    ]),
    "",
    "Options:",
    "  -h, --help     Show this help",
    "  -V, --version  Show the version",
    "",
    'Run "robot-army <command> --help" for a command\'s options.',
    "Exit codes: 0 ok, 1 failed, 2 usage, 3 precondition not met, 4 check failed.",
    "",
  ].join("\n");
}

/** The version in package.json. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  return pkg.version;
}

/** Routes argv to a command. */
export async function main(argv: string[]): Promise<number | void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    writeStdout(await overview());
    return 0;
  }
  if (name === "--version" || name === "-V") {
    print(`robot-army ${version()}`);
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    const near = nearestName(name, Object.keys(COMMANDS));
    // A slip gets its guess and one line; a word near no command gets the overview, to choose from.
    if (near) throw new UsageError(`Unknown command "${name}": did you mean "${near}"?`, '"robot-army --help" lists every command');
    throw new UsageError(`Unknown command "${name}"`, await overview());
  }
  const module = await entry.load();
  return module.main(rest);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
