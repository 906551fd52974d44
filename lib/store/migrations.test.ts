import { test } from "uvu";
import * as assert from "uvu/assert";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { latestCleanup, recordCleanup, worktreeGone } from "../cleanup/records.ts";
import type { CleanupState, NewCleanupRecord } from "../cleanup/records.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { makeItem, withStore } from "../testing/items.ts";
import { appendAudit } from "./audit.ts";
import { MIGRATIONS, migrate } from "./migrations.ts";
import type { Store } from "./open.ts";

/** The migration that settles disk and indexes the idle pass's reads (the newest one when it was written). */
const SETTLED = MIGRATIONS.findIndex((m) => m.name === "settled disk, and the indexes an idle pass reads by");

function decision(item: number, state: CleanupState, options: { simulated?: boolean; at?: string } = {}): NewCleanupRecord {
  const gone = state === "done" || state === "branch_retained";
  return {
    item, state, reason: "test", worktree_path: `/w/${item}`, branch: `b-${item}`, worktree: options.simulated ? "simulated" : gone ? "removed" : "kept",
    branch_outcome: options.simulated ? "simulated" : state === "done" ? "deleted" : "kept", proof: null, tip: null, bundle: null, restore: null,
    by: "pass", simulated: options.simulated ?? false, at: options.at ?? "2026-01-15T10:00:00Z",
  };
}

function settledAt(store: Store, item: number): string | null {
  return (store.statement("SELECT disk_settled_at AS at FROM work_items WHERE id = ?").get(item) as { at: string | null }).at;
}

/** The column says what the item's latest record says, as every reader of a cleanup state reads it. */
function assertAgrees(store: Store, item: number): void {
  assert.is(settledAt(store, item) !== null, worktreeGone(latestCleanup(store, item)), `item ${item}: disk_settled_at and its latest cleanup record agree`);
}

test("migration step names are unique, and the settled-disk step is there", () => {
  assert.is(new Set(MIGRATIONS.map((m) => m.name)).size, MIGRATIONS.length);
  assert.ok(SETTLED > 0);
});

test("each kind of cleanup record sets or clears disk_settled_at: a real done or branch_retained sets it, a later retained, skipped or simulated one clears it", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 1, state: "done" }).id;
    assert.is(settledAt(store, item), null, "no record: not settled");
    const steps: Array<[CleanupState, { simulated?: boolean; at: string }, string | null]> = [
      ["skipped", { at: "2026-01-15T10:00:00Z" }, null],
      ["done", { at: "2026-01-15T10:01:00Z" }, "2026-01-15T10:01:00Z"],
      ["retained", { at: "2026-01-15T10:02:00Z" }, null],
      ["branch_retained", { at: "2026-01-15T10:03:00Z" }, "2026-01-15T10:03:00Z"],
      ["skipped", { at: "2026-01-15T10:04:00Z" }, null],
      ["done", { at: "2026-01-15T10:05:00Z", simulated: true }, null],
      ["branch_retained", { at: "2026-01-15T10:06:00Z", simulated: true }, null],
      ["done", { at: "2026-01-15T10:07:00Z" }, "2026-01-15T10:07:00Z"],
      ["done", { at: "2026-01-15T10:08:00Z", simulated: true }, null],
    ];
    for (const [state, options, expected] of steps) {
      recordCleanup(store, decision(item, state, options));
      assert.is(settledAt(store, item), expected, `after a ${options.simulated ? "simulated " : ""}${state} record`);
      assertAgrees(store, item);
    }
  }));

