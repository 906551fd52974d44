/**
 * `robot-army resume <id>`: give a work item a new session in its worktree, with the worker's context restored.
 */
import { runMain } from "../lib/cli.ts";
import { relaunchCommand } from "../lib/dispatch/verbs/relaunch-command.ts";

const resume = relaunchCommand("resume", "Give a work item a new session in its worktree, with the worker's context restored", `\
The worker is started again in the same worktree and branch with worker.resume_args added
(e.g. ["--continue"]), so it picks up where it left off, in a session named
ra-<repo>-<issue>-<attempt> (the earlier session's record and log are kept). At the live
effect level the issue is told: "reassigned to a new session (attempt N)", where it runs,
and "Continues: <earlier session id>" (or that no earlier session is on record).
`);

/** How the command is called; its help is generated from this. */
export const command = resume.command;
export const main = resume.main;
export const run = resume.run;

if (import.meta.main) await runMain(main, process.argv.slice(2));
