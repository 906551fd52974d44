import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectGitHub } from "../boundaries/github.ts";
import { dispatchQueue } from "../dispatch/queue.ts";
import { listAnomalies } from "../store/anomalies.ts";
import type { Store } from "../store/open.ts";
import type { Config } from "../config.ts";
import { forgeTemplate } from "../testing/forge.ts";
import type { TestForge } from "../testing/forge.ts";
import { forgeAs, forgeConfig, quickOptions, testStore } from "../testing/github-kit.ts";
import { makeItem, onboard } from "../testing/items.ts";
import { blockedReason, blockersOf, noteGitHubBlockers, refreshBlockers, textBlockers } from "./dependencies.ts";

// Seeded: #1..#3 labelled by owner, #4 labelled by stranger, #5 unlabelled by owner.
const template = forgeTemplate();
test.after(() => template.remove());


/** demo/widgets onboarded in a store of the test's, and GitHub (the forge) connected, for `fn`. */
async function withGitHub(t: TestForge, fn: (w: { store: Store; config: Config; github: Awaited<ReturnType<typeof connectGitHub>> }) => Promise<void>): Promise<void> {
  const store = await testStore(t);
  try {
    const config = await forgeConfig(t);
    onboard(store, "demo/widgets");
    await fn({ store, config, github: await connectGitHub(config, store, quickOptions()) });
  } finally {
    store.close();
  }
}

/** A ready item of issue `issue` whose body reads `body`, by `author`. */
function readyItem(store: Store, issue: number, body = "Do the thing", author = "owner") {
  const item = makeItem(store, { issue, state: "ready" });
  store.statement("UPDATE work_items SET body = ?, author = ? WHERE id = ?").run(body, author, item.id);
  return item;
}

test("the words that name a blocker: blocked by, depends on, lists, other repositories; nothing else", () => {
  assert.equal(textBlockers("Depends on #3, #4 and other/repo#5. Blocked by: #3", "demo/widgets"), [
    { repo: "demo/widgets", issue: 3 }, { repo: "demo/widgets", issue: 4 }, { repo: "other/repo", issue: 5 },
  ]);
  assert.equal(textBlockers("Fixes #3; see #4; this blocks #5; depends on nothing", "demo/widgets"), []);
  assert.equal(textBlockers("BLOCKED BY #12", "o/r"), [{ repo: "o/r", issue: 12 }]);
});

test("an item GitHub says is blocked by an open issue stays out of the queue, with why, and goes in once it closes; only it is asked", () =>
  template.use(async (t) => {
    await withGitHub(t, async ({ store, config, github }) => {
      const blocker = await forgeAs(t, "owner", "GET", "/repos/demo/widgets/issues/1");
      await forgeAs(t, "owner", "POST", "/repos/demo/widgets/issues/2/dependencies/blocked_by", { issue_id: blocker.id });
      const blocked = readyItem(store, 2);
      const free = readyItem(store, 3);
      noteGitHubBlockers(store, blocked.id, await github.getIssue("demo/widgets", 2));
      noteGitHubBlockers(store, free.id, await github.getIssue("demo/widgets", 3));

      const first = await refreshBlockers({ store, github, config }, { includeSimulated: false });
      assert.equal([first.asked, first.blocked, first.failed], [1, 1, []], "the free item's blockers are not asked");
      assert.equal(blockersOf(store, blocked.id).map((b) => [b.issue, b.source, b.state]), [[1, "github", "open"]]);
      const queue = dispatchQueue(store, config);
      assert.equal(queue.queue.map((q) => q.item.id), [free.id]);
      assert.equal(queue.blocked.map((b) => [b.item.id, b.reason]), [[blocked.id, "blocked by demo/widgets#1 (open); dispatched once it closes"]]);

      await forgeAs(t, "owner", "PATCH", "/repos/demo/widgets/issues/1", { state: "closed" });
      const second = await refreshBlockers({ store, github, config }, { includeSimulated: false });
      assert.equal([second.blocked, second.released], [0, 1]);
      assert.match(second.events[0].line, "is no longer blocked: demo/widgets#1 closed");
      assert.equal(dispatchQueue(store, config).queue.map((q) => q.item.id), [blocked.id, free.id]);
    });
  }));

