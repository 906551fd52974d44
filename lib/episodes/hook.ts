/**
 * An agent's own lifecycle keeping its episode: what Claude Code's and Codex's hooks report,
 * mapped to start, busy, idle, needs_info and end (lib/episodes/lifecycle.ts).
 *
 * A hook never fails its agent (a Claude Code hook that exits 2 blocks what it hooks), so
 * every step here is forgiving: a resumed session's start finds its episode open and marks it
 * busy; a busy, idle or needs_info report with no episode open opens one first; a report that
 * changes nothing (busy while busy, the idle prompt while idle, idle while the worker's own
 * question waits for its answer) leaves the file as it is, so `status_changed_at` stays the
 * moment the status really changed. The end of a turn does answer the agent's blocking prompt.
 */
import { isoSeconds } from "../clock.ts";
import { PreconditionError } from "../errors.ts";
import { sha256Hex } from "../sha256.ts";
import { appendEvent } from "./ledger.ts";
import type { Journal } from "./journal.ts";
import { endEpisode, setStatus, startEpisode } from "./lifecycle.ts";
import { findOpen, rewriteOpen } from "./open-episodes.ts";
import type { Episode } from "./open-episodes.ts";

/** The agents whose hooks robot-army reads. */
export type HookAgent = "claude" | "codex";

/** What a hook's event does to the episode; `none` for an event that says nothing of it. */
export type HookAction = "start" | "busy" | "idle" | "needs_info" | "end" | "none";

/** What a hook reported, as read from its input. */
export interface HookEvent {
  action: HookAction;
  /** The event's name as the agent gave it, for messages. */
  event: string;
  /** The folder the agent said it works in, when it said. */
  cwd?: string;
  /** The agent's session the event is of, when it said (Claude Code's `session_id`). */
  sessionId?: string;
  /** What the worker asks its owner, for `needs_info` (Claude Code's notification `message`). */
  reason?: string;
  /** For `idle`: the agent's turn ended (Stop, or Codex's Interrupt), not just a prompt left waiting. */
  turnEnded?: boolean;
  /**
   * For `start`: the agent opened at its prompt, waiting for one (a new session, a resumed or
   * forked one, one just cleared), so its episode is idle until a prompt arrives. A session
   * restarted by compaction is not: that happens in the middle of a turn.
   */
  atPrompt?: boolean;
  /**
   * For `needs_info`: the words are vaguer than a question the agent may already have put
   * (Claude Code's permission notification, which follows its PermissionRequest), so they
   * never replace a question already waiting.
   */
  vague?: boolean;
  /** For a prompt the agent was given (UserPromptSubmit): its text, which the ledger notes (`promptNote`). */
  prompt?: string;
}

/** The start of robot-army's own messages to a worker (lib/dispatch/feedback-message.ts): the ledger keeps their words. */
export const ROBOT_ARMY_PROMPT = "robot-army: ";

/**
 * What the ledger keeps of a prompt a worker was given (event `prompt`): its length and
 * SHA-256, and its words only when robot-army wrote them (feedback it typed in), never the
 * owner's own: what they type may be private, and the hash still tells one prompt from another.
 */
export function promptNote(text: string): Record<string, unknown> {
  const ours = text.startsWith(ROBOT_ARMY_PROMPT);
  return { length: [...text].length, sha256: sha256Hex(text), from: ours ? "robot-army" : "owner", ...(ours ? { text: [...text].slice(0, 2000).join("") } : {}) };
}

/** The longest command or path a permission's words quote; the rest is cut with an ellipsis. */
const PERMISSION_DETAIL_MAX = 200;

/** How an agent is named in the words robot-army quotes from its hooks. */
const AGENT_NAMES: Readonly<Record<HookAgent, string>> = { claude: "Claude Code", codex: "Codex" };

/**
 * What an agent's PermissionRequest asks, in words: the tool and what it would act on (a
 * command, a file, a URL, a pattern), from the hook's `tool_name` and `tool_input`.
 * @example permissionWords("Bash", { command: "npm test" }) // "Claude Code asks permission to run Bash: npm test"
 */
export function permissionWords(tool: unknown, input: unknown, agent: HookAgent = "claude"): string {
  const who = AGENT_NAMES[agent];
  const name = typeof tool === "string" && tool.trim() ? tool.trim() : "a tool";
  const fields = isObject(input) ? input : {};
  const detail = ["command", "file_path", "notebook_path", "path", "url", "pattern", "query"]
    .map((field) => fields[field]).find((value): value is string => typeof value === "string" && value.trim() !== "");
  if (detail === undefined) return `${who} asks permission to use ${name}`;
  const shown = detail.length > PERMISSION_DETAIL_MAX ? `${detail.slice(0, PERMISSION_DETAIL_MAX)}…` : detail;
  return `${who} asks permission to ${name === "Bash" ? "run" : "use"} ${name}: ${shown}`;
}