test("deleting a cleanup record settles the item by what is left: the settling record gone, it is not settled, unless the one before settled it", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 1, state: "done" }).id;
    const other = makeItem(store, { issue: 2, state: "done" }).id;
    recordCleanup(store, decision(other, "done", { at: "2026-01-15T09:00:00Z" }));
    const retained = recordCleanup(store, decision(item, "retained", { at: "2026-01-15T10:00:00Z" }));
    const done = recordCleanup(store, decision(item, "done", { at: "2026-01-15T10:01:00Z" }));
    assert.is(settledAt(store, item), "2026-01-15T10:01:00Z");
    store.statement("DELETE FROM cleanups WHERE id = ?").run(done.id);
    assert.is(settledAt(store, item), null, "the retained record is the latest again");
    assertAgrees(store, item);
    store.statement("DELETE FROM cleanups WHERE id = ?").run(retained.id);
    assert.is(settledAt(store, item), null, "no record left");
    const first = recordCleanup(store, decision(item, "done", { at: "2026-01-15T11:00:00Z" }));
    const simulated = recordCleanup(store, decision(item, "done", { at: "2026-01-15T11:01:00Z", simulated: true }));
    assert.is(settledAt(store, item), null);
    store.statement("DELETE FROM cleanups WHERE id = ?").run(simulated.id);
    assert.is(settledAt(store, item), first.at, "the real done record is the latest again");
    assertAgrees(store, item);
    // A record changed in place (nothing does, but the column must not drift if something did).
    store.statement("UPDATE cleanups SET state = 'retained' WHERE id = ?").run(first.id);
    assert.is(settledAt(store, item), null);
    assert.is(settledAt(store, other), "2026-01-15T09:00:00Z", "another item's records are not its own");
  }));

test("the migration settles the items whose latest record already says their disk is settled, and no other", () =>
  withTempDir((dir) => {
    const db = new DatabaseSync(join(dir, "store.db"));
    try {
      migrate(db, "store.db", MIGRATIONS.slice(0, SETTLED));
      const item = db.prepare(
        `INSERT INTO work_items (repo, issue, state, title, body, author, issue_state, created_at, updated_at)
         VALUES ('demo/widgets', ?, 'done', 't', 'b', 'owner', 'closed', '2026-01-15T09:00:00Z', '2026-01-15T09:00:00Z') RETURNING id`,
      );
      const ids = [1, 2, 3, 4, 5].map((issue) => (item.get(issue) as { id: number }).id);
      const record = db.prepare(
        `INSERT INTO cleanups (item, state, reason, worktree_path, branch, worktree, branch_outcome, by, simulated, at)
         VALUES (?, ?, 'r', '/w', 'b', 'removed', 'deleted', 'pass', ?, ?)`,
      );
      record.run(ids[0], "done", 0, "2026-01-15T10:00:00Z");
      record.run(ids[1], "retained", 0, "2026-01-15T10:00:00Z");
      record.run(ids[1], "branch_retained", 0, "2026-01-15T10:05:00Z");
      record.run(ids[2], "done", 0, "2026-01-15T10:00:00Z");
      record.run(ids[2], "skipped", 0, "2026-01-15T10:05:00Z");
      record.run(ids[3], "done", 1, "2026-01-15T10:00:00Z");
      migrate(db, "store.db");
      const settled = db.prepare("SELECT id, disk_settled_at AS at FROM work_items ORDER BY id").all().map((r) => ({ ...r }));
      assert.equal(settled, [
        { id: ids[0], at: "2026-01-15T10:00:00Z" },
        { id: ids[1], at: "2026-01-15T10:05:00Z" },
        { id: ids[2], at: null },
        { id: ids[3], at: null },
        { id: ids[4], at: null },
      ]);
    } finally {
      db.close();
    }
  }));

test("an outcome's intent is looked up by its action id through an index, not by reading every intent; one with none is still refused", () =>
  withStore((store) => {
    const trigger = (store.statement("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'audit_outcome_needs_intent'").get() as { sql: string }).sql;
    const lookup = /NOT EXISTS\s*\((SELECT[\s\S]*?)\)\s*BEGIN/.exec(trigger)?.[1];
    assert.ok(lookup, trigger);
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${lookup.replace("NEW.action_id", "?")}`).all("a").map((r) => String((r as { detail: string }).detail));
    assert.equal(plan, ["SEARCH audit USING COVERING INDEX audit_by_action (action_id=? AND phase=?)"]);
    assert.throws(() => appendAudit(store, { kind: "github.comment", phase: "outcome", actionId: "no-such-action" }), /needs the intent of its action/);
    appendAudit(store, { kind: "github.comment", phase: "intent", actionId: "a-1" });
    appendAudit(store, { kind: "github.comment", phase: "outcome", actionId: "a-1" });
  }));

test.run();
