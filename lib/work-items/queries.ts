/** Reading and creating work items: one GitHub issue robot-army has taken on. */
import { isoSeconds, now } from "../clock.ts";
import { PreconditionError } from "../errors.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";

/** Every state a work item can be in; `done` and `abandoned` are terminal. */
export const WORK_ITEM_STATES = [
  "discovered", "ready", "dispatching", "active", "awaiting_review", "interrupted", "needs_info", "failed", "done", "abandoned",
] as const;

/** A work item's state. */
export type WorkItemState = (typeof WORK_ITEM_STATES)[number];

/** A work item as stored, with a snapshot of its issue. */
export interface WorkItem {
  id: number;
  repo: string;
  issue: number;
  state: WorkItemState;
  reason: string | null;
  title: string;
  body: string;
  author: string;
  labels: string[];
  issue_state: string;
  issue_updated_at: string | null;
  simulated: boolean;
  created_at: string;
  updated_at: string;
}

/** What intake knows of an issue when it first takes it on. */
export interface IssueSnapshot {
  repo: string;
  issue: number;
  title: string;
  body: string;
  author: string;
  labels: string[];
  issue_state: string;
  issue_updated_at: string | null;
}

const COLUMNS = "id, repo, issue, state, reason, title, body, author, labels, issue_state, issue_updated_at, simulated, created_at, updated_at";
const SUMMARY_COLUMNS = COLUMNS.replace("body, ", "");

function fromRow(row: unknown): WorkItem {
  // node:sqlite rows have a null prototype: the spread gives a plain object.
  const r = row as Record<string, unknown>;
  return { ...r, labels: JSON.parse(r.labels as string), simulated: r.simulated === 1 } as WorkItem;
}

/** One item by id. */
export function getItem(store: Store, id: number): WorkItem | undefined {
  const row = store.statement(`SELECT ${COLUMNS} FROM work_items WHERE id = ?`).get(id);
  return row ? fromRow(row) : undefined;
}

/** An item without its issue's body: what a list of many items shows. */
export type ItemSummary = Omit<WorkItem, "body">;

/**
 * Items by id, in one query, without their bodies (the dashboard's rows read them together,
 * and an issue's body can be long); an id with no item is left out.
 */
export function itemsById(store: Store, ids: readonly number[]): Map<number, ItemSummary> {
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  const rows = store.statement(`SELECT ${SUMMARY_COLUMNS} FROM work_items WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(unique));
  return new Map(rows.map(fromRow).map((item) => [item.id, item]));
}

/** The live (not done, not abandoned) item of an issue, if any. */
export function liveItemOf(store: Store, repo: string, issue: number): WorkItem | undefined {
  const row = store.statement(`SELECT ${COLUMNS} FROM work_items WHERE repo = ? AND issue = ? AND state NOT IN ('done', 'abandoned')`).get(repo, issue);
  return row ? fromRow(row) : undefined;
}

/** Items, oldest first; simulated ones only when asked for. */
export function listItems(store: Store, options: { repo?: string; states?: readonly WorkItemState[]; includeSimulated?: boolean } = {}): WorkItem[] {
  const where: string[] = [];
  const params: Array<string | number> = [];
  if (options.repo) {
    where.push("repo = ?");
    params.push(options.repo);
  }
  if (options.states?.length) {
    where.push(`state IN (${options.states.map(() => "?").join(", ")})`);
    params.push(...options.states);
  }
  if (!options.includeSimulated) where.push("simulated = 0");
  const sql = `SELECT ${COLUMNS} FROM work_items${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY id`;
  return store.statement(sql).all(...params).map(fromRow);
}

/** How many items a read command leaves out because they are simulated. */
export function countSimulated(store: Store): number {
  return (store.statement("SELECT count(*) AS n FROM work_items WHERE simulated = 1").get() as { n: number }).n;
}

/**
 * Creates a work item in state `discovered` from an issue, with its `state.work_item`
 * audit record (from null), in one transaction.
 */
export function createItem(store: Store, snapshot: IssueSnapshot, options: { simulated: boolean }): WorkItem {
  return store.transaction(() => {
    const at = isoSeconds(now());
    // An id is never given twice, even after purge-simulated deleted the items that had the highest: its
    // audit record (never purged) names them, and a new item must not inherit their history in the log.
    const row = store.statement(
      `INSERT INTO work_items (id, repo, issue, state, reason, title, body, author, labels, issue_state, issue_updated_at, simulated, created_at, updated_at)
       VALUES ((SELECT coalesce(max(n), 0) + 1 FROM (SELECT max(id) AS n FROM work_items UNION ALL SELECT max(p.value) FROM audit a, json_each(a.body, '$.items') p WHERE a.kind = 'purge.simulated')),
         ?, ?, 'discovered', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
    ).get(
      snapshot.repo, snapshot.issue, "labelled by its author", snapshot.title, snapshot.body, snapshot.author,
      JSON.stringify(snapshot.labels), snapshot.issue_state, snapshot.issue_updated_at, options.simulated ? 1 : 0, at, at,
    );
    const item = fromRow(row);
    appendAudit(store, {
      kind: "state.work_item", repo: item.repo, item: item.id, simulated: item.simulated, at,
      body: { issue: item.issue, from: null, to: "discovered", reason: "labelled by its author" },
    });
    return item;
  });
}

/** Refreshes an item's snapshot of its issue (title, body, labels, state) without changing its state. */
export function refreshSnapshot(store: Store, id: number, snapshot: IssueSnapshot): void {
  store.statement(
    "UPDATE work_items SET title = ?, body = ?, labels = ?, issue_state = ?, issue_updated_at = ? WHERE id = ?",
  ).run(snapshot.title, snapshot.body, JSON.stringify(snapshot.labels), snapshot.issue_state, snapshot.issue_updated_at, id);
}

/** The refusal for an id no work item has. */
export function noSuchItem(named: number | string): PreconditionError {
  return new PreconditionError(`No work item ${named}; "robot-army status" lists them`);
}

/** The work item with this id; none (or no store yet) is a PreconditionError naming `status`. */
export function requireItem(store: Store | undefined, id: number): WorkItem {
  const item = store ? getItem(store, id) : undefined;
  if (!item) throw noSuchItem(id);
  return item;
}
