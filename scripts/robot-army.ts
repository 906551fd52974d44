#!/usr/bin/env node
/**
 * The `robot-army` router: `robot-army <command> ...` runs `scripts/<command>.ts`.
 * Commands are imported only when called, so a read command pays only for what it uses;
 * the overview prints the summaries the router keeps beside each command's loader.
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

/**
 * Every command, in the order the overview lists them (COMMAND_GROUPS groups them), with its
 * summary as its own definition gives it: the overview prints these without loading the 41
 * modules (about 0.3 s of a cold start); scripts/robot-army.test.ts fails when one drifts.
 */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  start: { summary: "Run the daemon on your config; with none, a rehearsal against the sandbox forge", load: () => import("./start.ts") },
  status: { summary: "Work items by state, the dispatch queue and the GitHub rate limit", load: () => import("./status.ts") },
  show: { summary: "One work item: its issue, state, history, sessions and pull requests", load: () => import("./show.ts") },
  run: { summary: "Run the daemon: reconcile, poll, dispatch and heartbeat every tick", load: () => import("./run.ts") },
  serve: { summary: "Serve the web dashboard: what runs, what needs you, each item's live terminal", load: () => import("./serve.ts") },
  attach: { summary: "Open a work item's worker session where its launcher put it", load: () => import("./attach.ts") },
  log: { summary: "Read the audit log", load: () => import("./log.ts") },
  doctor: { summary: "Check that robot-army has what it needs: config, token, git, tmux, worker, state dir, disk, GitHub, repositories, channels", load: () => import("./doctor.ts") },
  resume: { summary: "Give a work item a new session in its worktree, with the worker's context restored", load: () => import("./resume.ts") },
  restart: { summary: "Give a work item a new session in its worktree, starting without the earlier context", load: () => import("./restart.ts") },
  retry: { summary: "Put a failed work item back in the dispatch queue", load: () => import("./retry.ts") },
  abandon: { summary: "Give up on a work item for good", load: () => import("./abandon.ts") },
  cancel: { summary: "Stop the session working on a work item, after you confirm", load: () => import("./cancel.ts") },
  reset: { summary: "Discard a work item's unfinished worktree and branch and put it back in the queue", load: () => import("./reset.ts") },
  send: { summary: "Type a message into a worker's terminal, as you would at its prompt", load: () => import("./send.ts") },
  keep: { summary: "Keep a work item's worker session running after its issue closes", load: () => import("./keep.ts") },
  unkeep: { summary: "Release a work item's keep: its worker goes back to the ordinary rules", load: () => import("./unkeep.ts") },
  keeps: { summary: "List every keep in force, including those with no live session", load: () => import("./keeps.ts") },
  approve: { summary: "Approve a work item's title and body that someone else changed, as you read them", load: () => import("./approve.ts") },
  unclaim: { summary: "Release the claim on GitHub that keeps a work item from starting here", load: () => import("./unclaim.ts") },
  prompt: { summary: "Print the prompt a worker for a work item starts with", load: () => import("./prompt.ts") },
  pause: { summary: "Stop dispatching new worker sessions until unpause", load: () => import("./pause.ts") },
  unpause: { summary: "Let dispatch start worker sessions again", load: () => import("./unpause.ts") },
  hold: { summary: "Keep dispatch away from a work item or a repository", load: () => import("./hold.ts") },
  unhold: { summary: "Lift the hold on a work item or a repository", load: () => import("./unhold.ts") },
  holds: { summary: "List held work items and repositories, and the pause", load: () => import("./holds.ts") },
  capacity: { summary: "Live worker sessions against the machine's and each repository's limits", load: () => import("./capacity.ts") },
  poll: { summary: "Turn labelled issues into work items and keep items in step with their issues", load: () => import("./poll.ts") },
  onboard: { summary: "Approve a repository for robot-army to work on", load: () => import("./onboard.ts") },
  repos: { summary: "List repositories with their onboarding state and live work items", load: () => import("./repos.ts") },
  trust: { summary: "Record your trust in a repository's clone for its workers' agent (Claude Code's or Codex's folder trust)", load: () => import("./trust.ts") },
  health: { summary: "Check from outside that the daemon is alive and ticking; --notify alerts every channel when it is not", load: () => import("./health.ts") },
  anomalies: { summary: "List what needs you (effects cut short, damaged files, orphaned workers), or acknowledge one", load: () => import("./anomalies.ts") },
  cleanup: { summary: "Reclaim done items' worktrees and branches, only where provably safe", load: () => import("./cleanup.ts") },
  worktree: { summary: "List, remove and prune robot-army's worktrees", load: () => import("./worktree.ts") },
  "purge-simulated": { summary: "Delete the work items made below the live effect level, and, if you say so, their worktrees", load: () => import("./purge-simulated.ts") },
  session: { summary: "Run and manage worker processes whose exits are never lost", load: () => import("./session.ts") },
  episode: { summary: "Open, inspect and close the work journal's episodes", load: () => import("./episode.ts") },
  ledger: { summary: "Append to and read the episode ledger", load: () => import("./ledger.ts") },
  continuity: { summary: "What a new worker needs first: open episodes, records, ledger", load: () => import("./continuity.ts") },
  recover: { summary: "Close what a crash left open, from evidence", load: () => import("./recover.ts") },
  "example-config": { summary: "Print a fully commented config.toml", load: () => import("./example-config.ts") },
  forge: { summary: "Run and seed the sandbox forge, a stand-in for GitHub on loopback", load: () => import("./forge.ts") },
};

/** The overview's groups, everyday commands first; every command is in exactly one (scripts/robot-army.test.ts). */
export const COMMAND_GROUPS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["Every day", ["start", "status", "show", "run", "serve", "attach", "log", "doctor"]],
  ["When an item needs you", ["resume", "restart", "retry", "abandon", "cancel", "reset", "send", "keep", "unkeep", "keeps", "approve", "unclaim", "prompt"]],
  ["What is dispatched", ["pause", "unpause", "hold", "unhold", "holds", "capacity", "poll"]],
  ["Repositories", ["onboard", "repos", "trust"]],
  ["Health and records", ["health", "anomalies", "cleanup", "worktree", "purge-simulated", "session", "episode", "ledger", "continuity", "recover"]],
  ["Set-up and rehearsal", ["example-config", "forge"]],
];

/** The overview printed by `robot-army --help`: every command, grouped, with its summary. */
export function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length)) + 2;
  return [
    "Usage: robot-army <command> [options]",
    "",
    "robot-army supervises AI coding-agent sessions working on GitHub issues.",
    "",
    "Commands:",
    ...COMMAND_GROUPS.flatMap(([group, names], i) => [
      ...(i ? [""] : []),
      `  ${group}:`,
      ...names.map((name) => `    ${name.padEnd(width)}${COMMANDS[name].summary}`),
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
    writeStdout(overview());
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
    throw new UsageError(`Unknown command "${name}"`, overview());
  }
  const module = await entry.load();
  return module.main(rest);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
