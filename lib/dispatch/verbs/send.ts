/**
 * `send`: types a message into an interactive worker's terminal, as its owner would at its
 * prompt, then presses Enter: how a question or a permission prompt is answered without
 * attaching (from the dashboard, from a phone). The message is one line of text that can be
 * typed: a control character (an escape sequence, a newline, Ctrl-C) is refused, so nothing
 * beyond the text ever reaches the worker.
 *
 * It reaches only the item's latest session, only while that session is open on this host and
 * its process (the session's holder, by pid and start time) runs, and only through the place its
 * launch marked (the item and this store's markers, on the terminal server its session row
 * recorded; lib/ending/tabs.ts `isOurs`), into the pane or window that process runs in: never a
 * shell the owner split beside the worker. A headless worker (`launcher = "process"`) has no terminal and
 * is refused, as is an ended session. Each send is audited `session.send` with the text's
 * length, never the text: what the owner answers may be private.
 */
import { launcherForTerminal } from "../../boundaries/launchers/select.ts";
import type { Launcher, TabRef, Terminal } from "../../boundaries/launchers/types.ts";
import { PreconditionError } from "../../errors.ts";
import { isOurs } from "../../ending/tabs.ts";
import { auditEffect } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { requireItem } from "../../work-items/queries.ts";
import { latestSession } from "../../work-items/sessions.ts";
import { liveness } from "../../processes.ts";
import { readRecord } from "../../sessions/records.ts";

/** The longest message sent, in characters: an answer, never a file. */
export const SEND_LIMIT = 2000;

/** What a send works with. */
export interface SendDeps {
  store: Store;
  /** Where the sessions' records are: the worker's process is read from its session's. */
  sessionRoot: string;
  /** This machine: a session on another host is typed into there. */
  host: string;
  /** Builds the launcher that reaches a recorded terminal server (default: `launcherForTerminal`). */
  terminalLauncher?: (terminal: Terminal) => Launcher;
}

/** What was typed, and where. */
export interface Sent {
  item: number;
  session: string;
  /** The session's id. */
  sessionId: string;
  /** The window it was typed into (`@3`, a kitty window id). */
  tab: string;
  launcher: Terminal["launcher"];
  /** The message's length in characters. */
  length: number;
}

/**
 * Why `text` cannot be typed at a prompt, or null when it can: empty, longer than SEND_LIMIT, or
 * holding a control character (C0, DEL, C1, and the line and paragraph separators), named by
 * its code point and place.
 */
export function unsendable(text: string): string | null {
  if (text.trim() === "") return "The message is empty: there is nothing to type";
  const length = [...text].length;
  if (length > SEND_LIMIT) return `The message is ${length} characters long; at most ${SEND_LIMIT} are typed at a worker's prompt`;
  const control = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.exec(text);
  if (control) {
    const code = control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    return `The message holds a control character (U+${code} at character ${[...text.slice(0, control.index)].length + 1}): only one line of text that can be typed is sent, never a key like Enter, Escape or Ctrl-C`;
  }
  return null;
}

/**
 * Types `text` into item `id`'s worker and presses Enter. Refused (a PreconditionError, nothing
 * typed) for text that cannot be typed, an item with no open session, a session on another host,
 * a headless worker, and a worker whose window is gone or whose command no longer runs there.
 */
export async function sendToWorker(deps: SendDeps, id: number, text: string): Promise<Sent> {
  return typeIntoWorker(deps, id, text, { kind: "session.send", body: {} });
}

/**
 * How a typing is audited: `session.send` for the owner's own words, `feedback.delivered` for
 * feedback (lib/dispatch/feedback-delivery.ts), with what its body adds, and what is done
 * once the intent is written and before anything is typed (`typing`, given the action's id).
 */
export interface TypingAudit {
  kind: "session.send" | "feedback.delivered";
  body: Record<string, unknown>;
  /** The session meant: refused when the item's latest is another (one started since it was chosen). */
  session?: string;
  typing?: (actionId: string) => void;
}

