/**
 * The store's rows of work items' worker sessions (the `sessions` table): one per attempt
 * at an item. This module is their only writer and reader: a row is recorded when a
 * worker is confirmed started, and ended once, with what was observed; the first ending
 * written stands, so a later, different observation of the same end changes nothing.
 */
import type { Terminal } from "../boundaries/launchers/types.ts";
import { parseTerminal } from "../boundaries/launchers/types.ts";
import { isoSeconds, now } from "../clock.ts";
import type { WorkerProfile } from "../config.ts";
import type { Store } from "../store/open.ts";
import { readPast } from "../store/audit.ts";
import type { LogCursor } from "../store/audit.ts";
import { WORK_ITEM_STATES } from "./queries.ts";

/**
 * The states short of `done` and `abandoned`, as an SQL list: named, not "NOT IN" the finished
 * two, so a query takes the index by state and reads none of the finished items.
 */
const UNFINISHED = WORK_ITEM_STATES.filter((state) => state !== "done" && state !== "abandoned").map((state) => `'${state}'`).join(", ");

/** A worker session as it is recorded when it starts. */
export interface SessionRow {
  id: string;
  item: number;
  name: string;
  host: string;
  launcher: string;
  marker: string;
  worktree: string;
  branch: string;
  started_at: string;
  simulated: boolean;
  /** The worker's pid and process start time, as its managed session recorded them (null when not known). */
  pid?: number | null;
  pid_started_at?: string | null;
  /** The terminal server it was launched on, as the launch returned it (null on rows from before it was recorded). */
  terminal?: Terminal | null;
  /** The episode key the worker was given (`episodeKey`); default: the one its attempt implies. */
  episode_key?: string;
  /** The worker profile it was started with (null on rows from before it was recorded: read as the config's). */
  profile?: WorkerProfile | null;
}

/** Why a session row closed (DESIGN "Words": session). */
export type EndReason = "exited" | "crashed" | "killed" | "retired" | "cancelled" | "lost" | "recovered";

/** A session row as stored: the attempt it was, and how it ended (null while open). */
export interface StoredSession extends SessionRow {
  attempt: number;
  /** The key of the episode the worker keeps: where its idleness is read. */
  episode_key: string;
  ended_at: string | null;
  end_reason: EndReason | null;
  exit_code: number | null;
  terminal: Terminal | null;
  profile: WorkerProfile | null;
  /** When the tab sweep found none of its item's tabs left (null until then). */
  tabs_swept_at: string | null;
}

/** What was observed of a session's end besides why: the exit code when there is one, and when (default now). */
export interface Observed {
  code?: number | null;
  at?: string;
}

/**
 * The episode key an attempt's worker is given: `item-<id>` for the first, `item-<id>-<attempt>`
 * after, so a later attempt's episode is never the earlier worker's (whose file may still be open).
 * @example episodeKey(12, 1) // "item-12"; episodeKey(12, 3) // "item-12-3"
 */
export function episodeKey(item: number, attempt: number): string {
  return attempt <= 1 ? `item-${item}` : `item-${item}-${attempt}`;
}

