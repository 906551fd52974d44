/**
 * Whether a live session works for a work item, from the session root: a record tagged
 * with the item and this store, or one whose working directory is the item's worktree,
 * judged by its holder's pid and start time, and when the holder is gone or recorded the
 * command's exit, by every process the command started in its process group, each by pid
 * and start time (never a process name). A record that cannot be read (it may be this
 * item's), or a session whose holder or command cannot be checked, makes the answer
 * "unknown", which refuses like "live" does.
 */
import { existsSync } from "node:fs";
import { samePath } from "../../same-path.ts";
import { scanRecords } from "../../sessions/records.ts";
import type { SessionRecord } from "../../sessions/records.ts";
import { workerRuns } from "../../sessions/state.ts";
import type { Store } from "../../store/open.ts";
import { ITEM_TAG, STORE_TAG } from "../capacity.ts";

/** What the session root says about an item's sessions. */
export interface LiveAnswer {
  /** true: one runs (or is starting); "unknown": one cannot be checked; false: none runs. */
  live: boolean | "unknown";
  /** The session that runs (or cannot be checked), when there is one. */
  session: SessionRecord | null;
  /** A session record file that cannot be read, when that is why the answer is "unknown". */
  unreadable?: string;
}

/** The live session of an item, or of its worktree; "unknown" when the root or a holder cannot be read. */
export function liveSessionOf(store: Store, sessionRoot: string, item: number, worktree: string | null): LiveAnswer {
  let records: SessionRecord[];
  try {
    if (!existsSync(sessionRoot)) return { live: false, session: null };
    const scanned = scanRecords(sessionRoot);
    if (scanned.unreadable.length) return { live: "unknown", session: null, unreadable: scanned.unreadable[0].file };
    records = scanned.records;
  } catch {
    return { live: "unknown", session: null };
  }
  let unknown: SessionRecord | null = null;
  for (const record of records) {
    if (!belongs(store, record, item, worktree)) continue;
    const runs = workerRuns(sessionRoot, record);
    if (runs === true) return { live: true, session: record };
    if (runs === "unknown") unknown ??= record;
  }
  return unknown ? { live: "unknown", session: unknown } : { live: false, session: null };
}

/** Says why a live answer refuses, in the owner's words. */
export function describeLive(answer: LiveAnswer, item: number): string {
  const name = answer.session ? ` "${answer.session.name}" (id ${answer.session.id})` : "";
  if (answer.live === true) return `Work item ${item}: session${name} is still running in its worktree`;
  if (answer.unreadable) {
    return `Work item ${item}: session record "${answer.unreadable}" cannot be read, so whether a session of it still runs is unknown and nothing is done. ` +
      `Once you know none runs ("robot-army session ls" lists the record as unreadable), move that file out of the session root and try again`;
  }
  return `Work item ${item}: whether a session${name} still runs cannot be checked, so nothing is done`;
}

function belongs(store: Store, record: SessionRecord, item: number, worktree: string | null): boolean {
  const tags = record.tags ?? {};
  if (tags[ITEM_TAG] === String(item) && (tags[STORE_TAG] === undefined || tags[STORE_TAG] === store.path)) return true;
  return worktree !== null && samePath(record.cwd, worktree);
}