/** `sendToWorker`, audited as `audit` says: every refusal of it stands. */
export async function typeIntoWorker(deps: SendDeps, id: number, text: string, audit: TypingAudit): Promise<Sent> {
  const why = unsendable(text);
  if (why) throw new PreconditionError(why);
  const item = requireItem(deps.store, id);
  const session = latestSession(deps.store, id);
  if (!session) throw new PreconditionError(`Work item ${id} has had no session: there is no worker to type into`);
  if (audit.session !== undefined && session.id !== audit.session) {
    throw new PreconditionError(`Work item ${id}'s session is now ${session.name}, not the one this was meant for: nothing is typed`);
  }
  if (session.ended_at !== null) {
    const how = session.end_reason ? ` (${session.end_reason}${session.exit_code !== null ? `, exit ${session.exit_code}` : ""})` : "";
    throw new PreconditionError(`The session ${session.name} of work item ${id} ended at ${session.ended_at}${how}: nothing is typed into an ended worker; robot-army resume ${id} starts it again`);
  }
  const terminal = session.terminal;
  if (session.launcher === "process" || terminal?.launcher === "process") {
    throw new PreconditionError(`The worker of work item ${id} runs headless (launcher "process"): it has no terminal to type into`);
  }
  if (session.host !== deps.host) throw new PreconditionError(`The session ${session.name} of work item ${id} runs on host ${session.host}: send from there`);
  if (terminal === null) throw new PreconditionError(`The session ${session.name} of work item ${id} has no terminal on record: where it runs cannot be told, so nothing is typed`);
  const holder = holderOf(deps.sessionRoot, session.id, session.name);
  const launcher = (deps.terminalLauncher ?? ((t: Terminal) => launcherForTerminal(t)))(terminal);
  const tab = await workerTab(deps.store, launcher, id, session.name);
  const sent = await auditEffect(
    deps.store,
    { kind: audit.kind, repo: item.repo, item: id, sessionId: session.id, body: { ...audit.body, session: session.name, tab: tab.id, terminal, length: [...text].length } },
    (actionId) => {
      audit.typing?.(actionId);
      return launcher.sendText(tab, text, holder);
    },
    (outcome) => ({ result: outcome }),
  );
  if (sent === "gone") throw new PreconditionError(`The worker of ${session.name} is no longer in its window (it ended, or the window closed or changed): nothing was typed`);
  return { item: id, session: session.name, sessionId: session.id, tab: tab.id, launcher: terminal.launcher, length: [...text].length };
}

/**
 * The pid of the session's holder, the process its window runs (the worker's own pane is the one
 * running it), while it runs: its record read, and the process checked by pid and start time.
 * Unknown is refused, never taken for running.
 */
function holderOf(sessionRoot: string, id: string, name: string): number {
  let record;
  try {
    record = readRecord(sessionRoot, id);
  } catch (error) {
    throw new PreconditionError(`The record of session ${name} cannot be read (${(error as Error).message}): whether its worker runs cannot be told, so nothing is typed`);
  }
  // A session that ends by itself is reaped as it ends: no record is how an ended worker looks until the daemon's pass reads its exit.
  if (!record) throw new PreconditionError(`The worker of ${name} no longer runs (its session's record is gone: it ended, and the daemon's next pass will say how): nothing is typed`);
  if (!record.holderPid) throw new PreconditionError(`Session ${name} has no process on record: whether its worker runs cannot be told, so nothing is typed`);
  const state = liveness({ pid: record.holderPid, started_at: record.holderStartedAt, start_id: record.holderStartId ?? null });
  if (state === "exited") throw new PreconditionError(`The worker of ${name} no longer runs (its session's process ${record.holderPid} has ended): nothing is typed`);
  if (state !== "running") throw new PreconditionError(`Whether the worker of ${name} still runs cannot be told (its process ${record.holderPid} cannot be checked): nothing is typed`);
  return record.holderPid;
}

/** The newest of the item's places on its recorded server whose worker still runs, or why there is none. */
async function workerTab(store: Store, launcher: Launcher, id: number, name: string): Promise<TabRef> {
  const tabs = await launcher.tabs(id).catch(() => "unknown" as const);
  if (tabs === "unknown") throw new PreconditionError(`The ${launcher.name} server of ${name} cannot be asked for its window: nothing is typed`);
  const ours = tabs.filter((tab) => isOurs(store, id, tab));
  if (ours.length === 0) throw new PreconditionError(`No window of ${name} is left on its ${launcher.name} server (closed by hand?): nothing is typed`);
  const live = ours.filter((tab) => tab.running !== false);
  if (live.length === 0) throw new PreconditionError(`The worker in the window of ${name} no longer runs: nothing is typed`);
  return live.at(-1)!;
}

/** What `send` prints once the message is typed. */
export function describeSent(sent: Sent): string {
  const where = sent.launcher === "tmux" ? `tmux window ${sent.tab}` : `kitty window ${sent.tab}`;
  return `typed ${sent.length} character${sent.length === 1 ? "" : "s"} into ${sent.session} (${where}) for work item ${sent.item}, and pressed Enter`;
}
