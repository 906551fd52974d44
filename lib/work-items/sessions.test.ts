import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { PROJECT_ROOT } from "../runtime.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import { createItem, itemsById } from "./queries.ts";
import {
  endSession, episodeKey, itemsWithSessions, itemsWithTabsToSweep, latestSession, launchesWithoutRow, newestCheckouts, nextAttempt, openSessions, recordSession,
  sessionsOf, sessionsOfItemsWithOneOpen, settledCheckoutsNear, trackedSessionBranches, unfinishedItemsWithoutSessions,
} from "./sessions.ts";
import { appendAudit, lastAuditId, newLogCursor } from "../store/audit.ts";
import { fullScans, queryPlans } from "../testing/query-plans.ts";
import type { SessionRow } from "./sessions.ts";
import { closeCancelled, closeFromExit, closeLost } from "../ending/worker-ended.ts";
import { transition } from "./transition.ts";

async function withItem(fn: (store: Store, item: number) => void | Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const store = await openStore(join(dir, "state"));
    try {
      const { id } = createItem(store, {
        repo: "demo/widgets", issue: 7, title: "Fix", body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null,
      }, { simulated: false });
      await fn(store, id);
    } finally {
      store.close();
    }
  });
}

const row = (item: number, id: string, name: string): SessionRow => ({
  id, item, name, host: "testhost", launcher: "process", marker: `m-${id}`, worktree: "/w", branch: "b", started_at: "2026-01-15T10:00:00Z", simulated: false,
});

test("sessionsOfItemsWithOneOpen: every attempt of each item with an open row, oldest first; an item with none open is left out", () =>
  withItem((store, item) => {
    const other = createItem(store, {
      repo: "demo/widgets", issue: 8, title: "Other", body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null,
    }, { simulated: false }).id;
    const ended = createItem(store, {
      repo: "demo/widgets", issue: 9, title: "Ended", body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null,
    }, { simulated: false }).id;
    recordSession(store, row(item, "a", "ra-widgets-7"));
    endSession(store, "a", "lost");
    recordSession(store, row(item, "b", "ra-widgets-7-2"));
    recordSession(store, row(other, "c", "ra-widgets-8"));
    recordSession(store, row(ended, "d", "ra-widgets-9"));
    endSession(store, "d", "retired");
    const byItem = sessionsOfItemsWithOneOpen(store);
    assert.equal([...byItem].map(([id, rows]) => [id, rows.map((r) => [r.id, r.attempt, r.ended_at === null])]), [
      [item, [["a", 1, false], ["b", 2, true]]],
      [other, [["c", 1, true]]],
    ]);
    assert.equal([...byItem.values()].flat().filter((r) => r.ended_at === null).map((r) => r.id), openSessions(store).map((r) => r.id));
  }));

test("itemsById reads many items at once without their issues' bodies", () =>
  withItem((store, item) => {
    const long = createItem(store, {
      repo: "demo/widgets", issue: 8, title: "Long", body: "x".repeat(100_000), author: "owner", labels: ["robot-army", "p1"], issue_state: "open", issue_updated_at: null,
    }, { simulated: false }).id;
    const found = itemsById(store, [long, item, long, 99_999]);
    assert.equal([...found.keys()].sort(), [item, long].sort());
    assert.is(found.get(long)!.title, "Long");
    assert.equal(found.get(long)!.labels, ["robot-army", "p1"]);
    assert.is(found.get(long)!.simulated, false);
    assert.not.ok("body" in found.get(long)!);
  }));

test("each recorded session is the item's next attempt; the latest is the highest", () =>
  withItem((store, item) => {
    assert.is(nextAttempt(store, item), 1);
    assert.is(recordSession(store, row(item, "a", "ra-widgets-7")).attempt, 1);
    assert.is(recordSession(store, row(item, "b", "ra-widgets-7-3")).attempt, 2, "the attempt counts rows, whatever the name");
    assert.equal(sessionsOf(store, item).map((s) => [s.id, s.attempt, s.simulated]), [["a", 1, false], ["b", 2, false]]);
    assert.is(latestSession(store, item)!.id, "b");
  }));

