import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync } from "node:fs";
import { isoSeconds } from "../clock.ts";
import { initialState, runTick } from "../daemon/tick.ts";
import type { Store } from "../store/open.ts";
import { withDaemon } from "../testing/daemon.ts";
import { forgeTemplate } from "../testing/forge.ts";
import { addPullRequests, changePullRequest } from "../testing/github-kit.ts";
import { makeItem, withStore } from "../testing/items.ts";
import { waitFor } from "../testing/sessions.ts";
import { getItem } from "../work-items/queries.ts";
import { endSession, recordSession, sessionsOf } from "../work-items/sessions.ts";
import type { EndReason } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";
import { followPullRequests } from "./review.ts";

const template = forgeTemplate();
test.after(() => template.remove());

const BRANCH = "robot-army/issue-7";

/** demo/widgets#7 walked through active to `state`, its one session on BRANCH ended as `ended` (code `code`); its id. */
function itemAfterWorker(store: Store, state: "awaiting_review" | "interrupted", ended: EndReason = "exited", code: number | null = 0): number {
  const item = makeItem(store, { issue: 7, state: "active" }).id;
  recordSession(store, {
    id: "s1", item, name: "ra-widgets-7", host: "testhost", launcher: "process", marker: "m", worktree: "/w/7", branch: BRANCH,
    started_at: "2026-01-15T10:00:00Z", simulated: false,
  });
  endSession(store, "s1", ended, { code, at: "2026-01-15T12:00:00Z" });
  transition(store, item, state, { reason: "its worker ended" });
  return item;
}

/** What GitHub last said of the branch's pull requests, as a refresh stores it. */
function pulls(store: Store, rows: Array<{ number: number; state: "open" | "closed"; merged_at?: string }>): void {
  for (const pull of rows) {
    store.statement(
      `INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at)
       VALUES ('demo/widgets', ?, ?, 'abc', ?, ?, '2026-01-15T13:00:00Z', 'https://github.example/pull', '2026-01-15T13:00:00Z')
       ON CONFLICT (repo, number) DO UPDATE SET state = excluded.state, merged_at = excluded.merged_at`,
    ).run(pull.number, BRANCH, pull.state, pull.merged_at ?? null);
  }
  store.statement(
    `INSERT INTO pull_request_refreshes (repo, refreshed_at) VALUES ('demo/widgets', '2026-01-15T13:00:00Z')
     ON CONFLICT (repo) DO UPDATE SET refreshed_at = excluded.refreshed_at`,
  ).run();
}

const stateOf = (store: Store, item: number) => [getItem(store, item)!.state, getItem(store, item)!.reason];

test("an item awaiting review whose pull request is closed unmerged is interrupted; merged, or another still open, it stays", () =>
  withStore((store) => {
    const item = itemAfterWorker(store, "awaiting_review");
    pulls(store, [{ number: 4, state: "open" }, { number: 5, state: "open" }]);
    assert.equal(followPullRequests(store), [], "both open: nothing moves");
    pulls(store, [{ number: 4, state: "closed" }]);
    assert.equal(followPullRequests(store), [], "#5 is still open");
    pulls(store, [{ number: 5, state: "closed" }]);
    assert.equal(followPullRequests(store), [{ item, from: "awaiting_review", to: "interrupted", reason: "pull request #5 was closed unmerged" }]);
    assert.equal(stateOf(store, item), ["interrupted", "pull request #5 was closed unmerged"]);
    assert.equal(followPullRequests(store), [], "once");
  }));

test("an item awaiting review whose pull request merged stays so until its issue closes; not checked, nothing moves", async () => {
  await withStore((store) => {
    const item = itemAfterWorker(store, "awaiting_review");
    pulls(store, [{ number: 4, state: "closed", merged_at: "2026-01-15T13:00:00Z" }]);
    assert.equal(followPullRequests(store), []);
    assert.is(getItem(store, item)!.state, "awaiting_review");
  });
  await withStore((store) => {
    const item = itemAfterWorker(store, "awaiting_review");
    assert.equal(followPullRequests(store), [], "GitHub never asked: unknown is not closed");
    assert.is(getItem(store, item)!.state, "awaiting_review");
  });
});

