/**
 * Worker profiles (`[worker] profile`): what each agent needs added at its start so its
 * idleness can be read (the registry: its episode's status), and what brings a session back.
 *
 * - **claude** (Claude Code): started with `--session-id <id>`, the managed session's own id,
 *   so the id robot-army records is the one naming the transcript; a resume forks the earlier
 *   transcript into that id (`--resume <earlier> --fork-session --session-id <id>`: Claude Code
 *   takes `--session-id` with `--resume` only so). Its hooks, written into the worktree's local
 *   settings (lib/dispatch/claude-hooks.ts), keep the episode.
 * - **codex** (Codex CLI): its lifecycle hooks, given on its command line with their trust and
 *   the git folders a commit writes (lib/dispatch/codex-hooks.ts), keep the episode; it runs
 *   with no shared background server (`--no-daemon`). Codex picks its own session ids, which its
 *   hooks report (the episode's `agent_session_id`); a resume brings that session back by id
 *   (`codex resume <id>`), or the newest one of the worktree when none is on record (`--last`),
 *   with a message that it was resumed (Codex sends its SessionStart with its first prompt).
 * - **demo**: robot-army's demo worker keeps its journal itself; nothing is added.
 * - **generic**: any other program; no registry, so its workers are never taken for idle.
 */
import { dirname } from "node:path";
import type { Config, WorkerProfile } from "../config.ts";
import { openJournal } from "../episodes/journal.ts";
import { writeClaudeHooks } from "./claude-hooks.ts";
import { codexWorkerArgs } from "./codex-hooks.ts";

/** The worker settings a profile reads. */
export type WorkerConfig = Config["worker"];

/** What a start knows that a profile may add to the worker's argv and worktree. */
export interface ProfileStart {
  /** The managed session's id, chosen before the launch. */
  sessionId: string;
  /** The episode key the worker is given. */
  episodeKey: string;
  /**
   * A resume, with the earlier session it brings back (null when none is on record) and, when
   * known, the agent's own id for it (Codex's); null for a fresh start.
   */
  resume: { earlier: string | null; agentSession?: string } | null;
  /** The worktree the worker starts in. */
  worktree: string;
  /** The environment the worker starts with (the launcher's `workerEnv`), where an agent's own settings are read from. */
  env?: Record<string, string | undefined>;
  /** The absolute path of the `robot-army` launcher the worker's hooks run (lib/boundaries/launchers/worker-bin.ts). */
  robotArmy: string;
  /** The file holding the worker's prompt, when it is given one (a fresh start). */
  promptFile?: string;
  /** On a resume, the file holding the feedback that came while no worker ran (lib/intake/feedback.ts): its first message points at it. */
  feedbackFile?: string;
}

/** The agent whose own hooks keep its worker's episode, so its prompt need not ask it to; undefined for the others. */
export function hooksOf(profile: WorkerProfile): "claude" | "codex" | undefined {
  return profile === "claude" || profile === "codex" ? profile : undefined;
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
      // the issue's words out of argv (the process list) as every worker's prompt is kept.
      if (!start.resume) return [...base, "--session-id", start.sessionId, ...(start.promptFile ? [taskPointerMessage(start.promptFile)] : [])];
      // Without an earlier id on record, the newest conversation of the worktree is the one to continue.
      return [...base, ...(start.resume.earlier ? ["--resume", start.resume.earlier] : ["--continue"]), "--fork-session", "--session-id", start.sessionId,
        ...(start.feedbackFile ? [feedbackPointerMessage(start.feedbackFile)] : [])];
    case "codex": {
      const added = codexWorkerArgs({ robotArmy: start.robotArmy, episodeKey: start.episodeKey, sessionId: start.sessionId, worktree: start.worktree, env: start.env ?? process.env });
      // Codex reads its first message from argv, as Claude Code does: a pointer to the prompt file, never the issue's words.
      if (!start.resume) return [...base, ...added, ...(start.promptFile ? [taskPointerMessage(start.promptFile)] : [])];
      // Codex reports no start until it is given a prompt: a resumed worker is told to go on, so its hooks see it at once.
      return [worker.binary, "resume", ...worker.args, ...added, start.resume.agentSession ?? "--last",
        start.feedbackFile ? feedbackPointerMessage(start.feedbackFile) : codexResumeMessage(start.promptFile)];
    }
    default:
      return [...base, ...(start.resume ? worker.resume_args : [])];
  }
}

/** What a resumed Codex worker is told first: that it was resumed, and where its task is. */
export function codexResumeMessage(promptFile: string | undefined): string {
  return `robot-army resumed this session after its worker stopped: go on with your task where you left off${promptFile ? ` (it is in the file ${promptFile})` : ""}.`;
}

/** The first message of a resumed Claude Code or Codex worker when feedback came while it was stopped: where the feedback is (its words stay out of argv). */
export function feedbackPointerMessage(feedbackFile: string): string {
  return `robot-army resumed this session: feedback came on your work while it was stopped. It is in the file ${feedbackFile}: read it, address it, commit and push as before.`;
}

/** The first message a Claude Code or Codex worker is started with: where its prompt is. */
export function taskPointerMessage(promptFile: string): string {
  return `Your task is in the file ${promptFile}: read it, then do what it says.`;
}

/**
 * Readies the worktree for the profile before the worker starts: Claude Code's hooks and grants
 * (its prompt's folder among them); for Codex, the journal's exclusion from git, which a
 * command in Codex's sandbox cannot write (the exclude file is the clone's); nothing for the others.
 */
export async function prepareWorktree(worker: WorkerConfig, worktree: string, start: ProfileStart): Promise<void> {
  if (worker.profile === "codex") {
    await openJournal(worktree, { forWrite: true });
    return;
  }
  if (worker.profile !== "claude") return;
  await writeClaudeHooks(worktree, { robotArmy: start.robotArmy, episodeKey: start.episodeKey, sessionId: start.sessionId, ...(start.promptFile ? { promptDir: dirname(start.promptFile) } : {}) });
}

