/**
 * An agent's own lifecycle keeping its episode: what Claude Code's hooks and Codex's notify
 * program report, mapped to start, busy, idle and end (lib/episodes/lifecycle.ts).
 *
 * A hook never fails its agent (a Claude Code hook that exits 2 blocks what it hooks), so
 * every step here is forgiving: a resumed session's start finds its episode open and marks it
 * busy; a busy or idle report with no episode open opens one first; a report that changes
 * nothing (busy while busy, the idle prompt while idle) leaves the file as it is, so
 * `status_changed_at` stays the moment the status really changed.
 */
import { PreconditionError } from "../errors.ts";
import type { Journal } from "./journal.ts";
import { endEpisode, setStatus, startEpisode } from "./lifecycle.ts";
import { findOpen } from "./open-episodes.ts";

/** The agents whose hooks robot-army reads. */
export type HookAgent = "claude" | "codex";

/** What a hook's event does to the episode; `none` for an event that says nothing of it. */
export type HookAction = "start" | "busy" | "idle" | "end" | "none";

/** What a hook reported, as read from its input. */
export interface HookEvent {
  action: HookAction;
  /** The event's name as the agent gave it, for messages. */
  event: string;
  /** The folder the agent said it works in, when it said. */
  cwd?: string;
  /** The agent's session the event is of, when it said (Claude Code's `session_id`). */
  sessionId?: string;
}

/**
 * Claude Code's hook input (JSON on stdin: `session_id`, `cwd`, `hook_event_name`, and the
 * event's own fields) as an episode action. A Notification counts only as `idle_prompt`: a
 * permission prompt comes in the middle of the work.
 */
export function claudeHookEvent(input: unknown): HookEvent {
  const data = isObject(input) ? input : {};
  const event = typeof data.hook_event_name === "string" ? data.hook_event_name : "";
  const cwd = typeof data.cwd === "string" && data.cwd ? data.cwd : undefined;
  const action: HookAction = (() => {
    switch (event) {
      case "SessionStart":
        return "start";
      case "UserPromptSubmit":
      case "PreToolUse":
        return "busy";
      case "Stop":
        return "idle";
      case "Notification":
        return data.notification_type === "idle_prompt" ? "idle" : "none";
      case "SessionEnd":
        return "end";
      default:
        return "none";
    }
  })();
  const sessionId = typeof data.session_id === "string" && data.session_id ? data.session_id : undefined;
  return { action, event: event || "(no hook_event_name)", ...(cwd ? { cwd } : {}), ...(sessionId ? { sessionId } : {}) };
}

/**
 * Codex's notify argument (`{"type": "agent-turn-complete", "cwd": ..., ...}`) as an episode
 * action: a finished turn is idle. Codex notifies nothing else, so busy is never reported.
 */
export function codexHookEvent(input: unknown): HookEvent {
  const data = isObject(input) ? input : {};
  const event = typeof data.type === "string" ? data.type : "(no type)";
  const cwd = typeof data.cwd === "string" && data.cwd ? data.cwd : undefined;
  return { action: event === "agent-turn-complete" ? "idle" : "none", event, ...(cwd ? { cwd } : {}) };
}

/** Applies a hook's action to the episode under `key`; returns one line saying what it did. */
export async function applyHook(journal: Journal, options: { key: string; action: HookAction; clientPid: number; now: Date }): Promise<string> {
  const { key, action } = options;
  if (action === "none") return `nothing to do for episode ${key}`;
  const open = await findOpen(journal, key);
  if (open && !open.episode) throw new PreconditionError(`Open episode file of "${key}" ${open.problem}`);
  if (action === "end") {
    if (!open) return `episode ${key} is not open; nothing to end`;
    const ended = await endEpisode(journal, { key, outcome: "session-ended", now: options.now });
    return `ended episode ${ended.episode.id} (key ${key})`;
  }
  let episode = open?.episode;
  if (!episode) {
    try {
      episode = await startEpisode(journal, { key, clientPid: options.clientPid, now: options.now });
      if (action === "start" || action === "busy") return `started episode ${episode.id} (key ${key}, busy)`;
    } catch (error) {
      // Opened by another hook meanwhile: go on with that one.
      if (!(error instanceof PreconditionError) || !(await findOpen(journal, key))?.episode) throw error;
    }
  }
  const status = action === "idle" ? "idle" : "busy";
  const current = (await findOpen(journal, key))?.episode;
  if (current?.status === status) return `episode ${current.id} (key ${key}) is already ${status} since ${current.status_changed_at}`;
  const updated = await setStatus(journal, { key, status, now: options.now });
  return `episode ${updated.id} (key ${key}) is ${status} since ${updated.status_changed_at}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
