/**
 * What SQLite does for the statements some code prepares: a test runs the code against a store
 * that notes each SQL text it prepares, and asks SQLite's query plan of each. Test support only.
 *
 * @example
 * assert.equal(fullScans(store, (s) => openSessions(s, { state: "done" })), []);
 * assert.match(queryPlans(store, (s) => openSessions(s, { state: "done" }))[0].steps[0], /sessions_open/);
 */
import type { Store } from "../store/open.ts";

/**
 * The partial indexes whose whole length a pass may read: each holds only rows still to look at
 * (open sessions, sessions whose tabs are not swept, items whose disk is not settled, claims still held).
 */
const SMALL_INDEXES = ["sessions_open", "sessions_tabs_unswept", "work_items_disk_unsettled", "issue_claims_held"];

/** The statements `run` prepares, each with the steps of SQLite's plan for it, in the order first prepared. */
export function queryPlans(store: Store, run: (store: Store) => unknown): Array<{ sql: string; steps: string[] }> {
  const prepared = new Set<string>();
  const noting: Store = Object.assign(Object.create(store) as Store, {
    statement: (sql: string) => {
      prepared.add(sql);
      return store.statement(sql);
    },
  });
  run(noting);
  return [...prepared].map((sql) => ({
    sql, steps: store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((row) => String((row as { detail: string }).detail)),
  }));
}

/**
 * Each step of the query plans of the statements `run` prepares that reads a whole table (or
 * a whole index that is not one of the small partial ones), as `<plan step> (in: <SQL>)`;
 * empty when every read is a search by key or a range.
 */
export function fullScans(store: Store, run: (store: Store) => unknown): string[] {
  return queryPlans(store, run).flatMap(({ sql, steps }) =>
    steps
      .filter((step) => /^SCAN /.test(step) && !/VIRTUAL TABLE/.test(step))
      .filter((step) => !SMALL_INDEXES.some((index) => step.includes(`USING INDEX ${index}`) || step.includes(`USING COVERING INDEX ${index}`)))
      .map((step) => `${step} (in: ${sql.replace(/\s+/g, " ").slice(0, 160)})`)
  );
}
