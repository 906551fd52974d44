import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectGitHub } from "../boundaries/github.ts";
import { isoSeconds } from "../clock.ts";
import { initialState, runTick } from "../daemon/tick.ts";
import { queryAudit } from "../store/audit.ts";
import { withDaemon } from "../testing/daemon.ts";
import type { Store } from "../store/open.ts";
import { forgeTemplate } from "../testing/forge.ts";
import type { TestForge } from "../testing/forge.ts";
import { makeBranch } from "../testing/forge-git.ts";
import { addPullRequests, changePullRequest, forgeConfig, quickOptions, testStore } from "../testing/github-kit.ts";
import { atTimeAsync, makeItem, withStore } from "../testing/items.ts";
import type { WorkItemState } from "../work-items/queries.ts";
import { recordSession, sessionsOf, sessionsOfItems } from "../work-items/sessions.ts";
import { itemsById } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import { countPullRequests, mergedPullRequest, pullRequestsOf, pullRequestsOfItems, refreshPullRequests } from "./pull-requests.ts";

const template = forgeTemplate();
test.after(() => template.remove());

const stats = async (t: TestForge) => (await t.hook("GET", "/_forge/stats")).body as { total: number; not_modified: number };

const at = atTimeAsync;

/** An item of `repo` in `state` (done: closed at `doneAt`), with a session on each branch, started at `started`. */
function itemWith(store: Store, spec: { repo?: string; issue: number; state?: WorkItemState; branches?: string[]; started?: string; doneAt?: string }) {
  const item = makeItem(store, { repo: spec.repo, issue: spec.issue, state: spec.state === "done" ? "active" : spec.state ?? "active" });
  for (const [n, branch] of (spec.branches ?? []).entries()) {
    recordSession(store, {
      id: `s-${item.id}-${n}`, item: item.id, name: `ra-${spec.issue}`, host: "here", launcher: "process", marker: "", worktree: `/w/${item.id}`,
      branch, started_at: spec.started ?? "2026-02-01T00:00:00Z", simulated: false,
    });
  }
  if (spec.state === "done") {
    process.env.RA_NOW = spec.doneAt ?? "2026-02-01T01:00:00Z";
    transition(store, item.id, "done", { reason: "issue closed", issueClosedObserved: true });
    delete process.env.RA_NOW;
  }
  return item;
}

test("200 active items cost one request per repository, answered 304 while nothing changed, never one per item", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const items = Array.from({ length: 200 }, (_, i) => itemWith(store, { issue: 100 + i, branches: [`robot-army/issue-${100 + i}-work`] }));
      const minute = (m: number) => new Date(Date.parse("2026-02-01T01:00:00Z") + m * 60_000).toISOString().replace(".000Z", "Z");
      const numbers = addPullRequests(t, [
        ...items.map((item, i) => ({ head: `robot-army/issue-${item.issue}-work`, updated_at: minute(i) })),
        { head: "someone-else/feature", updated_at: minute(300) },
      ]);
      const config = await forgeConfig(t);
      const github = await connectGitHub(config, store, quickOptions());
      const first = await at("2026-02-02T00:00:00Z", () => refreshPullRequests({ store, github, config }));
      assert.equal([first.repos, first.requests, first.notModified, first.stored, first.failed, first.deferredUntil], [1, 3, 0, 200, [], null], "201 pull requests: 3 pages, the first time");
      assert.is(first.events.length, 200);
      assert.equal(first.events.find((e) => e.number === numbers[0]), { repo: "demo/widgets", number: numbers[0], item: items[0].id, change: "opened", html_url: `${t.forge.url}/demo/widgets/pull/${numbers[0]}` });
      assert.equal(countPullRequests(store), { open: 200, merged: 0, closed: 0 }, "the pull request of no item's branch is not kept");

      await t.hook("POST", "/_forge/reset-stats");
      const unchanged = await at("2026-02-02T00:01:00Z", () => refreshPullRequests({ store, github, config }));
      assert.equal([unchanged.requests, unchanged.notModified, unchanged.stored, unchanged.events], [1, 1, 0, []]);
      assert.equal([(await stats(t)).total, (await stats(t)).not_modified], [1, 1], "the forge saw one request for 200 items, and answered 304");

      changePullRequest(t, numbers[5], { merged: true }, "2026-02-02T00:02:00Z");
      await t.hook("POST", "/_forge/reset-stats");
      const merged = await at("2026-02-02T00:03:00Z", () => refreshPullRequests({ store, github, config }));
      assert.equal([merged.requests, merged.notModified, merged.stored], [1, 0, 1], "page 1 reaches back to the last refresh: one request");
      assert.equal(merged.events.map((e) => [e.number, e.item, e.change]), [[numbers[5], items[5].id, "merged"]]);
      assert.is((await stats(t)).total, 1);
      assert.is(mergedPullRequest(store, items[5].id)?.merged_at, "2026-02-02T00:02:00Z");
      assert.is(mergedPullRequest(store, items[6].id), undefined, "an open pull request is not a merged one");
    } finally {
      store.close();
    }
  }));

