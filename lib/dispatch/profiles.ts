/**
 * Worker profiles (`[worker] profile`): what each agent needs added at its start so its
 * idleness can be read (the registry: its episode's status), and what brings a session back.
 *
 * - **claude** (Claude Code): started with `--session-id <id>`, the managed session's own id,
 *   so the id robot-army records is the one naming the transcript; a resume forks the earlier
 *   transcript into that id (`--resume <earlier> --fork-session --session-id <id>`: Claude Code
 *   takes `--session-id` with `--resume` only so). Its hooks, written into the worktree's local
 *   settings (lib/dispatch/claude-hooks.ts), keep the episode.
 * - **codex**: its `notify` program (`-c notify=[...]`) is called with a JSON argument at the end
 *   of each turn (`agent-turn-complete`), which opens the episode if needed and marks it idle.
 *   Codex calls it for nothing else: it cannot say that a new prompt made the agent busy again,
 *   so an episode it marked idle stays idle while the owner gives the agent more work by hand.
 * - **demo**: robot-army's demo worker keeps its journal itself; nothing is added.
 * - **generic**: any other program; no registry, so its workers are never taken for idle.
 */
import { dirname } from "node:path";
import type { Config, WorkerProfile } from "../config.ts";
import { commandText } from "../shell-words.ts";
import { writeClaudeHooks } from "./claude-hooks.ts";

/** The worker settings a profile reads. */
export type WorkerConfig = Config["worker"];

/** What a start knows that a profile may add to the worker's argv and worktree. */
export interface ProfileStart {
  /** The managed session's id, chosen before the launch. */
  sessionId: string;
  /** The episode key the worker is given. */
  episodeKey: string;
  /** A resume, with the earlier session it brings back (null when none is on record); null for a fresh start. */
  resume: { earlier: string | null } | null;
  /** The absolute path of the `robot-army` launcher the worker's hooks run (lib/boundaries/launchers/worker-bin.ts). */
  robotArmy: string;
  /** The file holding the worker's prompt, when it is given one (a fresh start). */
  promptFile?: string;
}

/**
 * What `show` and `doctor` say of a profile whose workers are never taken for idle; null when
 * its registry can show them idle (claude, demo: the agent's own hooks report both when it takes
 * up work and when it stops). Codex's notify program hears only the end of a turn, never the
 * start of one, so an idle status from it cannot show that the worker is still idle (the owner
 * may have typed since): like generic, its workers are never taken for idle, and so never
 * retired (DESIGN rule 1: unknown is never idle).
 */
export function noRegistryLine(profile: WorkerProfile): string | null {
  if (profile === "generic") return "worker profile generic: no registry, so its workers are never taken for idle (never retired); set [worker] profile to claude, codex or demo if it is one of those";
  if (profile === "codex") return "worker profile codex: its notify hook reports the end of a turn but never the start of one, so its workers are never taken for idle (never retired)";
  return null;
}

/**
 * The worker's argv for this start: the configured command (with `resume_args` on a resume,
 * except where the profile brings the session back itself) and what the profile adds.
 */
export function workerArgv(worker: WorkerConfig, start: ProfileStart): string[] {
  const base = [worker.binary, ...worker.args];
  switch (worker.profile) {
    case "claude":
      // Claude Code reads no prompt file by itself: its first message points at the file, which keeps
      // the words out of argv (the process list) as every worker's prompt is kept.
      if (!start.resume) return [...base, "--session-id", start.sessionId, ...(start.promptFile ? [claudeFirstMessage(start.promptFile)] : [])];
      // Without an earlier id on record, the newest conversation of the worktree is the one to continue.
      return [...base, ...(start.resume.earlier ? ["--resume", start.resume.earlier] : ["--continue"]), "--fork-session", "--session-id", start.sessionId];
    case "codex": {
      const notify = [start.robotArmy, "episode", "hook", "codex", "--key", start.episodeKey];
      // A TOML array of basic strings: JSON's string escapes are TOML's.
      return [...base, ...(start.resume ? worker.resume_args : []), "-c", `notify=${JSON.stringify(notify)}`];
    }
    default:
      return [...base, ...(start.resume ? worker.resume_args : [])];
  }
}

/** The first message a Claude Code worker is started with: where its prompt is. */
export function claudeFirstMessage(promptFile: string): string {
  return `Your task is in the file ${promptFile}: read it, then do what it says.`;
}

/** Readies the worktree for the profile before the worker starts: Claude Code's hooks and grants (its prompt's folder among them); nothing for the others. */
export async function prepareWorktree(worker: WorkerConfig, worktree: string, start: ProfileStart): Promise<void> {
  if (worker.profile !== "claude") return;
  await writeClaudeHooks(worktree, { robotArmy: start.robotArmy, episodeKey: start.episodeKey, sessionId: start.sessionId, ...(start.promptFile ? { promptDir: dirname(start.promptFile) } : {}) });
}

/**
 * The command line that brings a session back by hand, run in its worktree; null when the
 * profile has none. Codex picks its own session ids (robot-army never learns them), so its
 * line is its picker, which lists the sessions of the folder it runs in.
 * @example resumeCommand({ ...worker, binary: "claude", profile: "claude" }, id) // "claude --resume <id>"
 */
export function resumeCommand(worker: WorkerConfig, sessionId: string): string | null {
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
