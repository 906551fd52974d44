#!/usr/bin/env node
/**
 * The `robot-army` router: `robot-army <command> ...` runs `scripts/<command>.ts`.
 * Commands are imported only when called, so a read command pays only for what it uses.
 */
import { readFileSync } from "node:fs";
import { print, runMain } from "../lib/cli.ts";
import { UsageError } from "../lib/errors.ts";
import type { CommandDef, FamilyDef } from "../lib/cli.ts";

/** What every command module exports. */
export interface CommandModule {
  command: CommandDef | FamilyDef;
  main: (argv: string[]) => Promise<number | void>;
}

/** Every command, in the order the overview lists them. */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  episode: { summary: "Open, inspect and close the work journal's episodes", load: () => import("./episode.ts") },
  ledger: { summary: "Append to and read the episode ledger", load: () => import("./ledger.ts") },
  continuity: { summary: "What a new worker needs first: open episodes, records, ledger", load: () => import("./continuity.ts") },
  recover: { summary: "Close what a crash left open, from evidence", load: () => import("./recover.ts") },
  session: { summary: "Run and manage worker processes whose exits are never lost", load: () => import("./session.ts") },
  onboard: { summary: "Approve a repository for robot-army to work on", load: () => import("./onboard.ts") },
  repos: { summary: "List repositories with their onboarding state and live work items", load: () => import("./repos.ts") },
  poll: { summary: "Turn labelled issues into work items and keep items in step with their issues", load: () => import("./poll.ts") },
  start: { summary: "Run the daemon on your config; with none, a rehearsal against the sandbox forge", load: () => import("./start.ts") },
  run: { summary: "Run the daemon: reconcile, poll, dispatch and heartbeat every tick", load: () => import("./run.ts") },
  status: { summary: "Work items by state, the dispatch queue and the GitHub rate limit", load: () => import("./status.ts") },
  show: { summary: "One work item: its issue, state, history, sessions and pull requests", load: () => import("./show.ts") },
  prompt: { summary: "Print the prompt a worker for a work item starts with", load: () => import("./prompt.ts") },
  attach: { summary: "Open a work item's worker session where its launcher put it", load: () => import("./attach.ts") },
  capacity: { summary: "Live worker sessions against the machine's and each repository's limits", load: () => import("./capacity.ts") },
  pause: { summary: "Stop dispatching new worker sessions until unpause", load: () => import("./pause.ts") },
  unpause: { summary: "Let dispatch start worker sessions again", load: () => import("./unpause.ts") },
  hold: { summary: "Keep dispatch away from a work item or a repository", load: () => import("./hold.ts") },
  unhold: { summary: "Lift the hold on a work item or a repository", load: () => import("./unhold.ts") },
  holds: { summary: "List held work items and repositories, and the pause", load: () => import("./holds.ts") },
  resume: { summary: "Give a work item a new session in its worktree, with the worker's context restored", load: () => import("./resume.ts") },
  restart: { summary: "Give a work item a new session in its worktree, starting without the earlier context", load: () => import("./restart.ts") },
  retry: { summary: "Put a failed work item back in the dispatch queue", load: () => import("./retry.ts") },
  abandon: { summary: "Give up on a work item for good", load: () => import("./abandon.ts") },
  cancel: { summary: "Stop the session working on a work item, after you confirm", load: () => import("./cancel.ts") },
  reset: { summary: "Discard a work item's unfinished worktree and branch and put it back in the queue", load: () => import("./reset.ts") },
  doctor: { summary: "Check that robot-army has what it needs: config, token, git, tmux, state dir, GitHub", load: () => import("./doctor.ts") },
  log: { summary: "Read the audit log", load: () => import("./log.ts") },
  forge: { summary: "Run and seed the sandbox forge, a stand-in for GitHub on loopback", load: () => import("./forge.ts") },
  "example-config": { summary: "Print a fully commented config.toml", load: () => import("./example-config.ts") },
};

/** The overview printed by `robot-army --help`. */
export function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length)) + 2;
  return [
    "Usage: robot-army <command> [options]",
    "",
    "robot-army supervises AI coding-agent sessions working on GitHub issues.",
    "",
    "Commands:",
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`),
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
    process.stdout.write(overview());
    return 0;
  }
  if (name === "--version" || name === "-V") {
    print(`robot-army ${version()}`);
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) throw new UsageError(`Unknown command "${name}"`, overview());
  const module = await entry.load();
  return module.main(rest);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
