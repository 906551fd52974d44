import { test } from "uvu";
import * as assert from "uvu/assert";
import { PreconditionError, UsageError } from "../errors.ts";
import { atTime, makeItem, withStore } from "../testing/items.ts";
import { queryAudit } from "../store/audit.ts";
import { openStore } from "../store/open.ts";
import {
  describeHold, findHold, hold, isHeld, isPaused, listHolds, parseHoldTarget, pause, pauseState, unhold, unpause,
} from "./controls.ts";

const T0 = "2026-01-15T10:00:00Z";
const T1 = "2026-01-15T11:00:00Z";

function audit(store: Parameters<typeof queryAudit>[0]) {
  return queryAudit(store, { kind: "control" }).map((r) => ({ kind: r.kind, at: r.at, repo: r.repo, item: r.item, body: r.body }));
}

test("pause is durable: it survives closing and reopening the store, until unpause", () =>
  withStore(async (store, stateDir) => {
    assert.is(isPaused(store), false);
    assert.equal(atTime(T0, () => pause(store, { reason: "CI is down" })), { changed: true, current: { since: T0, reason: "CI is down" } });
    store.close();
    const reopened = await openStore(stateDir);
    try {
      assert.is(isPaused(reopened), true);
      assert.equal(pauseState(reopened), { since: T0, reason: "CI is down" });
      assert.equal(atTime(T1, () => unpause(reopened)), { changed: true, current: { since: T0, reason: "CI is down" } });
      assert.is(isPaused(reopened), false);
      assert.equal(audit(reopened), [
        { kind: "control.pause", at: T0, repo: null, item: null, body: { reason: "CI is down" } },
        { kind: "control.unpause", at: T1, repo: null, item: null, body: { paused_since: T0, reason: "CI is down" } },
      ]);
    } finally {
      reopened.close();
    }
  }));

test("pausing twice keeps the first pause; unpausing what runs changes nothing; neither is audited", () =>
  withStore((store) => {
    assert.is(unpause(store), undefined);
    atTime(T0, () => pause(store));
    assert.equal(atTime(T1, () => pause(store, { reason: "later" })), { changed: false, current: { since: T0, reason: null } });
    assert.equal(audit(store).map((r) => r.kind), ["control.pause"]);
  }));

test("an item hold and a repository hold: audited with their subjects, found for the items they cover", () =>
  withStore((store) => {
    const held = makeItem(store, { issue: 7 });
    const sibling = makeItem(store, { issue: 8 });
    const elsewhere = makeItem(store, { repo: "demo/gadgets", issue: 1 });
    const itemHold = atTime(T0, () => hold(store, { item: held.id }, { reason: "waiting on design" }));
    assert.equal(itemHold, { changed: true, current: { id: 1, item: held.id, repo: null, reason: "waiting on design", set_at: T0 } });
    assert.is(isHeld(store, held.id, "demo/widgets"), true);
    assert.is(isHeld(store, sibling.id, "demo/widgets"), false);
    atTime(T1, () => hold(store, { repo: "demo/widgets" }));
    assert.is(isHeld(store, sibling.id, "demo/widgets"), true, "a repository hold covers every item of it");
    assert.is(findHold(store, held.id, "demo/widgets")!.repo, "demo/widgets", "the repository's hold is named first");
    assert.is(isHeld(store, elsewhere.id, "demo/gadgets"), false);
    assert.equal(listHolds(store).map((h) => describeHold(store, h)), ["repository demo/widgets", "item 1 (demo/widgets#7)"]);
    assert.equal(audit(store), [
      { kind: "control.hold", at: T0, repo: "demo/widgets", item: held.id, body: { reason: "waiting on design" } },
      { kind: "control.hold", at: T1, repo: "demo/widgets", item: null, body: {} },
    ]);
  }));

test("holding twice keeps the first hold; unhold lifts it once and is audited", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 7 });
    atTime(T0, () => hold(store, { item: item.id }, { reason: "first" }));
    const again = atTime(T1, () => hold(store, { item: item.id }, { reason: "second" }));
    assert.equal([again.changed, again.current.reason, again.current.set_at], [false, "first", T0]);
    const lifted = atTime(T1, () => unhold(store, { item: item.id }));
    assert.equal([lifted?.changed, lifted?.current.reason], [true, "first"]);
    assert.is(unhold(store, { item: item.id }), undefined);
    assert.is(unhold(store, { repo: "demo/widgets" }), undefined);
    assert.is(isHeld(store, item.id, "demo/widgets"), false);
    assert.equal(audit(store).map((r) => [r.kind, r.item, r.body]), [
      ["control.hold", item.id, { reason: "first" }],
      ["control.unhold", item.id, { held_since: T0, reason: "first" }],
    ]);
  }));

test("an item that does not exist cannot be held or unheld", () =>
  withStore((store) => {
    for (const fn of [() => hold(store, { item: 42 }), () => unhold(store, { item: 42 })]) {
      try {
        fn();
        assert.unreachable("expected a refusal");
      } catch (error) {
        assert.instance(error, PreconditionError);
        assert.is((error as Error).message, 'No work item 42; "robot-army status" lists them');
      }
    }
    assert.equal(listHolds(store), []);
  }));

test("the holds table takes exactly one of item and repository", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 7 });
    const insert = store.db.prepare("INSERT INTO holds (item, repo, reason, set_at) VALUES (?, ?, NULL, ?)");
    assert.throws(() => insert.run(item.id, "demo/widgets", T0), /CHECK constraint failed/);
    assert.throws(() => insert.run(null, null, T0), /CHECK constraint failed/);
    assert.throws(() => insert.run(999, null, T0), /FOREIGN KEY constraint failed/);
  }));

test("hold targets: an id or --repo owner/name, never both or neither", () => {
  assert.equal(parseHoldTarget("12", undefined), { item: 12 });
  assert.equal(parseHoldTarget(undefined, "demo/widgets"), { repo: "demo/widgets" });
  const usage = (id: string | undefined, repo: string | undefined, message: string) =>
    assert.throws(() => parseHoldTarget(id, repo), (error: Error) => error instanceof UsageError && error.message === message);
  usage("12", "demo/widgets", "Give a work item id or --repo, not both");
  usage(undefined, undefined, "Give a work item id or --repo owner/name");
  usage("twelve", undefined, 'A work item id is a positive whole number such as 12, got "twelve"');
  usage("0", undefined, 'A work item id is a positive whole number such as 12, got "0"');
  usage(undefined, "widgets", '--repo "widgets" must be owner/name, e.g. demo/widgets');
});

test.run();
