/**
 * The ledger: `.ai/local/state/ledger.jsonl`, one JSON event per line, each stamped with
 * the episode it belongs to. Lines are only ever appended, each in one write.
 */
import { existsSync } from "node:fs";
import { appendLine } from "../atomic.ts";
import { parseTimestamp } from "../clock.ts";
import { describeProblem, validatorFor } from "../schema.ts";
import type { Journal } from "./journal.ts";
import { readJournalFile, refuseLinks } from "./_journal-file.ts";

/** One ledger event. */
export interface LedgerEvent {
  at: string;
  episode: string;
  key: string;
  kind: string;
  data: Record<string, unknown>;
}

/** What reading the ledger found: the events, and the lines it could not read. */
export interface LedgerContents {
  events: LedgerEvent[];
  /** Lines that are not valid events; `episode` is set when the line still names one. */
  unreadable: Array<{ line: number; episode?: string }>;
}

/** Appends one event after checking it against `schema/ledger-event.schema.json`. */
export async function appendEvent(journal: Journal, event: LedgerEvent): Promise<void> {
  const problems = (await validatorFor("ledger-event"))(event);
  if (problems.length) throw new TypeError(`Ledger event "${event.kind}" is not valid: ${problems.map(describeProblem).join("; ")}`);
  // Field order puts `at` and `episode` first, so a line cut short by a crash still says whose it was.
  const { at, episode, key, kind, data } = event;
  refuseLinks(journal, journal.ledgerFile);
  appendLine(journal.ledgerFile, JSON.stringify({ at, episode, key, kind, data }));
}

/**
 * How deep a ledger line's JSON may nest. Reading, validating and printing a value all
 * recurse, and a 20,000-deep line overflows the stack; no event a worker means is that deep.
 */
export const MAX_LEDGER_DEPTH = 64;

/** How deep a JSON text nests, counting brackets outside its strings. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{" || char === "[") deepest = Math.max(deepest, ++depth);
    else if (char === "}" || char === "]") depth--;
  }
  return deepest;
}

const EPISODE_IN_LINE = /"episode"\s*:\s*"([0-9a-f-]{36})"/;

/** Reads every line of the ledger; a missing ledger is an empty one, a symbolic link a JournalLinkError. */
export async function readLedger(journal: Journal): Promise<LedgerContents> {
  refuseLinks(journal, journal.ledgerFile);
  if (!existsSync(journal.ledgerFile)) return { events: [], unreadable: [] };
  const validate = await validatorFor("ledger-event");
  const contents: LedgerContents = { events: [], unreadable: [] };
  const lines = readJournalFile(journal, journal.ledgerFile).split("\n");
  lines.forEach((text, index) => {
    if (!text.trim()) return;
    let value: unknown;
    try {
      value = jsonDepth(text) <= MAX_LEDGER_DEPTH ? JSON.parse(text) : undefined;
    } catch {
      value = undefined;
    }
    if (value !== undefined && validate(value).length === 0 && parseTimestamp((value as LedgerEvent).at)) {
      contents.events.push(value as LedgerEvent);
    } else {
      contents.unreadable.push({ line: index + 1, episode: EPISODE_IN_LINE.exec(text)?.[1] });
    }
  });
  return contents;
}

/** The newest sign of life each episode left in the ledger, or "unreadable" when a line of it cannot be read. */
export function newestEventByEpisode(contents: LedgerContents): Map<string, Date | "unreadable"> {
  const newest = new Map<string, Date | "unreadable">();
  for (const event of contents.events) {
    const at = parseTimestamp(event.at)!;
    const seen = newest.get(event.episode);
    if (seen === "unreadable") continue;
    if (!seen || at > seen) newest.set(event.episode, at);
  }
  for (const { episode } of contents.unreadable) if (episode) newest.set(episode, "unreadable");
  return newest;
}