test("each attempt's worker gets its own episode key, recorded with its row: item-<id>, then item-<id>-<attempt>", () =>
  withItem((store, item) => {
    assert.is(episodeKey(item, 1), `item-${item}`);
    assert.is(recordSession(store, row(item, "a", "ra-widgets-7")).episode_key, `item-${item}`);
    assert.is(recordSession(store, row(item, "b", "ra-widgets-7-2")).episode_key, `item-${item}-2`);
    assert.is(recordSession(store, { ...row(item, "c", "ra-widgets-7-3"), episode_key: "given" }).episode_key, "given");
    assert.equal(sessionsOf(store, item).map((s) => s.episode_key), [`item-${item}`, `item-${item}-2`, "given"]);
  }));

test("a row recorded before episode keys were stored reads as item-<id>, the key its worker was given then", () =>
  withItem((store, item) => {
    recordSession(store, row(item, "a", "ra-widgets-7"));
    store.db.prepare("UPDATE sessions SET episode_key = NULL WHERE id = 'a'").run();
    assert.is(latestSession(store, item)!.episode_key, `item-${item}`);
  }));

test("the first ending written stands, with what was observed; a later one changes nothing", () =>
  withItem((store, item) => {
    recordSession(store, row(item, "a", "ra-widgets-7"));
    assert.is(endSession(store, "a", "exited", { code: 3, at: "2026-01-15T10:05:00Z" }), true);
    assert.is(endSession(store, "a", "lost"), false);
    const [ended] = sessionsOf(store, item);
    assert.equal([ended.end_reason, ended.exit_code, ended.ended_at], ["exited", 3, "2026-01-15T10:05:00Z"]);
    assert.equal(openSessions(store), []);
  }));

test("open rows, all of them or of items in one state; only the newest session's end interrupts its item", () =>
  withItem((store, item) => {
    for (const to of ["ready", "dispatching", "active"] as const) transition(store, item, to, { reason: to });
    recordSession(store, row(item, "a", "ra-widgets-7"));
    recordSession(store, row(item, "b", "ra-widgets-7-2"));
    assert.equal(openSessions(store, { state: "active" }).map((s) => s.id), ["a", "b"]);
    assert.equal(openSessions(store, { state: "ready" }), []);
    const older = closeFromExit(store, { id: "a", item }, { ended: "killed", code: null, signal: "SIGTERM", at: "" })!;
    assert.equal([older.endReason, older.moved, older.state], ["killed", false, "active"]);
    const newer = closeFromExit(store, { id: "b", item }, { ended: "exited", code: 3, signal: null, at: "" })!;
    assert.equal([newer.why, newer.moved, newer.state], ["worker exited (code 3)", true, "interrupted"]);
    assert.is(closeFromExit(store, { id: "b", item }, { ended: "crashed", code: null, signal: "SIGKILL", at: "" }), null, "already closed: nothing happens");
  }));

test("a worker that ends while its item waits for the owner (needs_info) interrupts it, as an active one's end does", () =>
  withItem((store, item) => {
    for (const to of ["ready", "dispatching", "active", "needs_info"] as const) transition(store, item, to, { reason: to });
    recordSession(store, row(item, "a", "ra-widgets-7"));
    const ended = closeFromExit(store, { id: "a", item }, { ended: "exited", code: 0, signal: null, at: "" })!;
    assert.equal([ended.moved, ended.state, ended.why], [true, "interrupted", "worker exited 0 with no pull request known yet"]);
    for (const to of ["ready", "dispatching", "active", "needs_info"] as const) transition(store, item, to, { reason: to });
    recordSession(store, row(item, "b", "ra-widgets-7-2"));
    assert.equal(closeLost(store, { id: "b", item }, "worker lost: no exit record")!.state, "interrupted");
    for (const to of ["ready", "dispatching", "active", "needs_info"] as const) transition(store, item, to, { reason: to });
    recordSession(store, row(item, "c", "ra-widgets-7-3"));
    assert.equal(closeCancelled(store, { id: "c", item }, "cancelled by the owner")!.state, "interrupted");
  }));

