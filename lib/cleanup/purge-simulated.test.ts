import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dispatchReady } from "../dispatch/dispatch.ts";
import type { DispatchDeps } from "../dispatch/dispatch-deps.ts";
import { wireEffects } from "../effects.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { git } from "../testing/fixtures.ts";
import { stopAll, verbTemplate, withWorld } from "../testing/verbs.ts";
import type { VerbWorld } from "../testing/verbs.ts";
import { createItem, getItem } from "../work-items/queries.ts";
import { endSession, sessionsOf } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";
import { planPurge, purgeRows, removeOwnedWorktrees } from "./purge-simulated.ts";
import type { PurgeDeps } from "./purge-simulated.ts";

const template = verbTemplate();
test.after(() => template.remove());

/**
 * A world where items 1 and 2 were made below live (item 3 is real), and item 1 was
 * dispatched at no-remote: a real worktree and branch, and a worker that has since ended.
 */
async function withRehearsal(fn: (w: VerbWorld & { purge: PurgeDeps; worktree: string; branch: string }) => Promise<void>, options: { workerEnded?: boolean } = {}): Promise<void> {
  await withWorld(template, async (world) => {
    const { store, deps } = world;
    store.statement("UPDATE work_items SET simulated = 1 WHERE id IN (1, 2)").run();
    const rehearsal: DispatchDeps = { ...deps, effects: wireEffects("no-remote", { github: deps.effects.github }) };
    const session = (await dispatchReady(rehearsal)).outcomes.find((o) => o.item === 1)!.session!;
    if (options.workerEnded !== false) {
      await stopAll(deps);
      endSession(store, session.id, "killed");
    }
    const purge: PurgeDeps = { store, config: deps.config, stateDir: deps.stateDir, sessionRoot: deps.sessionRoot, host: deps.host };
    await fn({ ...world, purge, worktree: session.worktree, branch: session.branch });
  });
}

/** Rows of these items in a table with an `item` column. */
function rowsOf(store: Store, table: string, items: number[]): number {
  return (store.statement(`SELECT count(*) AS n FROM "${table}" WHERE item IN (${items.join(", ")})`).get() as { n: number }).n;
}

/** Every table with an `item` column, as the schema has them now. */
function itemTables(store: Store): string[] {
  return store.statement("SELECT m.name AS name FROM sqlite_master AS m, pragma_table_info(m.name) AS c WHERE m.type = 'table' AND c.name = 'item' ORDER BY m.name")
    .all().map((row) => String((row as { name: string }).name));
}

/** Rows hanging off items 1 and 3 in every table that has them (a hold, a keep, an anomaly, a pull request). */
function addRows(store: Store, branch: string): void {
  const at = "2026-01-15T10:00:00Z";
  for (const item of [1, 3]) {
    store.statement("INSERT INTO holds (item, reason, set_at) VALUES (?, 'held', ?)").run(item, at);
    store.statement("INSERT INTO keeps (item, placed_at) VALUES (?, ?)").run(item, at);
    store.statement("INSERT INTO anomalies (kind, repo, item, detail, raised_at) VALUES ('orphan_session', 'demo/widgets', ?, 'x', ?)").run(item, at);
  }
  const pull = store.statement(`INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, updated_at, html_url, seen_at) VALUES ('demo/widgets', ?, ?, ?, 'open', ?, 'u', ?)`);
  pull.run(6, branch, "a".repeat(40), at, at);
  pull.run(7, "someone-elses-branch", "b".repeat(40), at, at);
}

test("the plan names the simulated items and the worktree their rows own, with its size; it changes nothing", () =>
  withRehearsal(async ({ store, purge, worktree, branch }) => {
    const plan = await planPurge(purge);
    assert.equal(plan.items.map((i) => [i.id, i.state]), [[1, "active"], [2, "ready"]]);
    assert.equal(plan.kept, []);
    assert.equal(plan.worktrees.map((w) => [w.items, w.path, w.branch, w.onDisk, w.branchInClone, w.session]), [[[1], worktree, branch, true, true, { live: false }]]);
    assert.match(plan.worktrees[0].size!, /^\d+\.\d KiB$/, "its size on disk is measured");
    assert.equal([getItem(store, 1)?.id, existsSync(worktree)], [1, true]);
  }));