test("the owner's words name blockers, a stranger's do not; one that cannot be read blocks and says so; a cycle is reported and not waited on", () =>
  template.use(async (t) => {
    await withGitHub(t, async ({ store, config, github }) => {
      const waits = readyItem(store, 1, "Depends on #5 and #999.");
      const stranger = readyItem(store, 4, "Depends on #5.", "stranger");
      const one = readyItem(store, 2, "Blocked by #3.");
      const other = readyItem(store, 3, "Blocked by #2.");
      const refreshed = await refreshBlockers({ store, github, config }, { includeSimulated: false });
      assert.equal(refreshed.failed, []);
      assert.is(blockedReason(store, waits), "blocked by demo/widgets#5 (open, named in its words), demo/widgets#999 (could not be read, named in its words); dispatched once they close");
      assert.is(blockedReason(store, stranger), null, "a stranger's words name nothing");
      assert.is(blockedReason(store, one), null, "in a cycle: not waited on");
      assert.is(blockedReason(store, other), null);
      const cycles = listAnomalies(store, { open: true }).filter((a) => a.kind === "dependency_cycle");
      assert.equal(cycles.map((a) => [a.item, a.detail.split(":")[0]]), [[one.id, "issues demo/widgets#2, demo/widgets#3 block each other"]]);
      await refreshBlockers({ store, github, config }, { includeSimulated: false });
      assert.is(listAnomalies(store, { open: true }).filter((a) => a.kind === "dependency_cycle").length, 1, "raised once");
      assert.equal(dispatchQueue(store, config).queue.map((q) => q.item.id).sort(), [one.id, other.id, stranger.id].sort());

      // A cycle lifts only its own members' wait on one another: another open blocker still counts.
      store.statement("UPDATE work_items SET body = ? WHERE id = ?").run("Blocked by #3 and #5.", one.id);
      await refreshBlockers({ store, github, config }, { includeSimulated: false });
      assert.is(blockedReason(store, one), "blocked by demo/widgets#5 (open, named in its words); dispatched once it closes");
      assert.is(blockedReason(store, other), null);
    });
  }));

test("an item GitHub says is blocked stays blocked while its blockers cannot be read, and one never read is asked once", () =>
  template.use(async (t) => {
    await withGitHub(t, async ({ store, config, github }) => {
      const blocked = readyItem(store, 2);
      const never = readyItem(store, 3);
      noteGitHubBlockers(store, blocked.id, { blocked_by: { open: 1, total: 1 } });
      await t.hook("POST", "/_forge/faults", { method: "GET", path: "/repos/demo/widgets/issues/2/dependencies/blocked_by", status: 502, times: 10 });
      const failed = await refreshBlockers({ store, github, config }, { includeSimulated: false });
      assert.equal([failed.failed.length, failed.blocked], [1, 1]);
      assert.is(blockedReason(store, blocked), "blocked by issues GitHub's dependencies name, not read yet; dispatched once they close");
      assert.equal(dispatchQueue(store, config).blocked.map((b) => b.item.id), [blocked.id]);
      // Item 3 was never read (an item from before they were kept): asked on the first pass, found free, and not asked again.
      const before = (await t.hook("GET", "/_forge/stats")).body as { total: number };
      await t.hook("DELETE", "/_forge/faults");
      await refreshBlockers({ store, github, config }, { includeSimulated: false });
      await refreshBlockers({ store, github, config }, { includeSimulated: false });
      const after = (await t.hook("GET", "/_forge/stats")).body as { total: number };
      assert.is(blockedReason(store, never), null);
      assert.is(blockedReason(store, blocked), null, "its blockers read at last: none open on the forge");
      assert.is(after.total - before.total, 1, "item 2's blockers read once they can be; nothing asked again while none is open");
    });
  }));

test.run();