test("while under a quarter of the rate limit all hosts spend is left, a repository's pull requests are asked at most every five minutes; a merge is still seen", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const item = itemWith(store, { issue: 7, branches: ["robot-army/issue-7-work"] });
      const [number] = addPullRequests(t, [{ head: "robot-army/issue-7-work", updated_at: "2026-02-01T01:00:00Z" }]);
      const config = await forgeConfig(t);
      const github = await connectGitHub(config, store, quickOptions());
      await t.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 1200 });
      const first = await at("2026-02-02T00:00:00Z", () => refreshPullRequests({ store, github, config }));
      assert.equal([first.repos, first.slowed, first.stored], [1, 0, 1], "the answer tells this host that the limit is tight");
      await t.hook("POST", "/_forge/reset-stats");
      changePullRequest(t, number, { merged: true }, "2026-02-02T00:01:00Z");
      const slowed = await at("2026-02-02T00:04:59Z", () => refreshPullRequests({ store, github, config }));
      assert.equal([slowed.repos, slowed.slowed, slowed.requests], [0, 1, 0]);
      assert.is((await stats(t)).total, 0, "nothing was asked");
      const later = await at("2026-02-02T00:05:00Z", () => refreshPullRequests({ store, github, config }));
      assert.equal([later.repos, later.slowed, later.events.map((e) => e.change)], [1, 0, ["merged"]]);
      assert.is(mergedPullRequest(store, item.id)?.merged_at, "2026-02-02T00:01:00Z");
      // Plenty left again, as the next answer to any request tells: every pass asks.
      await t.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 4000 });
      await github.whoami();
      const plenty = await at("2026-02-02T00:05:30Z", () => refreshPullRequests({ store, github, config }));
      assert.equal([plenty.repos, plenty.slowed], [1, 0]);
    } finally {
      store.close();
    }
  }));

