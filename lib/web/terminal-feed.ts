/**
 * A work item's session as the dashboard's terminal emulator shows it, read-only: the
 * managed session's output log (its recent tail, then what is appended), or, for a session
 * whose holder ran in a tmux pane, that pane's screen with its colours, read on the tmux
 * server the session recorded. Nothing is ever written to the session: no keys are sent,
 * no file is written; the log and the pane are only read.
 */
import { open, stat } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { readRecord, sessionFiles } from "../sessions/records.ts";
import type { SessionRecord } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import type { SessionState } from "../sessions/state.ts";
import { capturePane, DEAD_PANE } from "../sessions/terminal-output.ts";
import type { TmuxPane } from "../sessions/terminal-output.ts";
import type { StoredSession } from "../work-items/sessions.ts";

type Env = Record<string, string | undefined>;

/**
 * What a terminal emulator is told: `reset` clears it and writes `text` (the whole screen
 * as it is now), `data` writes `text` after what it shows, `note` is said beside it
 * (nothing to show, or the session ended).
 */
export type TerminalChunk = { kind: "reset"; text: string } | { kind: "data"; text: string } | { kind: "note"; text: string };

/** How much of a log's end the first `reset` shows: a terminal's worth of scrollback, not the whole history. */
export const LOG_TAIL_BYTES = 64 * 1024;

/** How many lines of a pane's scrollback a `reset` holds, besides its screen. */
const PANE_HISTORY_LINES = 1000;

/** The pane is read once every this many polls of the record: a capture runs tmux, a log read does not. */
const PANE_POLLS = 4;

/** The note of a session whose managed record is gone, or not written yet. */
export const NO_RECORD_NOTE = "no record of this session is left";

/**
 * A work item's session as a terminal emulator should show it, until it ends or `signal`
 * is aborted (or the consumer stops reading: that aborts the feed's own polling at once).
 * A headless session's log: first a `reset` with its last 64 KiB (from a line's start),
 * then `data` as it grows, polled every `pollMs` (default 250); a log truncated or replaced
 * gives a fresh `reset`. A session in a tmux pane: a `reset` with the pane's screen
 * (`capture-pane -e`, colours kept) whenever it changes, read only while the server the
 * session recorded runs. A `note` when there is nothing to show (no record yet, the pane
 * gone); once the session ended, its final output, a `note` saying how it ended (from its
 * record's exit, or that its files went as it exited, as a session not kept is reaped), and
 * the feed ends; it ends after its note too when no record is left of a session the row
 * says ended, and at once for a simulated one. Line ends are sent as CR LF: the emulator
 * does not translate them.
 * @example
 * for await (const chunk of terminalFeed(session, { sessionRoot: sessionRoot(), signal })) send(chunk);
 */
export function terminalFeed(
  session: StoredSession,
  options: { sessionRoot: string; signal: AbortSignal; pollMs?: number; env?: Record<string, string | undefined> },
): AsyncIterable<TerminalChunk> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<TerminalChunk> {
      // A generator asked to return while it waits only hears it at its next chunk; aborting its signal wakes it now.
      const stop = new AbortController();
      const signal = AbortSignal.any([options.signal, stop.signal]);
      const chunks = follow(session, { root: options.sessionRoot, signal, pollMs: options.pollMs ?? 250, env: options.env ?? process.env });
      return {
        next: () => chunks.next(),
        return: async () => {
          stop.abort();
          return await chunks.return(undefined);
        },
      };
    },
  };
}

interface FollowOptions {
  root: string;
  signal: AbortSignal;
  pollMs: number;
  env: Env;
}