test("an item interrupted after its worker exited 0 awaits review once a pull request of it is open (seen late, or reopened)", () =>
  withStore((store) => {
    const item = itemAfterWorker(store, "interrupted");
    pulls(store, []);
    assert.equal(followPullRequests(store), []);
    pulls(store, [{ number: 4, state: "open" }]);
    assert.equal(followPullRequests(store), [{ item, from: "interrupted", to: "awaiting_review", reason: "pull request #4 is open; its worker had exited 0" }]);
    pulls(store, [{ number: 4, state: "closed" }]);
    assert.equal(followPullRequests(store).map((m) => m.to), ["interrupted"]);
    pulls(store, [{ number: 4, state: "open" }]);
    assert.equal(followPullRequests(store).map((m) => m.to), ["awaiting_review"], "reopened");
  }));

test("an item interrupted by another ending (killed, lost, another code) stays interrupted whatever its pull requests", async () => {
  for (const [ended, code] of [["killed", 0], ["lost", null], ["exited", 3], ["cancelled", null]] as Array<[EndReason, number | null]>) {
    await withStore((store) => {
      const item = itemAfterWorker(store, "interrupted", ended, code);
      pulls(store, [{ number: 4, state: "open" }]);
      assert.equal(followPullRequests(store), [], ended);
      assert.is(getItem(store, item)!.state, "interrupted");
    });
  }
});

test("through the tick: a worker that exits 0 before its pull request is seen is interrupted, awaits review once it is, follows its close; a merged one's issue closed makes it done", () =>
  withDaemon(template, async ({ t, store, deps, lines }) => {
    const state = initialState();
    const exitSpooled = () => waitFor("the exit record", () => existsSync(deps.spoolDir) && readdirSync(deps.spoolDir).some((name) => name.endsWith(".json")), 10_000);
    await runTick(deps, state);
    const [first] = sessionsOf(store, 1);
    const [one] = addPullRequests(t, [{ head: first.branch, updated_at: isoSeconds(new Date()) }]);
    await exitSpooled();
    await runTick(deps, state);
    const item1 = getItem(store, 1)!;
    assert.equal([item1.state, item1.reason], ["awaiting_review", `pull request #${one} is open; its worker had exited 0`], lines().join("\n"));
    assert.ok(lines().includes("worker of item 1 exited 0 with no pull request known yet: item interrupted"), lines().join("\n"));
    assert.ok(lines().includes(`item 1 is awaiting_review: pull request #${one} is open; its worker had exited 0`), lines().join("\n"));

    // Item 2 took the slot item 1's end freed; its pull request is open before its worker exits.
    const [second] = sessionsOf(store, 2);
    assert.ok(second, lines().join("\n"));
    const [two] = addPullRequests(t, [{ head: second.branch, updated_at: isoSeconds(new Date()) }]);
    changePullRequest(t, one, { closed: true }, isoSeconds(new Date()));
    await runTick(deps, state);
    assert.equal([getItem(store, 1)!.state, getItem(store, 1)!.reason], ["interrupted", `pull request #${one} was closed unmerged`]);
    await exitSpooled();
    await runTick(deps, state);
    assert.equal([getItem(store, 2)!.state, getItem(store, 2)!.reason], ["awaiting_review", `worker exited 0; pull request #${two} is open`], lines().join("\n"));

    changePullRequest(t, two, { merged: true }, isoSeconds(new Date()));
    await runTick(deps, state);
    assert.is(getItem(store, 2)!.state, "awaiting_review", "merged, its issue still open: it waits for the issue");
    await t.owner.rest.issues.update({ owner: "demo", repo: "widgets", issue_number: 2, state: "closed" });
    state.lastPollAt = null;
    await runTick(deps, state);
    assert.equal([getItem(store, 2)!.state, getItem(store, 2)!.reason], ["done", "issue closed"]);
  }, ["sh", "-c", "sleep 2; exit 0"]));

test.run();