test("purging deletes every row of the simulated items, in every table with an item column, and nothing of a real one; the audit log stays", () =>
  withRehearsal(async ({ store, purge, branch }) => {
    addRows(store, branch);
    const auditBefore = queryAudit(store, { item: 1 }).length;
    const plan = await planPurge(purge);
    const purged = purgeRows(purge, plan);
    assert.equal(purged.items, [1, 2]);
    for (const table of itemTables(store).filter((t) => t !== "audit")) assert.is(rowsOf(store, table, [1, 2]), 0, `no row of items 1 and 2 is left in ${table}`);
    assert.equal([getItem(store, 1), getItem(store, 2), getItem(store, 3)?.id], [undefined, undefined, 3]);
    for (const table of ["holds", "keeps", "anomalies", "issue_trust"]) assert.is(rowsOf(store, table, [3]), 1, `the real item's row in ${table} stays`);
    const pulls = store.statement("SELECT number FROM pull_requests ORDER BY number").all().map((r) => Number((r as { number: number }).number));
    assert.equal(pulls, [7], "the pull request of the purged item's branch goes, another branch's stays");
    assert.equal(purged.rows.sessions, 1);
    assert.is(queryAudit(store, { item: 1 }).length, auditBefore, "the audit log is never purged");
    const records = queryAudit(store, { kind: "purge.simulated" });
    assert.equal(records.map((r) => [r.id, r.body.items, (r.body.rows as Record<string, number>).work_items]), [[purged.auditId, [1, 2], 2]]);
  }));

test("after a purge no id is given again: a new item never inherits a purged one's audit history", () =>
  withRehearsal(async ({ store, purge }) => {
    store.statement("UPDATE work_items SET simulated = 1 WHERE id = 3").run();
    assert.equal(purgeRows(purge, await planPurge(purge)).items, [1, 2, 3]);
    const item = createItem(store, {
      repo: "demo/widgets", issue: 1, title: "Again", body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null,
    }, { simulated: false });
    assert.is(item.id, 4);
    assert.equal(queryAudit(store, { item: 4 }).map((r) => r.body.to), ["discovered"]);
  }));