/** Claude Code's SessionStart sources that open a session waiting at its prompt (all but `compact`, which comes mid-turn). */
const AT_PROMPT_SOURCES = new Set(["startup", "resume", "clear", "fork"]);

/**
 * Claude Code's notifications that mean its worker waits for the owner, with what a
 * notification with no message of its own asks: a tool waiting for permission, a question
 * put to the owner (an MCP server's elicitation form), or a choice only the owner can make
 * (`agent_needs_input`: "Auto mode can't check actions in this session and needs your
 * choice", when auto mode's safety check cannot be reached).
 */
export const CLAUDE_OWNER_NOTIFICATIONS: Readonly<Record<string, string>> = {
  permission_prompt: "Claude Code needs your permission",
  elicitation_dialog: "Claude Code asks you a question",
  agent_needs_input: "Claude Code needs your choice",
};

/**
 * Claude Code's hook input (JSON on stdin: `session_id`, `cwd`, `hook_event_name`, and the
 * event's own fields) as an episode action. Of its Notifications, `idle_prompt` is idle, and a
 * permission prompt, a question or a choice put to the owner (`CLAUDE_OWNER_NOTIFICATIONS`) is
 * `needs_info`, its `message` the reason; any other says nothing of the episode.
 */
export function claudeHookEvent(input: unknown): HookEvent {
  const { data, event, where } = hookFields(input);
  const type = typeof data.notification_type === "string" ? data.notification_type : "";
  const asksOwner = Object.hasOwn(CLAUDE_OWNER_NOTIFICATIONS, type);
  const notified: HookAction = type === "idle_prompt" ? "idle" : asksOwner ? "needs_info" : "none";
  const action: HookAction = Object.hasOwn(SHARED_ACTIONS, event) ? SHARED_ACTIONS[event] : event === "Notification" ? notified : "none";
  const permission = event === "PermissionRequest" ? permissionWords(data.tool_name, data.tool_input) : undefined;
  const reason = permission ?? (action === "needs_info" ? (typeof data.message === "string" && data.message.trim() ? data.message : CLAUDE_OWNER_NOTIFICATIONS[type]) : undefined);
  return {
    action, event: event || "(no hook_event_name)", ...where, ...(reason ? { reason } : {}),
    ...(event === "Stop" ? { turnEnded: true } : {}),
    ...(event === "SessionStart" && AT_PROMPT_SOURCES.has(String(data.source)) ? { atPrompt: true } : {}),
    // Claude Code's permission notification ("Claude needs your permission") follows its PermissionRequest, which said what for.
    ...(event === "Notification" && type === "permission_prompt" ? { vague: true } : {}),
    ...(event === "UserPromptSubmit" && typeof data.prompt === "string" ? { prompt: data.prompt } : {}),
  };
}

/**
 * Codex's hook input (JSON on stdin, with Claude Code's field names: `session_id`, `cwd`,
 * `hook_event_name`, `source`, `tool_name`, `tool_input`) as an episode action. SessionStart
 * opens the episode (Codex sends it with the first prompt, not when it opens); a prompt, a tool
 * about to run or one that has run is busy (PostToolUse answers a permission the owner gave);
 * PermissionRequest is needs_info in its own words; Stop and Interrupt (the owner pressed Esc,
 * after which no Stop comes) end the turn; SessionEnd ends the episode.
 */
export function codexHookEvent(input: unknown): HookEvent {
  const { data, event, where } = hookFields(input);
  const action: HookAction = Object.hasOwn(CODEX_ACTIONS, event) ? CODEX_ACTIONS[event] : "none";
  return {
    action, event: event || "(no hook_event_name)", ...where,
    ...(event === "PermissionRequest" ? { reason: permissionWords(data.tool_name, data.tool_input, "codex") } : {}),
    ...(action === "idle" ? { turnEnded: true } : {}),
    ...(event === "SessionStart" && AT_PROMPT_SOURCES.has(String(data.source)) ? { atPrompt: true } : {}),
    ...(event === "UserPromptSubmit" && typeof data.prompt === "string" ? { prompt: data.prompt } : {}),
  };
}

/** The events both agents send under the same names, with what each does to the episode. */
const SHARED_ACTIONS: Readonly<Record<string, HookAction>> = {
  SessionStart: "start", UserPromptSubmit: "busy", PreToolUse: "busy", Stop: "idle", PermissionRequest: "needs_info", SessionEnd: "end",
};

