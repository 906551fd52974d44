/**
 * Keeps: the owner's "do not end this one" on a work item. While a `done` item is kept and
 * its current session (the latest attempt's row) is open, the pass does not retire its
 * worker and does not close its tab; a kept session holds its capacity slot. That is all a
 * keep does: placing or releasing one starts, stops and signals nothing, so it works with
 * the daemon stopped and takes effect on the next pass.
 *
 * A keep may be placed on an item in any state and waits for `done`. It never expires and
 * is not cleared when the session ends: a keep whose session is gone is inert (it holds no
 * slot and blocks nothing) until `unkeep`. It covers the item's current session only, never
 * an earlier attempt's. Placing and releasing are audited facts (`keep.placed`,
 * `keep.released`) in the same transaction as the row. The CLI (`keep`, `unkeep`, `keeps`)
 * and, later, the web dashboard call these.
 *
 * @example
 * placeKeep(store, 3, { worker: config.worker }); // before the merge: the worker outlives the issue closing
 * keptSession(store, 3); // what retirement and the tab sweep leave alone
 * releaseKeep(store, 3); // back to the ordinary rules
 */
import { isoSeconds, now } from "../clock.ts";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import { appendAudit } from "../store/audit.ts";
import { resumeCommand } from "../worker-profiles.ts";
import type { Store } from "../store/open.ts";
import { getItem, requireItem } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { latestSession } from "../work-items/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";

/** One keep as stored. */
export interface Keep {
  item: number;
  placed_at: string;
}

/** A keep in force with what it covers: its item, and the item's current session when that row is open. */
export interface KeepEntry extends Keep {
  repo: string;
  issue: number;
  state: WorkItem["state"];
  /** The item's current session while its row is open; null is `no live session` (the keep is inert). */
  session: { id: string; name: string; attempt: number } | null;
}

/** What placing a keep did: placed now, or found already in force. */
export interface PlacedKeep {
  placed: boolean;
  keep: KeepEntry;
}

/** What `placeKeep` reads: the worker config, for the resume command a refusal prints. */
export interface KeepDeps {
  worker: Config["worker"];
}

/**
 * Places a keep on an item (audited `keep.placed`), or finds it already placed. Refused
 * (PreconditionError) on an `abandoned` item, which never becomes done, and on a `done`
 * item whose current session is not open, where the refusal prints how to resume its transcript.
 */
export function placeKeep(store: Store, itemId: number, deps: KeepDeps): PlacedKeep {
  return store.transaction(() => {
    const item = requireItem(store, itemId);
    const known = keepOf(store, itemId);
    if (known) return { placed: false, keep: entryOf(store, known) };
    const session = currentOpenSession(store, itemId);
    if (item.state === "abandoned") {
      throw new PreconditionError(
        `Item ${itemId} (${item.repo}#${item.issue}) is abandoned: it never becomes done, so a keep could never take effect; its worker is left running, and "robot-army cancel ${itemId}" ends it`,
      );
    }
    if (item.state === "done" && !session) throw new PreconditionError(finishedRefusal(store, item, deps));
    const keep = { item: itemId, placed_at: isoSeconds(now()) };
    store.statement("INSERT INTO keeps (item, placed_at) VALUES (?, ?)").run(keep.item, keep.placed_at);
    appendAudit(store, {
      kind: "keep.placed", repo: item.repo, item: itemId, sessionId: session?.id, simulated: item.simulated,
      body: { state: item.state, session: session?.id ?? null },
    });
    return { placed: true, keep: entryOf(store, keep) };
  });
}

/** Releases an item's keep (audited `keep.released`) and returns what it was; undefined when the item was not kept. */
export function releaseKeep(store: Store, itemId: number): KeepEntry | undefined {
  return store.transaction(() => {
    const item = requireItem(store, itemId);
    const known = keepOf(store, itemId);
    if (!known) return undefined;
    const entry = entryOf(store, known);
    store.statement("DELETE FROM keeps WHERE item = ?").run(itemId);
    appendAudit(store, {
      kind: "keep.released", repo: item.repo, item: itemId, sessionId: entry.session?.id, simulated: item.simulated,
      body: { placed_at: known.placed_at, session: entry.session?.id ?? null },
    });
    return entry;
  });
}

/** The keep on one item, with its item's current session, or undefined when it is not kept. */
export function keepOfItem(store: Store, itemId: number): KeepEntry | undefined {
  const known = keepOf(store, itemId);
  return known ? entryOf(store, known) : undefined;
}

/** Every keep in force, oldest first, each with its item's current session or null (`no live session`). */
export function listKeeps(store: Store): KeepEntry[] {
  return store.statement("SELECT item, placed_at FROM keeps ORDER BY placed_at, item").all()
    .map((row) => entryOf(store, { ...(row as unknown as Keep) }));
}

/**
 * The session an item's keep covers: the item's current session (its latest attempt) when
 * the item is kept and that row is open, else undefined. An earlier attempt's session is
 * never covered, so retirement and the tab sweep treat it as if there were no keep.
 */
export function keptSession(store: Store, itemId: number): StoredSession | undefined {
  return keepOf(store, itemId) ? currentOpenSession(store, itemId) : undefined;
}

/** One keep in words: its item and state, and the session it covers or `no live session`. */
export function describeKeep(keep: KeepEntry): string {
  const what = `item ${keep.item} (${keep.repo}#${keep.issue}, ${keep.state})`;
  const waits = keep.state === "done" ? "" : "; it waits for done";
  return keep.session ? `${what}: ${keep.session.name} (${keep.session.id}) is not retired while kept${waits}` : `${what}: no live session${waits}`;
}

function keepOf(store: Store, itemId: number): Keep | undefined {
  const row = store.statement("SELECT item, placed_at FROM keeps WHERE item = ?").get(itemId);
  return row ? { ...(row as unknown as Keep) } : undefined;
}

function currentOpenSession(store: Store, itemId: number): StoredSession | undefined {
  const current = latestSession(store, itemId);
  return current && current.ended_at === null ? current : undefined;
}

function entryOf(store: Store, keep: Keep): KeepEntry {
  // The keeps table refers to work_items, so the item is on record.
  const item = getItem(store, keep.item)!;
  const session = currentOpenSession(store, keep.item);
  return {
    ...keep, repo: item.repo, issue: item.issue, state: item.state,
    session: session ? { id: session.id, name: session.name, attempt: session.attempt } : null,
  };
}

/** Why a keep on a finished item with no session open is refused, and how to go back to its transcript. */
function finishedRefusal(store: Store, item: WorkItem, deps: KeepDeps): string {
  const head = `Item ${item.id} (${item.repo}#${item.issue}) is done and no session of it is open, so a keep has nothing to cover`;
  const last = latestSession(store, item.id);
  if (!last) return `${head}; no session of it was ever started`;
  // As the profile it was started with brings it back (the config's for rows from before that was recorded).
  const resume = resumeCommand({ ...deps.worker, profile: last.profile ?? deps.worker.profile }, last.id);
  return resume
    ? `${head}; to go back to its transcript, run: ${resume}`
    : `${head}; its last session was ${last.name} (${last.id}), and its worker (${deps.worker.binary}) has no resume command`;
}
