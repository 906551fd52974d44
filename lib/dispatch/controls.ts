/**
 * The owner's brakes on dispatch, kept in the store so they outlive any process: the
 * pause (nothing new starts anywhere) and holds (one item, or every item of one
 * repository, is left alone). Each change is one transaction with its `control.*` audit
 * record; setting what is already set changes nothing and records nothing.
 */
import { nowIso } from "../clock.ts";
import { UsageError } from "../errors.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { getItem, requireItem } from "../work-items/queries.ts";
import { parseItemId } from "../work-items/argument.ts";
import { printable } from "../printable.ts";

/** The pause as stored: when it was set and why. */
export interface Pause {
  since: string;
  reason: string | null;
}

/** One hold: on an item (then `repo` is null) or on a repository (then `item` is null). */
export interface Hold {
  id: number;
  item: number | null;
  repo: string | null;
  reason: string | null;
  set_at: string;
}

/** What a hold is on: an item id, or a repository's `owner/name`. */
export type HoldTarget = { item: number } | { repo: string };

/** The result of setting or clearing a control: whether anything changed, and what is in force now. */
export interface ControlChange<T> {
  changed: boolean;
  /** The pause or hold now in force (or the one just cleared). */
  current: T;
}

const PAUSED = "paused";
const REPO_NAME = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** The pause in force, or undefined when dispatch runs. */
export function pauseState(store: Store): Pause | undefined {
  const row = store.statement("SELECT value, set_at FROM controls WHERE key = ?").get(PAUSED) as
    | { value: string | null; set_at: string }
    | undefined;
  return row ? { since: row.set_at, reason: row.value } : undefined;
}

/** The pause in a sentence: `paused since T (reason): no worker session is dispatched until "robot-army unpause"`. */
export function describePause(pause: Pause): string {
  return `paused since ${pause.since}${reasonText(pause.reason)}: no worker session is dispatched until "robot-army unpause"`;
}

/** A pause's or hold's reason as it follows what it explains, ` (release freeze)`, its control characters escaped; nothing when there is none. */
export function reasonText(reason: string | null | undefined): string {
  return reason ? ` (${printable(reason)})` : "";
}

/** Why a held item waits: the hold, its reason, and how to lift it. */
export function describeWait(hold: Hold): string {
  const why = reasonText(hold.reason);
  return hold.item !== null
    ? `the item is held${why}; "robot-army unhold ${hold.item}" lets it go`
    : `repository ${hold.repo} is held${why}; "robot-army unhold --repo ${hold.repo}" lets it go`;
}

/** Whether dispatch is paused. */
export function isPaused(store: Store): boolean {
  return pauseState(store) !== undefined;
}

/**
 * Pauses dispatch until `unpause`, durably; audited as `control.pause`. Pausing again keeps
 * the first pause and its reason.
 */
export function pause(store: Store, options: { reason?: string } = {}): ControlChange<Pause> {
  return store.transaction(() => {
    const existing = pauseState(store);
    if (existing) return { changed: false, current: existing };
    const at = nowIso();
    const reason = options.reason ?? null;
    store.statement("INSERT INTO controls (key, value, set_at) VALUES (?, ?, ?)").run(PAUSED, reason, at);
    appendAudit(store, { kind: "control.pause", at, body: withReason({}, reason) });
    return { changed: true, current: { since: at, reason } };
  });
}

/** Lets dispatch run again; audited as `control.unpause`. Undefined when it was not paused. */
export function unpause(store: Store): ControlChange<Pause> | undefined {
  return store.transaction(() => {
    const existing = pauseState(store);
    if (!existing) return undefined;
    store.statement("DELETE FROM controls WHERE key = ?").run(PAUSED);
    appendAudit(store, { kind: "control.unpause", body: withReason({ paused_since: existing.since }, existing.reason) });
    return { changed: true, current: existing };
  });
}

/**
 * Holds an item or a repository; audited as `control.hold`. An item must exist; a
 * repository is any `owner/name`. Holding what is held keeps the first hold.
 * @example hold(store, { repo: "demo/widgets" }, { reason: "CI is down" })
 */