/** Codex's: the shared ones, a tool that ran (which answers a permission given), and the owner's Esc, after which no Stop comes. */
const CODEX_ACTIONS: Readonly<Record<string, HookAction>> = { ...SHARED_ACTIONS, PostToolUse: "busy", Interrupt: "idle" };

/** What every hook input says the same way: its event's name, and the folder and session it is of, when said. */
function hookFields(input: unknown): { data: Record<string, unknown>; event: string; where: Pick<HookEvent, "cwd" | "sessionId"> } {
  const data = isObject(input) ? input : {};
  const event = typeof data.hook_event_name === "string" ? data.hook_event_name : "";
  const cwd = typeof data.cwd === "string" && data.cwd ? data.cwd : undefined;
  const sessionId = typeof data.session_id === "string" && data.session_id ? data.session_id : undefined;
  return { data, event, where: { ...(cwd ? { cwd } : {}), ...(sessionId ? { sessionId } : {}) } };
}

/**
 * Applies a hook's action to the episode under `key`; returns one line saying what it did. A
 * hook's needs_info is its agent's blocking prompt (`by: "prompt"`), which the end of the
 * agent's turn (`turnEnded`) shows answered.
 */
export async function applyHook(
  journal: Journal,
  options: {
    key: string; action: HookAction; reason?: string; turnEnded?: boolean; atPrompt?: boolean; vague?: boolean; agentSession?: string; clientPid: number; now: Date;
    prompt?: string;
  },
): Promise<string> {
  const line = await applyAction(journal, options);
  // The prompt it was given, once its episode is open and busy with it: what came in, in the worker's own ledger.
  if (options.prompt !== undefined) {
    const episode = (await findOpen(journal, options.key))?.episode;
    if (episode) await appendEvent(journal, { at: isoSeconds(options.now), episode: episode.id, key: options.key, kind: "prompt", data: promptNote(options.prompt) });
  }
  return line;
}

async function applyAction(
  journal: Journal,
  options: {
    key: string; action: HookAction; reason?: string; turnEnded?: boolean; atPrompt?: boolean; vague?: boolean; agentSession?: string; clientPid: number; now: Date;
  },
): Promise<string> {
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
      await noteAgentSession(journal, episode, options.agentSession);
      if ((action === "start" && !options.atPrompt) || action === "busy") return `started episode ${episode.id} (key ${key}, busy)`;
    } catch (error) {
      // Opened by another hook meanwhile: go on with that one.
      if (!(error instanceof PreconditionError) || !(await findOpen(journal, key))?.episode) throw error;
    }
  } else {
    await noteAgentSession(journal, episode, options.agentSession);
  }
  // A session that opens at its prompt waits there; one restarted mid-turn (compaction) works on.
  const status = action === "start" ? (options.atPrompt ? "idle" : "busy") : action;
  const current = (await findOpen(journal, key))?.episode;
  if (current?.status === status && (status !== "needs_info" || options.vague)) return statusLine(current, false);
  const { episode: updated, changed } = await setStatus(journal, { key, status, reason: options.reason, by: "prompt", turnEnded: options.turnEnded, now: options.now });
  return statusLine(updated, changed);
}

/**
 * Notes the agent's own session id (its transcript's) on the episode when it is not the
 * worker's id robot-army gave it, so `show` can name the transcript a resume by hand needs.
 * `agentSession` is passed only when the two differ.
 */
async function noteAgentSession(journal: Journal, episode: Episode, agentSession: string | undefined): Promise<void> {
  if (agentSession === undefined || episode.agent_session_id === agentSession) return;
  const current = (await findOpen(journal, episode.key))?.episode;
  if (current?.id !== episode.id) return;
  await rewriteOpen(journal, { ...current, agent_session_id: agentSession });
}

/**
 * What a status change did, in one line: the status since when, or, when nothing changed,
 * that it already was (a question still waiting for its answer, which idle does not give).
 * @example statusLine(episode, true) // "episode 7c9e… (key item-3) is busy since 2026-01-15T10:31:00Z"
 */
export function statusLine(episode: Episode, changed: boolean): string {
  const named = `episode ${episode.id} (key ${episode.key})`;
  if (episode.status !== "needs_info") return `${named} is ${changed ? "" : "already "}${episode.status} since ${episode.status_changed_at}`;
  const asks = `needs_info since ${episode.status_changed_at}: ${episode.needs_info_reason}`;
  return changed ? `${named} is ${asks}` : `${named} is still ${asks} (busy answers it)`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