/** Records a started session as the item's next attempt: one more than the attempts on record. */
export function recordSession(store: Store, row: SessionRow): StoredSession {
  const attempt = nextAttempt(store, row.item);
  store.statement(
    `INSERT INTO sessions (id, item, name, host, launcher, marker, worktree, branch, attempt, started_at, simulated, pid, pid_started_at, terminal, episode_key, profile)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.id, row.item, row.name, row.host, row.launcher, row.marker, row.worktree, row.branch, attempt,
    row.started_at || isoSeconds(now()), row.simulated ? 1 : 0, row.pid ?? null, row.pid_started_at ?? null,
    row.terminal ? JSON.stringify(row.terminal) : null,
    row.episode_key ?? episodeKey(row.item, attempt), row.profile ?? null,
  );
  return sessionById(store, row.id)!;
}

/** The attempt number the item's next session will have: one more than its sessions on record. */
export function nextAttempt(store: Store, item: number): number {
  return (store.statement("SELECT count(*) AS n FROM sessions WHERE item = ?").get(item) as { n: number }).n + 1;
}

/**
 * Closes a session row with how it ended; true when this call closed it. A row already
 * closed keeps its first ending (reason, code and time) and this one changes nothing.
 */
export function endSession(store: Store, id: string, reason: EndReason, observed: Observed = {}): boolean {
  const result = store.statement("UPDATE sessions SET ended_at = ?, end_reason = ?, exit_code = ? WHERE id = ? AND ended_at IS NULL")
    .run(observed.at || isoSeconds(now()), reason, observed.code ?? null, id);
  return Number(result.changes) === 1;
}

/** An item's sessions, oldest first. */
export function sessionsOf(store: Store, item: number): StoredSession[] {
  return sessionsOfItems(store, [item]).get(item) ?? [];
}

/** The sessions of each of these items, oldest first, in one query; an item with none is left out. */
export function sessionsOfItems(store: Store, items: readonly number[]): Map<number, StoredSession[]> {
  return byItem(store.statement("SELECT * FROM sessions WHERE item IN (SELECT value FROM json_each(?)) ORDER BY item, attempt, started_at")
    .all(JSON.stringify([...new Set(items)])).map(fromRow));
}

/**
 * Every session of each item that has one open, oldest first, in one query: what the
 * dashboard's `/active` shows (the open rows, and every attempt's branch for the pull
 * requests) without reading the open rows twice.
 */
export function sessionsOfItemsWithOneOpen(store: Store): Map<number, StoredSession[]> {
  return byItem(store.statement(
    "SELECT * FROM sessions WHERE item IN (SELECT item FROM sessions WHERE ended_at IS NULL) ORDER BY item, attempt, started_at",
  ).all().map(fromRow));
}

/** Rows in item order, grouped by item, each item's in the order given. */
function byItem(rows: StoredSession[]): Map<number, StoredSession[]> {
  const grouped = new Map<number, StoredSession[]>();
  for (const row of rows) {
    const list = grouped.get(row.item);
    if (list) list.push(row);
    else grouped.set(row.item, [row]);
  }
  return grouped;
}

/** The item's newest session (its highest attempt), or undefined when none is on record. */
export function latestSession(store: Store, item: number): StoredSession | undefined {
  const row = store.statement("SELECT * FROM sessions WHERE item = ? ORDER BY attempt DESC LIMIT 1").get(item);
  return row ? fromRow(row) : undefined;
}

/** One session by id. */
export function sessionById(store: Store, id: string): StoredSession | undefined {
  const row = store.statement("SELECT * FROM sessions WHERE id = ?").get(id);
  return row ? fromRow(row) : undefined;
}

/**
 * The branches of the sessions of items in these repositories that are not finished, or
 * were done since `doneSince`: one query, however many items, oldest attempt first.
 */
export function trackedSessionBranches(store: Store, repos: readonly string[], doneSince: string): Array<{ id: number; repo: string; branch: string; started_at: string }> {
  return store.statement(
    `SELECT w.id AS id, w.repo AS repo, s.branch AS branch, s.started_at AS started_at
     FROM work_items AS w JOIN sessions AS s ON s.item = w.id
     WHERE w.repo IN (${repos.map(() => "?").join(", ")}) AND (w.state IN (${UNFINISHED}) OR (w.state = 'done' AND w.updated_at >= ?))
     ORDER BY w.id, s.attempt, s.started_at`,
  ).all(...repos, doneSince).map((row) => ({ ...(row as { id: number; repo: string; branch: string; started_at: string }) }));
}

/**
 * The launches of workers (each a `session.launch` outcome that says it started, naming its
 * session) that no session row records, by id: a start a crash cut between its launch and its
 * row (lib/daemon/settle-claims.ts). Every one in the log, or, `since` a cursor, those it has
 * not read and those it must read again; read through the kind index either way.
 */
export function launchesWithoutRow(store: Store, since?: LogCursor): Array<{ id: number; item: number }> {
  const sql = `SELECT id, item FROM audit
     WHERE kind = 'session.launch' AND phase = 'outcome' AND item IS NOT NULL AND json_extract(body, '$.ok') = 1
       AND json_type(body, '$.session_id') = 'text'
       AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = json_extract(audit.body, '$.session_id'))`;
  const rows = since ? readPast(store, since, sql, []) : store.statement(`${sql} ORDER BY id`).all();
  return rows.map((row) => ({ id: Number(row.id), item: Number(row.item) }));
}

/** The rows still open of items in `state` (by default every open row), by item and attempt. */
export function openSessions(store: Store, options: { state?: string } = {}): StoredSession[] {
  const rows = options.state === undefined
    ? store.statement("SELECT * FROM sessions WHERE ended_at IS NULL ORDER BY item, attempt").all()
    : store.statement(
      // From the open rows to their items (CROSS JOIN keeps that order): the other way round reads every done item.
      `SELECT s.* FROM sessions AS s CROSS JOIN work_items AS w ON w.id = s.item
       WHERE s.ended_at IS NULL AND w.state = ? ORDER BY s.item, s.attempt`,
    ).all(options.state);
  return rows.map(fromRow);
}

/**
 * The `done` items whose tabs on this host are still to sweep: a session row of theirs on
 * `host` not yet marked swept, and none of their rows open (on any host). A row of another
 * machine names a terminal server that is not here, so it is that machine's to sweep. Read
 * through the index of unswept rows, so the finished items already swept cost nothing
 * however many the store holds.
 */
export function itemsWithTabsToSweep(store: Store, simulated: boolean, host: string): number[] {
  return store.statement(
    // CROSS JOIN keeps the unswept rows first: the other way round SQLite read every done item for them.
    `SELECT DISTINCT s.item AS item FROM sessions AS s INDEXED BY sessions_tabs_unswept CROSS JOIN work_items AS w ON w.id = s.item
     WHERE s.tabs_swept_at IS NULL AND s.host = ? AND w.state = 'done' AND w.simulated = ?
       AND NOT EXISTS (SELECT 1 FROM sessions AS o WHERE o.item = s.item AND o.ended_at IS NULL)
     ORDER BY s.item`,
  ).all(host, simulated ? 1 : 0).map((row) => (row as { item: number }).item);
}

/**
 * Marks an item's sessions on `host` swept of tabs (the sweep found none left on any of
 * their servers); only rows that are closed, and never another host's, which that host sweeps.
 */
export function markTabsSwept(store: Store, item: number, host: string, at: string = isoSeconds(now())): void {
  store.statement("UPDATE sessions SET tabs_swept_at = ? WHERE item = ? AND host = ? AND tabs_swept_at IS NULL AND ended_at IS NOT NULL").run(at, item, host);
}

function fromRow(row: unknown): StoredSession {
  // node:sqlite rows have a null prototype (the spread gives a plain object), simulated is stored as 0 or 1, and terminal as JSON.
  const r = row as Record<string, unknown>;
  // A row recorded before episode keys were stored: its worker was given item-<id>.
  const key = typeof r.episode_key === "string" ? r.episode_key : `item-${r.item}`;
  return { ...r, simulated: r.simulated === 1, terminal: parseTerminal(r.terminal), episode_key: key } as StoredSession;
}

/**
 * The items in `state` that have at least one session on record, by id; with `unsettled`, only
 * those whose disk is not settled (`work_items.disk_settled_at`), read through the index of those.
 */
export function itemsWithSessions(store: Store, state: string, options: { unsettled?: boolean } = {}): number[] {
  const unsettled = options.unsettled ? " AND w.disk_settled_at IS NULL" : "";
  return (store.statement(
    `SELECT w.id AS id FROM work_items w WHERE w.state = ?${unsettled} AND EXISTS (SELECT 1 FROM sessions s WHERE s.item = w.id) ORDER BY w.id`,
  ).all(state) as Array<{ id: number }>).map((row) => row.id);
}

/** An item's newest session's worktree and branch, with the item's repository, issue and state, and when its disk was settled (null while it is not). */
export interface Checkout {
  path: string;
  item: number;
  repo: string;
  issue: number;
  state: string;
  branch: string;
  settled_at: string | null;
}

const CHECKOUT = `SELECT s.worktree AS path, s.item AS item, w.repo AS repo, w.issue AS issue, w.state AS state, s.branch AS branch, w.disk_settled_at AS settled_at`;
const NEWEST = "s.worktree != '' AND s.attempt = (SELECT max(attempt) FROM sessions WHERE item = s.item)";

/**
 * Each item's newest checkout, by item id; with `unsettled`, only the items whose disk is not
 * settled, read through the index of those (CROSS JOIN keeps that order), however many are.
 */
export function newestCheckouts(store: Store, options: { unsettled?: boolean } = {}): Checkout[] {
  const sql = options.unsettled
    ? `${CHECKOUT} FROM work_items AS w INDEXED BY work_items_disk_unsettled CROSS JOIN sessions AS s ON s.item = w.id
       WHERE w.disk_settled_at IS NULL AND ${NEWEST} ORDER BY s.item`
    : `${CHECKOUT} FROM sessions AS s JOIN work_items AS w ON w.id = s.item WHERE ${NEWEST} ORDER BY s.item`;
  return store.statement(sql).all().map((row) => ({ ...(row as unknown as Checkout) }));
}

/**
 * The newest checkouts of items whose disk is settled that are at one of the paths `at` or
 * below one of `below`, compared as recorded (no link followed): what the worktree root's scan
 * asks of the finished items, and only for the few folders no other item claims.
 */
export function settledCheckoutsNear(store: Store, at: readonly string[], below: readonly string[]): Checkout[] {
  const settled = `w.disk_settled_at IS NOT NULL AND ${NEWEST}`;
  return store.statement(
    `${CHECKOUT} FROM json_each(?) AS p CROSS JOIN sessions AS s ON s.worktree = p.value JOIN work_items AS w ON w.id = s.item WHERE ${settled}
     UNION ${CHECKOUT} FROM json_each(?) AS b CROSS JOIN sessions AS s ON s.worktree > b.value || '/' AND s.worktree < b.value || '0'
       JOIN work_items AS w ON w.id = s.item WHERE ${settled}`,
  ).all(JSON.stringify(at), JSON.stringify(below)).map((row) => ({ ...(row as unknown as Checkout) }));
}

/** The unfinished items (not done or abandoned) no session was ever recorded for, by id. */
export function unfinishedItemsWithoutSessions(store: Store): Array<{ item: number; repo: string; issue: number; state: string; title: string }> {
  return store.statement(
    `SELECT w.id AS item, w.repo AS repo, w.issue AS issue, w.state AS state, w.title AS title FROM work_items AS w
     WHERE w.state IN (${UNFINISHED}) AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.item = w.id) ORDER BY w.id`,
  ).all() as Array<{ item: number; repo: string; issue: number; state: string; title: string }>;
}

/** Whether a session of an item other than `except` worked on `branch` of `repo`. */
export function branchOfAnotherItem(store: Store, repo: string, branch: string, except: number): boolean {
  return store.statement(
    "SELECT 1 FROM sessions AS s JOIN work_items AS w ON w.id = s.item WHERE w.repo = ? AND s.branch = ? AND s.item <> ? LIMIT 1",
  ).get(repo, branch, except) !== undefined;
}

/**
 * The issues of `repo` with a worker on record here: an item at work (dispatching, active,
 * needs_info, awaiting review) or a session row still open; what this host's heartbeat names,
 * so that no other host takes them over should it stop beating with its workers running.
 */
export function issuesAtWork(store: Store, repo: string): number[] {
  const rows = store.statement(
    `SELECT issue FROM work_items WHERE state IN ('dispatching', 'active', 'needs_info', 'awaiting_review') AND repo = ? AND simulated = 0
     UNION SELECT w.issue FROM sessions AS s JOIN work_items AS w ON w.id = s.item WHERE s.ended_at IS NULL AND w.repo = ? AND w.simulated = 0
     ORDER BY 1`,
  ).all(repo, repo) as Array<{ issue: number }>;
  return rows.map((row) => row.issue);
}
