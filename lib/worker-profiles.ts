/**
 * What a worker profile (`[worker] profile`) means to the owner, wherever it is shown or
 * used: whether its workers' idleness can be known at all, and the command line that brings
 * one of its sessions back by hand. What each profile adds at a worker's start is the
 * dispatcher's (lib/dispatch/profiles.ts).
 */
import type { Config, WorkerProfile } from "./config.ts";
import { commandText } from "./shell-words.ts";

/**
 * What `show` and `doctor` say of a profile whose workers are never taken for idle; null when
 * its registry can show them idle (claude, codex, demo: the agent's own hooks report both when
 * it takes up work and when it stops). A generic worker has no registry, so it is never taken
 * for idle, and so never retired (DESIGN rule 1: unknown is never idle).
 */
export function noRegistryLine(profile: WorkerProfile): string | null {
  if (profile === "generic") return "worker profile generic: no registry, so its workers are never taken for idle (never retired); set [worker] profile to claude, codex or demo if it is one of those";
  return null;
}

/**
 * The command line that brings a session back by hand, run in its worktree; null when the
 * profile has none. Codex picks its own session ids (its hooks report them, and `show` lists
 * the agent's id), so its line is its picker, which lists the sessions of the folder it runs in.
 * @example resumeCommand({ ...worker, binary: "claude", profile: "claude" }, id) // "claude --resume <id>"
 */
export function resumeCommand(worker: Config["worker"], sessionId: string): string | null {
  switch (worker.profile) {
    case "claude":
      return commandText([worker.binary, "--resume", sessionId]);
    case "codex":
      return commandText([worker.binary, "resume"]);
    case "demo":
      return null;
    default:
      return worker.resume_args.length ? commandText([worker.binary, ...worker.args, ...worker.resume_args]) : null;
  }
}