/** The feed itself: one look at the record every poll, and at the log or pane it names. */
async function* follow(session: StoredSession, options: FollowOptions): AsyncGenerator<TerminalChunk, void, undefined> {
  const { root, signal, pollMs, env } = options;
  if (session.simulated) {
    yield note("this session was simulated: no worker ran, so there is no output to show");
    return;
  }
  const log = new LogFollower(sessionFiles(root, session.id).log);
  const pane = new PaneFollower(env);
  // A note is said once, until something else is shown: a feed polled every 250 ms does not repeat itself.
  let said: string | undefined;
  const say = (chunk: TerminalChunk | undefined): TerminalChunk | undefined => {
    if (chunk?.kind !== "note") {
      if (chunk) said = undefined;
      return chunk;
    }
    if (chunk.text === said) return undefined;
    said = chunk.text;
    return chunk;
  };
  /** The record as last read: once it is gone, the session ended and was reaped (its files removed as it exited). */
  let seen: SessionRecord | undefined;
  try {
    for (let poll = 0; !signal.aborted; poll++) {
      const looked = lookAt(root, session.id);
      if ("problem" in looked || (!looked.record && !seen)) {
        const chunk = say(note("problem" in looked ? looked.problem : NO_RECORD_NOTE));
        if (chunk) yield chunk;
        // A session its row says ended, with no record left, will show nothing more.
        if (!("problem" in looked) && session.ended_at !== null) return;
        await pause(pollMs, signal);
        continue;
      }
      const record = looked.record ?? seen!;
      const state = looked.record ? sessionState(root, looked.record) : "exited";
      const ended = state === "exited" || state === "vanished";
      // An ended session's output is complete: it is read once more, whatever the pane's turn.
      const shown = record.terminal?.kind === "tmux" ? (ended || poll % PANE_POLLS === 0 ? await pane.read(record.terminal) : undefined)
        : record.terminal?.kind === "tty" ? note("this session writes to the terminal it runs in, not to a log or a tmux pane: look there")
        : await log.read();
      const chunk = say(shown);
      if (chunk) yield chunk;
      if (ended) {
        yield note(looked.record ? endingNote(record, state) : "the session ended: its record was removed as it exited, so how it ended is not known here");
        return;
      }
      seen = record;
      await pause(pollMs, signal);
    }
  } finally {
    await log.close();
  }
}

/** The session's record (undefined when there is none), or why it cannot be read now. */
function lookAt(root: string, id: string): { record: SessionRecord | undefined } | { problem: string } {
  try {
    return { record: readRecord(root, id) };
  } catch (error) {
    // Damaged: said, and looked at again on the next poll.
    return { problem: (error as Error).message };
  }
}

/** How the session ended, from its record's exit when it has one. */
function endingNote(record: SessionRecord, state: SessionState): string {
  if (state === "vanished") return "the session ended: its holder is gone and recorded no exit";
  switch (record.ended) {
    case "killed": return "the session ended: it was stopped";
    case "crashed": return `the session ended: its command was ended by ${record.exitSignal ?? "a signal"}`;
    case "abandoned": return "the session ended: it was abandoned (its working directory is gone)";
    case "failed-to-start": return `the session ended: its command could not start${record.startError ? ` (${record.startError})` : ""}`;
    default: return `the session ended: its command exited with code ${record.exitCode ?? "unknown"}`;
  }
}

/**
 * Follows a log file as it grows: its tail first, then each run of appended bytes, decoded
 * by one streaming decoder so a character split across two reads arrives whole. The file is
 * kept open between reads, so what a session wrote just before its log was removed (a
 * session's files go as it exits, unless it is kept) is still read to its end.
 */
class LogFollower {
  #path: string;
  #handle: FileHandle | null = null;
  /** The inode of the open file, and how far into it has been sent. */
  #ino = -1;
  #offset = 0;
  #started = false;
  #decoder = new TextDecoder();

  constructor(path: string) {
    this.#path = path;
  }