test("an item's pull requests are those of its sessions' branches; none once GitHub answered, not checked before, or for a repository that failed", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const base = await forgeConfig(t);
      const config = { ...base, repos: { ...base.repos, "demo/nowhere": { ...base.repos["demo/widgets"], path: "/src/nowhere" } } };
      const twoAttempts = itemWith(store, { issue: 1, branches: ["robot-army/issue-1-a", "robot-army/issue-1-b"] });
      const without = itemWith(store, { issue: 2, branches: ["robot-army/issue-2"] });
      const undispatched = makeItem(store, { issue: 3, state: "ready" });
      const elsewhere = itemWith(store, { repo: "demo/nowhere", issue: 4, branches: ["robot-army/issue-4"] });
      const longDone = itemWith(store, { issue: 5, state: "done", branches: ["robot-army/issue-5"], doneAt: "2026-01-20T00:00:00Z" });
      const recentlyDone = itemWith(store, { issue: 6, state: "done", branches: ["robot-army/issue-6"], doneAt: "2026-02-01T12:00:00Z" });
      const [a, b, , f] = addPullRequests(t, [
        { head: "robot-army/issue-1-a", updated_at: "2026-02-01T02:00:00Z", closed: true },
        { head: "robot-army/issue-1-b", updated_at: "2026-02-01T03:00:00Z" },
        { head: "robot-army/issue-5", updated_at: "2026-01-19T00:00:00Z", merged_at: "2026-01-19T00:00:00Z" },
        { head: "robot-army/issue-6", updated_at: "2026-02-01T11:00:00Z", merged_at: "2026-02-01T11:00:00Z" },
      ]);
      assert.is(pullRequestsOf(store, twoAttempts.id), "not checked", "before any refresh, GitHub was never asked");
      assert.is(pullRequestsOf(store, without.id), "not checked");

      const github = await connectGitHub(config, store, quickOptions());
      const refresh = await at("2026-02-02T00:00:00Z", () => refreshPullRequests({ store, github, config }));
      assert.is(refresh.repos, 2);
      assert.is(refresh.failed.length, 1);
      assert.match(refresh.failed[0], /^demo\/nowhere: /);
      assert.equal(refresh.events.map((e) => [e.number, e.item, e.change]).sort((x, y) => Number(x[0]) - Number(y[0])), [[a, twoAttempts.id, "closed"], [b, twoAttempts.id, "opened"], [f, recentlyDone.id, "merged"]]);

      const pulls = pullRequestsOf(store, twoAttempts.id);
      assert.ok(Array.isArray(pulls));
      assert.equal(pulls.map((p) => [p.number, p.head_branch, p.state, p.merged_at]), [[a, "robot-army/issue-1-a", "closed", null], [b, "robot-army/issue-1-b", "open", null]]);
      assert.is(mergedPullRequest(store, twoAttempts.id), undefined);
      assert.equal(pullRequestsOf(store, without.id), [], "GitHub answered, and no pull request came from its branch: none");
      assert.is(pullRequestsOf(store, undispatched.id), "not checked", "no session, so no branch to ask about");
      assert.is(pullRequestsOf(store, elsewhere.id), "not checked", "its repository could not be read");
      assert.is(pullRequestsOf(store, longDone.id), "not checked", "done more than a week ago: not refreshed");
      assert.is(mergedPullRequest(store, recentlyDone.id)?.number, f);

      // The label put back on issue 6 makes a new item on the same branch name: the pull request merged before
      // its first session is the earlier item's, never this one's signal to retire.
      const retaken = itemWith(store, { issue: 60, branches: ["robot-army/issue-6"], started: "2026-02-01T13:00:00Z" });
      assert.is(mergedPullRequest(store, retaken.id), undefined);
      assert.equal(pullRequestsOf(store, retaken.id), [], "GitHub answered since, and nothing came of this item's own session");

      const later = itemWith(store, { issue: 7, branches: ["robot-army/issue-7"], started: "2026-02-02T00:05:00Z" });
      assert.is(pullRequestsOf(store, later.id), "not checked", "its session started after GitHub last answered");
      await at("2026-02-02T00:10:00Z", () => refreshPullRequests({ store, github, config }));
      assert.equal(pullRequestsOf(store, later.id), [], "a 304 is an answer too");

      const reset = Math.floor(Date.now() / 1000) + 600;
      await t.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 10, reset });
      await github.getRepository("demo/widgets");
      const deferred = await refreshPullRequests({ store, github, config });
      assert.equal([deferred.requests, deferred.failed, deferred.deferredUntil], [0, [], new Date(reset * 1000).toISOString().replace(/\.000Z$/, "Z")], "held back for the rate limit: not a failure");
    } finally {
      store.close();
    }
  }));

test("a tick refreshes pull requests after settling and before polling, and says in one line what changed", () =>
  withDaemon(template, async ({ t, store, deps, lines }) => {
    const state = initialState();
    const first = await runTick(deps, state);
    assert.equal(first.pulls, { repos: 0, requests: 0, not_modified: 0, stored: 0, failed: 0, slowed: 0 }, "before dispatch no item has a branch: nothing is asked");
    const [session] = sessionsOf(store, 1);
    const [number] = addPullRequests(t, [{ head: session.branch, updated_at: isoSeconds(new Date()), merged_at: isoSeconds(new Date()) }]);
    const before = lines().length;
    const second = await runTick(deps, state);
    assert.equal(second.pulls, { repos: 1, requests: 1, not_modified: 0, stored: 1, failed: 0, slowed: 0 });
    assert.equal(second.failed, []);
    assert.equal(lines().slice(before).filter((l) => l.startsWith("pull requests")), [`pull requests: demo/widgets#${number} merged (item 1)`]);
    const third = await runTick(deps, state);
    assert.equal(third.pulls, { repos: 1, requests: 1, not_modified: 1, stored: 0, failed: 0, slowed: 0 });
    assert.is(lines().filter((l) => l.startsWith("pull requests")).length, 1, "nothing changed: nothing said");
    const passes = queryAudit(store, { kind: "reconcile.pass" });
    assert.equal((passes.at(-1)!.body as { pulls: unknown }).pulls, third.pulls);
  }));