export function hold(store: Store, target: HoldTarget, options: { reason?: string } = {}): ControlChange<Hold> {
  checkTarget(store, target);
  return store.transaction(() => {
    const existing = holdOn(store, target);
    if (existing) return { changed: false, current: existing };
    const at = nowIso();
    const reason = options.reason ?? null;
    const row = store.statement(`INSERT INTO holds (item, repo, reason, set_at) VALUES (?, ?, ?, ?) RETURNING ${COLUMNS}`)
      .get(itemOf(target), repoOf(target), reason, at);
    appendAudit(store, { kind: "control.hold", at, ...subjects(store, target), body: withReason({}, reason) });
    return { changed: true, current: fromRow(row) };
  });
}

/** Lifts the hold on an item or a repository; audited as `control.unhold`. Undefined when there was none. */
export function unhold(store: Store, target: HoldTarget): ControlChange<Hold> | undefined {
  checkTarget(store, target);
  return store.transaction(() => {
    const existing = holdOn(store, target);
    if (!existing) return undefined;
    store.statement("DELETE FROM holds WHERE id = ?").run(existing.id);
    appendAudit(store, { kind: "control.unhold", ...subjects(store, target), body: withReason({ held_since: existing.set_at }, existing.reason) });
    return { changed: true, current: existing };
  });
}

/** Every hold, repositories first, then items, each oldest first. */
export function listHolds(store: Store): Hold[] {
  const sql = `SELECT ${COLUMNS} FROM holds ORDER BY item IS NOT NULL, set_at, id`;
  return store.statement(sql).all().map(fromRow);
}

/** The hold that keeps an item of `repo` from dispatch (its repository's first), or undefined. */
export function findHold(store: Store, item: number, repo: string): Hold | undefined {
  return holdOn(store, { repo }) ?? holdOn(store, { item });
}

/** Whether an item of `repo` is held, by itself or through its repository. */
export function isHeld(store: Store, item: number, repo: string): boolean {
  return findHold(store, item, repo) !== undefined;
}

/** Reads `<id>` or `--repo R` as a hold target, as `hold` and `unhold` take them. */
export function parseHoldTarget(id: string | undefined, repo: string | undefined): HoldTarget {
  if (id !== undefined && repo !== undefined) throw new UsageError("Give a work item id or --repo, not both");
  if (repo !== undefined) {
    if (!REPO_NAME.test(repo)) throw new UsageError(`--repo "${repo}" must be owner/name, e.g. demo/widgets`);
    return { repo };
  }
  if (id === undefined) throw new UsageError("Give a work item id or --repo owner/name");
  return { item: parseItemId(id) };
}

/** How a hold reads in a sentence: `item 3 (demo/widgets#7)` or `repository demo/widgets`. */
export function describeHold(store: Store, hold: Pick<Hold, "item" | "repo">): string {
  if (hold.repo !== null) return `repository ${hold.repo}`;
  const item = getItem(store, hold.item!);
  return item ? `item ${hold.item} (${item.repo}#${item.issue})` : `item ${hold.item}`;
}

const COLUMNS = "id, item, repo, reason, set_at";

function holdOn(store: Store, target: HoldTarget): Hold | undefined {
  const row = "item" in target
    ? store.statement(`SELECT ${COLUMNS} FROM holds WHERE item = ?`).get(target.item)
    : store.statement(`SELECT ${COLUMNS} FROM holds WHERE repo = ?`).get(target.repo);
  return row ? fromRow(row) : undefined;
}

function checkTarget(store: Store, target: HoldTarget): void {
  if ("item" in target) requireItem(store, target.item);
}

function subjects(store: Store, target: HoldTarget): { item?: number; repo: string } {
  if ("repo" in target) return { repo: target.repo };
  return { item: target.item, repo: getItem(store, target.item)!.repo };
}

/** An audit body with the reason when one was given (the log shows no `reason=null`). */
function withReason(body: Record<string, unknown>, reason: string | null): Record<string, unknown> {
  return reason === null ? body : { ...body, reason };
}

function itemOf(target: HoldTarget): number | null {
  return "item" in target ? target.item : null;
}

function repoOf(target: HoldTarget): string | null {
  return "repo" in target ? target.repo : null;
}

function fromRow(row: unknown): Hold {
  // node:sqlite rows have a null prototype; a hold is a plain object.
  return { ...(row as Hold) };
}