test("what every pass reads of items and sessions is found by index: no query reads all the finished items, or every session", () =>
  withItem((store) => {
    const cursor = newLogCursor();
    assert.equal(fullScans(store, (s) => {
      newestCheckouts(s, { unsettled: true });
      settledCheckoutsNear(s, ["/w", "/"], ["/w"]);
      itemsWithSessions(s, "done", { unsettled: true });
      unfinishedItemsWithoutSessions(s);
      trackedSessionBranches(s, ["demo/widgets"], "2026-01-08T10:00:00Z");
      openSessions(s, { state: "done" });
      itemsWithTabsToSweep(s, false, "testhost");
      launchesWithoutRow(s, cursor);
      launchesWithoutRow(s, { after: 10, again: [3, 4] });
    }), []);
    // Read from the few rows still to look at: the other way round, every done item is read to find them.
    assert.match(queryPlans(store, (s) => openSessions(s, { state: "done" }))[0].steps[0], /^SCAN s USING INDEX sessions_open\b/);
    assert.match(queryPlans(store, (s) => itemsWithTabsToSweep(s, false, "testhost"))[0].steps[0], /^SCAN s USING INDEX sessions_tabs_unswept\b/);
    assert.match(queryPlans(store, (s) => newestCheckouts(s, { unsettled: true }))[0].steps[0], /^SCAN w USING INDEX work_items_disk_unsettled\b/);
  }));

test("the launches left without a row, since a cursor: only those after it and those it reads again; a new cursor (a restart) finds them all", () =>
  withItem((store, item) => {
    const launch = (session: string) => {
      const actionId = `launch-${session}`;
      appendAudit(store, { kind: "session.launch", phase: "intent", actionId, item, repo: "demo/widgets" });
      return appendAudit(store, { kind: "session.launch", phase: "outcome", actionId, item, repo: "demo/widgets", body: { ok: true, session_id: session } }).id;
    };
    const first = launch("s-1");
    const recorded = launch("s-2");
    recordSession(store, row(item, "s-2", "ra-widgets-7"));
    const second = launch("s-3");
    assert.equal(launchesWithoutRow(store).map((l) => l.id), [first, second]);
    const cursor = { after: lastAuditId(store), again: [first] };
    const third = launch("s-4");
    assert.equal(launchesWithoutRow(store, cursor).map((l) => l.id), [first, third], "the one read again, and the new one");
    assert.equal(launchesWithoutRow(store, newLogCursor()).map((l) => l.id), [first, second, third]);
    assert.ok(recorded < second);
  }));

/** Test support: lib/testing, and the crash suite, which looks at the store from outside as a test does. */
const TEST_SUPPORT = new Set(["lib/testing", "lib/crash"]);

/** Product code: lib/ and scripts/ without tests and test support. */
function productFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!TEST_SUPPORT.has(relative(PROJECT_ROOT, path))) productFiles(path, out);
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

const PRODUCT = ["lib", "scripts"].flatMap((dir) => productFiles(join(PROJECT_ROOT, dir)));

test("only lib/work-items/sessions.ts reads or writes the sessions table", () => {
  const touching = PRODUCT.filter((file) => /\b(FROM|UPDATE|INTO|JOIN)\s+sessions\b/.test(readFileSync(file, "utf8")))
    .map((file) => relative(PROJECT_ROOT, file));
  assert.equal(touching, ["lib/work-items/sessions.ts"]);
});

test("the exit spool's files are read only through lib/sessions/spool.ts", () => {
  const readers = PRODUCT.filter((file) => {
    const text = readFileSync(file, "utf8");
    return /sessions\/spool\.ts"/.test(text) && /\b(readdirSync|readFileSync|JSON\.parse)\b/.test(text);
  }).map((file) => relative(PROJECT_ROOT, file));
  assert.equal(readers, []);
});

test.run();