test("many items' pull requests at once are each what the one item's are: the same branch name in two repositories kept apart, a refresh with none found, no session", () =>
  withStore((store) => {
    const a = itemWith(store, { repo: "demo/widgets", issue: 1, branches: ["robot-army/issue-1"] });
    const b = itemWith(store, { repo: "demo/gadgets", issue: 1, branches: ["robot-army/issue-1"] });
    const c = itemWith(store, { repo: "demo/widgets", issue: 2, branches: ["robot-army/issue-2", "robot-army/issue-2-again"] });
    const d = itemWith(store, { repo: "demo/widgets", issue: 3 });
    const pull = (repo: string, number: number, branch: string, updated: string) => store.statement(
      "INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at) VALUES (?, ?, ?, 'abc', 'open', NULL, ?, ?, ?)",
    ).run(repo, number, branch, updated, `https://example.test/${repo}/pull/${number}`, updated);
    pull("demo/widgets", 5, "robot-army/issue-1", "2026-02-02T00:00:00Z");
    pull("demo/gadgets", 9, "robot-army/issue-1", "2026-02-02T00:00:00Z");
    pull("demo/gadgets", 8, "robot-army/issue-1", "2026-01-01T00:00:00Z");
    store.statement("INSERT INTO pull_request_refreshes (repo, refreshed_at) VALUES ('demo/widgets', '2026-02-03T00:00:00Z')").run();
    const ids = [a.id, b.id, c.id, d.id];
    const items = itemsById(store, ids);
    const sessions = sessionsOfItems(store, ids);
    const many = pullRequestsOfItems(store, ids.map((id) => ({ item: items.get(id)!, sessions: sessions.get(id) ?? [] })));
    for (const id of ids) assert.equal(many.get(id), pullRequestsOf(store, id), `item ${id}`);
    const numbers = (id: number) => { const p = many.get(id)!; return p === "not checked" ? p : p.map((row) => `${row.repo}#${row.number}`); };
    assert.equal(ids.map(numbers), [["demo/widgets#5"], ["demo/gadgets#9"], [], "not checked"], "#8 was before item b's first session; c was looked for and has none");
    assert.equal(pullRequestsOfItems(store, []), new Map());
  }));

test("a pull request whose mergeable GitHub has not computed yet (null) is an open pull request of its item, never a refused one", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const item = itemWith(store, { issue: 2, branches: ["robot-army/issue-2-work"] });
      makeBranch(t.seeded.repository.clone_url, "robot-army/issue-2-work", "fix.txt");
      const made = await t.owner.rest.pulls.create({ owner: "demo", repo: "widgets", title: "Fix", head: "robot-army/issue-2-work", base: "main" });
      const fresh = await t.owner.rest.pulls.get({ owner: "demo", repo: "widgets", pull_number: made.data.number });
      assert.equal([fresh.data.mergeable, fresh.data.mergeable_state], [null, "unknown"], "the forge, as GitHub, has not computed it yet");
      const config = await forgeConfig(t);
      const github = await connectGitHub(config, store, quickOptions());
      const refresh = await at("2026-02-02T00:00:00Z", () => refreshPullRequests({ store, github, config }));
      assert.equal(refresh.events.map((e) => [e.number, e.item, e.change]), [[made.data.number, item.id, "opened"]]);
      const rows = pullRequestsOf(store, item.id);
      assert.ok(Array.isArray(rows));
      assert.equal((rows as Array<{ state: string; merged_at: string | null }>).map((row) => [row.state, row.merged_at]), [["open", null]], "not known yet is not closed, merged or refused");
    } finally {
      store.close();
    }
  }));

test.run();
