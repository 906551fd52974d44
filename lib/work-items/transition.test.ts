import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { rememberSecret } from "../redact.ts";
import { appendAudit, auditEffect, queryAudit } from "../store/audit.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import { createItem, getItem, listItems, liveItemOf } from "./queries.ts";
import type { IssueSnapshot } from "./queries.ts";
import { transition } from "./transition.ts";

const ISSUE: IssueSnapshot = {
  repo: "demo/widgets", issue: 7, title: "Fix the widget", body: "It wobbles", author: "owner",
  labels: ["robot-army"], issue_state: "open", issue_updated_at: "2026-01-15T09:00:00Z",
};

async function withStore(fn: (store: Store) => void | Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const store = await openStore(join(dir, "state"));
    try {
      await fn(store);
    } finally {
      store.close();
    }
  });
}

const refused = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof PreconditionError && pattern.test(e.message));

test("a new item is discovered, with an audit record from nothing", () =>
  withStore((store) => {
    const item = createItem(store, ISSUE, { simulated: false });
    assert.is(item.state, "discovered");
    assert.equal(item.labels, ["robot-army"]);
    const [record] = queryAudit(store, { kind: "state.work_item" });
    assert.equal([record.item, record.repo, record.body.from, record.body.to], [item.id, "demo/widgets", null, "discovered"]);
  }));

test("every move writes the state and its audit record together", () =>
  withStore((store) => {
    const item = createItem(store, ISSUE, { simulated: false });
    transition(store, item.id, "ready", { reason: "repository onboarded" });
    transition(store, item.id, "dispatching", { reason: "a slot is free" });
    assert.is(getItem(store, item.id)!.state, "dispatching");
    const moves = queryAudit(store, { item: item.id }).map((r) => `${r.body.from}->${r.body.to}`);
    assert.equal(moves, ["null->discovered", "discovered->ready", "ready->dispatching"]);
  }));

test("a move the state machine does not allow is refused and changes nothing", () =>
  withStore((store) => {
    const item = createItem(store, ISSUE, { simulated: false });
    refused(() => transition(store, item.id, "active", { reason: "skip ahead" }), /cannot go from discovered to active/);
    assert.is(getItem(store, item.id)!.state, "discovered");
    assert.is(queryAudit(store, { item: item.id }).length, 1);
  }));

test("an item waiting for its owner goes back to active, or is interrupted or failed as an active one is", () =>
  withStore((store) => {
    let issue = ISSUE.issue;
    const walk = (...states: Array<"ready" | "dispatching" | "active" | "needs_info">) => {
      const item = createItem(store, { ...ISSUE, issue: issue++ }, { simulated: false });
      for (const to of states) transition(store, item.id, to, { reason: to });
      return item.id;
    };
    const asked = walk("ready", "dispatching", "active", "needs_info");
    assert.is(transition(store, asked, "active", { reason: "the worker is at work again" }).state, "active");
    assert.is(transition(store, asked, "needs_info", { reason: "worker asks: which database?" }).reason, "worker asks: which database?");
    assert.is(transition(store, asked, "interrupted", { reason: "worker exited (code 0)" }).state, "interrupted");
    assert.is(transition(store, walk("ready", "dispatching", "active", "needs_info"), "failed", { reason: "worker failed" }).state, "failed");
    refused(() => transition(store, walk("ready", "dispatching", "active", "needs_info"), "dispatching", { reason: "skip" }), /cannot go from needs_info to dispatching/);
  }));

test("only the pass that observed the issue closed writes done, and done is terminal", () =>
  withStore((store) => {
    const item = createItem(store, ISSUE, { simulated: false });
    refused(() => transition(store, item.id, "done", { reason: "looks finished" }), /only the pass that observed the issue closed/);
    transition(store, item.id, "done", { reason: "issue closed", issueClosedObserved: true });
    refused(() => transition(store, item.id, "ready", { reason: "again" }), /cannot go from done to ready/);
  }));

test("one live item per issue; a finished one may be followed by a new one", () =>
  withStore((store) => {
    const first = createItem(store, ISSUE, { simulated: false });
    assert.throws(() => createItem(store, ISSUE, { simulated: false }), /UNIQUE/);
    transition(store, first.id, "abandoned", { reason: "label removed before dispatch" });
    assert.is(liveItemOf(store, "demo/widgets", 7), undefined);
    const second = createItem(store, ISSUE, { simulated: false });
    assert.is(liveItemOf(store, "demo/widgets", 7)!.id, second.id);
  }));

test("simulated items are left out of lists unless asked for", () =>
  withStore((store) => {
    createItem(store, ISSUE, { simulated: true });
    createItem(store, { ...ISSUE, issue: 8 }, { simulated: false });
    assert.equal(listItems(store).map((i) => i.issue), [8]);
    assert.equal(listItems(store, { includeSimulated: true }).map((i) => i.issue), [7, 8]);
    assert.ok(queryAudit(store, { kind: "state.work_item" }).find((r) => r.body.issue === 7)!.simulated);
  }));

test("a secret in a reason or an audit body is redacted before it is stored, in the row and in the log", () =>
  withStore(async (store) => {
    rememberSecret("opaque-configured-secret");
    const token = `ghp_${"Z9".repeat(18)}`;
    const item = createItem(store, ISSUE, { simulated: false });
    transition(store, item.id, "ready", { reason: "onboarded" });
    transition(store, item.id, "dispatching", { reason: "a slot is free" });
    const failed = transition(store, item.id, "failed", { reason: `step printed ${token} and opaque-configured-secret` });
    const expected = "step printed [redacted] and [redacted]";
    assert.is(failed.reason, expected);
    assert.is(getItem(store, item.id)!.reason, expected);
    assert.is(queryAudit(store, { kind: "state.work_item" }).at(-1)!.body.reason, expected);
    appendAudit(store, { kind: "note", body: { seen: { lines: [`token ${token}`] } } });
    assert.equal(queryAudit(store, { kind: "note" })[0].body, { seen: { lines: ["token [redacted]"] } });
    await auditEffect(store, { kind: "github.comment", body: { to: "o/r#1" } }, () => {
      throw new Error(`HTTP 401 Bad credentials for opaque-configured-secret`);
    }).catch(() => {});
    assert.equal(queryAudit(store, { kind: "github.comment" }).at(-1)!.body, { ok: false, error: "HTTP 401 Bad credentials for [redacted]" });
    const raw = store.db.prepare("SELECT group_concat(body) AS all_bodies FROM audit").get() as { all_bodies: string };
    assert.not.match(raw.all_bodies, token);
    assert.not.match(raw.all_bodies, "opaque-configured-secret");
  }));

test.run();
