/**
 * `robot-army restart <id>`: give a work item a new session in its worktree, starting without the earlier context.
 */
import { runMain } from "../lib/cli.ts";
import { relaunchCommand } from "../lib/dispatch/verbs/relaunch-command.ts";

const restart = relaunchCommand("restart", "Give a work item a new session in its worktree, starting without the earlier context", `\
The worker is started afresh with its prompt in the same worktree and branch, in a session
named ra-<repo>-<issue>-<attempt> (the earlier session's record and log are kept). At the
live effect level the issue is told: "reassigned to a new session (attempt N)", where it
runs, and "Supersedes: <earlier session id>" (or that no earlier session is on record).
`);

/** How the command is called; its help is generated from this. */
export const command = restart.command;
export const main = restart.main;
export const run = restart.run;

if (import.meta.main) await runMain(main, process.argv.slice(2));