test("the deletion and its audit record are one transaction: when the record cannot be written, nothing is deleted", () =>
  withRehearsal(async ({ store, purge }) => {
    store.db.exec(`CREATE TRIGGER refuse_purge_record BEFORE INSERT ON audit WHEN NEW.kind = 'purge.simulated'
      BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    const plan = await planPurge(purge);
    assert.throws(() => purgeRows(purge, plan), /disk full/);
    assert.equal([getItem(store, 1)?.id, getItem(store, 2)?.id, sessionsOf(store, 1).length], [1, 2, 1]);
  }));

test("an open session row keeps its item, rows and worktree; without pid or start time it still refuses while a managed session of its id is on record", () =>
  withRehearsal(async ({ store, purge }) => {
    const plan = await planPurge(purge);
    assert.equal(plan.items.map((i) => i.id), [2]);
    assert.equal(plan.kept.map((k) => k.id), [1]);
    assert.match(plan.kept[0].why, /^session ra-widgets-1 \(.+\) of work item 1 is open \(pid \d+\); end it first \(robot-army cancel 1\)$/);
    assert.equal(plan.worktrees, [], "the kept item's worktree is not offered");
    purgeRows(purge, plan);
    assert.equal([getItem(store, 1)?.id, sessionsOf(store, 1).length], [1, 1]);
    store.statement("UPDATE sessions SET pid = NULL, pid_started_at = NULL WHERE item = 1").run();
    assert.equal((await planPurge(purge)).kept.map((k) => [k.id, k.why.includes("(no pid on record)")]), [[1, true]]);
  }, { workerEnded: false }));

test("an open row carrying the simulated host's signature (pid 0, no start time, no managed session) does not refuse", () =>
  withRehearsal(async ({ store, purge, worktree }) => {
    store.statement(
      `INSERT INTO sessions (id, item, name, host, launcher, marker, pid, pid_started_at, worktree, branch, attempt, started_at, simulated)
       VALUES ('simulated-1', 1, 'ra-widgets-1-2', ?, 'simulated', 'm', 0, NULL, ?, ?, 2, '2026-01-15T10:00:00Z', 1)`,
    ).run(purge.host, worktree, sessionsOf(store, 1)[0].branch);
    const plan = await planPurge(purge);
    assert.equal([plan.items.map((i) => i.id), plan.kept, plan.worktrees.map((w) => w.session)], [[1, 2], [], [{ live: false }]]);
    const other = await planPurge({ ...purge, host: "another-host" });
    assert.equal(other.kept.map((k) => k.id), [1], "a row made on another host cannot be checked here, so it refuses");
  }));

test("an item being dispatched is kept: a claimer may be starting its worker now", () =>
  withRehearsal(async ({ store, purge }) => {
    transition(store, 2, "dispatching", { reason: "a slot is free" });
    const plan = await planPurge(purge);
    assert.equal([plan.items.map((i) => i.id), plan.kept.map((k) => [k.id, k.why])], [[1], [[2, "it is being dispatched: a worker of it may be starting now"]]]);
    assert.equal(purgeRows(purge, { items: [{ id: 2, repo: "demo/widgets", issue: 2, state: "ready" }] }).items, [], "what changed since the plan is checked again");
    assert.is(getItem(store, 2)?.state, "dispatching");
  }));

test("a worktree a real item's session names too is not the purge's to offer", () =>
  withRehearsal(async ({ store, purge, worktree, branch }) => {
    store.statement(
      `INSERT INTO sessions (id, item, name, host, launcher, marker, worktree, branch, attempt, started_at, ended_at, end_reason, simulated)
       VALUES ('real-3', 3, 'ra-widgets-3', 'testhost', 'process', 'm', ?, ?, 1, '2026-01-15T10:00:00Z', '2026-01-15T10:00:00Z', 'exited', 0)`,
    ).run(worktree, branch);
    assert.equal((await planPurge(purge)).worktrees, []);
  }));

test("removal goes through the one removal path, never forced: removed and deleted at local, git's refusal over an untracked file kept, nothing touched below local", () =>
  withRehearsal(async ({ store, deps, purge, worktree, branch }) => {
    const [owned] = (await planPurge(purge)).worktrees;
    const at = (level: "plan" | "local") => ({ ...purge, store, stateDir: deps.stateDir, effects: wireEffects(level, { github: deps.effects.github }) });
    const [planned] = await removeOwnedWorktrees(at("plan"), [owned]);
    assert.equal([planned.removal!.simulated, planned.removal!.worktree.status, existsSync(worktree)], [true, "kept", true]);
    assert.is((planned.removal!.worktree as { code: string }).code, "directory_survived");
    writeFileSync(join(worktree, "notes.txt"), "draft\n");
    const [dirty] = await removeOwnedWorktrees(at("local"), [owned]);
    assert.equal([dirty.removal!.worktree.status, dirty.removal!.branch.status, existsSync(join(worktree, "notes.txt"))], ["kept", "not_attempted", true]);
    assert.match((dirty.removal!.worktree as { reason: string }).reason, /contains modified or untracked files/);
    git(worktree, "clean", "-fq");
    const [removed] = await removeOwnedWorktrees(at("local"), [owned]);
    assert.equal([removed.removal!.worktree.status, removed.removal!.branch.status, existsSync(worktree)], ["removed", "deleted", false]);
    assert.is(git(deps.config.repos["demo/widgets"].path, "branch", "--list", branch), "");
    assert.ok(queryAudit(store, { kind: "worktree.remove", item: 1 }).some((r) => r.phase === "outcome"), "each removal is audited");
  }));

test("a session of an owning item opened while the owner was asked keeps its worktree: the guard is asked again at removal", () =>
  withRehearsal(async ({ store, deps, purge, worktree }) => {
    const [owned] = (await planPurge(purge)).worktrees;
    // After the listing (and the questions), the owner resumed the item: a real row, with a pid, is open.
    store.statement(
      `INSERT INTO sessions (id, item, name, host, launcher, marker, worktree, branch, attempt, started_at, simulated, pid, pid_started_at)
       VALUES ('resumed-1', ?, 'ra-widgets-1-2', 'testhost', 'process', 'm', ?, ?, 99, '2026-01-15T10:05:00Z', 1, ?, '2026-01-15T10:05:00Z')`,
    ).run(owned.items[0], owned.path, owned.branch, process.pid);
    const [result] = await removeOwnedWorktrees({ ...purge, effects: wireEffects("local", { github: deps.effects.github }) }, [owned]);
    assert.is(result.removal, null);
    assert.match(result.skipped ?? "", "changed while you were asked");
    assert.ok(existsSync(worktree), "the worktree is still there");
  }));

test.run();