  /**
   * What changed since the last read: a `reset` (first read, another file in the log's
   * place, a shorter one, more appended than a tail holds), `data`, or nothing.
   */
  async read(): Promise<TerminalChunk | undefined> {
    let ino: number | undefined;
    try {
      ino = (await stat(this.#path)).ino;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") return note(`the session's output log cannot be read: ${(error as Error).message}`);
    }
    if (ino === undefined) {
      // The log is gone: what the open file still holds, else (no log yet) an empty screen, said once.
      if (this.#handle) return await this.#appended();
      if (this.#started) return undefined;
      this.#started = true;
      return { kind: "reset", text: "" };
    }
    if (!this.#handle || ino !== this.#ino) {
      let handle: FileHandle;
      try {
        handle = await open(this.#path, "r");
      } catch (error) {
        return note(`the session's output log cannot be read: ${(error as Error).message}`);
      }
      await this.close();
      this.#handle = handle;
      this.#ino = (await handle.stat()).ino;
      return await this.#tail();
    }
    return await this.#appended();
  }

  /** Closes the file being followed. */
  async close(): Promise<void> {
    const handle = this.#handle;
    this.#handle = null;
    await handle?.close().catch(() => undefined);
  }

  /** A `reset` with the open file's last 64 KiB, from a line's start when cut. */
  async #tail(): Promise<TerminalChunk> {
    const size = (await this.#handle!.stat()).size;
    const start = Math.max(0, size - LOG_TAIL_BYTES);
    const tail = await readAt(this.#handle!, start, size - start);
    this.#started = true;
    this.#offset = start + tail.length;
    this.#decoder = new TextDecoder();
    return { kind: "reset", text: terminalText(this.#decoder.decode(start > 0 ? fromLineStart(tail) : tail, { stream: true })) };
  }

  /** `data` with what was appended to the open file since the last read; a `reset` when it shrank or grew by more than a tail. */
  async #appended(): Promise<TerminalChunk | undefined> {
    const size = (await this.#handle!.stat()).size;
    if (size < this.#offset || size - this.#offset > LOG_TAIL_BYTES) return await this.#tail();
    if (size === this.#offset) return undefined;
    const bytes = await readAt(this.#handle!, this.#offset, size - this.#offset);
    this.#offset += bytes.length;
    const text = this.#decoder.decode(bytes, { stream: true });
    return text ? { kind: "data", text: terminalText(text) } : undefined;
  }
}

/** Up to `length` bytes from `position`; fewer when the file ends sooner (it was cut meanwhile). */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const buffer = new Uint8Array(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/**
 * A tail cut from the middle of a log, from its first whole line on: no escape sequence or
 * character starts half-way. With no line end in it, from its first whole character.
 */
function fromLineStart(bytes: Uint8Array): Uint8Array {
  const newline = bytes.indexOf(0x0a);
  if (newline !== -1) return bytes.subarray(newline + 1);
  let start = 0;
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
  return bytes.subarray(start);
}

/** A log's text for a terminal that does not translate line ends: LF becomes CR LF (a CR LF stays one). */
function terminalText(text: string): string {
  return text.replace(/\r?\n/g, "\r\n");
}

/** Reads a tmux pane's screen, and says when it changed. */
class PaneFollower {
  #env: Env;
  #last: string | undefined;

  constructor(env: Env) {
    this.#env = env;
  }

  /** A `reset` with the pane's screen when it changed since the last read, a `note` when the pane cannot be read, else nothing. */
  async read(terminal: TmuxPane): Promise<TerminalChunk | undefined> {
    const captured = await capturePane(terminal, { history: PANE_HISTORY_LINES, colours: true }, this.#env);
    if ("unreadable" in captured) {
      this.#last = undefined;
      return note(`nothing to show: ${captured.unreadable}`);
    }
    const text = screenText(captured.text);
    if (text === this.#last) return undefined;
    this.#last = text;
    return { kind: "reset", text };
  }
}

/**
 * A pane's capture as a terminal shows it: its rows joined with CR LF, the screen's blank
 * end and tmux's own "Pane is dead" line (a kept pane's, not the session's) left out.
 */
function screenText(captured: string): string {
  const rows = captured.split("\n");
  const blank = (row: string) => row.replace(SGR, "").trim() === "";
  while (rows.length && (blank(rows.at(-1)!) || DEAD_PANE.test(rows.at(-1)!.replace(SGR, "")))) rows.pop();
  return rows.join("\r\n");
}

/** Colour and style escapes, which `capture-pane -e` puts in rows that show nothing else. */
const SGR = /\x1b\[[0-9;:]*m/g;

function note(text: string): TerminalChunk {
  return { kind: "note", text };
}

/** Waits `ms`, or less when `signal` is aborted meanwhile; never rejects. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
