import { test } from "uvu";
import * as assert from "uvu/assert";
import { defaultConfig } from "../config.ts";
import { keptSession, placeKeep } from "../ending/keeps.ts";
import type { Store } from "../store/open.ts";
import { appendAudit } from "../store/audit.ts";
import { atTime, makeItem, withStore } from "../testing/items.ts";
import { transition } from "../work-items/transition.ts";
import { endSession, recordSession } from "../work-items/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import type { WorkItemState } from "../work-items/queries.ts";
import { recordCleanup } from "../cleanup/records.ts";
import type { CleanupState, NewCleanupRecord } from "../cleanup/records.ts";
import { cleanupProgress, issueLines, notFinished, rehearsalProgress, summaryCounts, waitForTheEnd } from "./rehearsal-end.ts";

const REPO = "demo/widgets";
const AT = "2026-01-15T09:00:00Z";

/** An item of `issue` walked to `state`, with a worker session recorded while it was active. */
function itemWithWorker(store: Store, issue: number, state: WorkItemState, attempts = 1): number {
  const item = makeItem(store, { issue, state: "active", at: AT });
  for (let attempt = 1; attempt <= attempts; attempt++) {
    recordSession(store, {
      id: `session-${issue}-${attempt}`, item: item.id, name: `ra-widgets-${issue}${attempt > 1 ? `-${attempt}` : ""}`, host: "here",
      launcher: "process", marker: `marker-${issue}-${attempt}`, worktree: `/wt/issue-${issue}`, branch: `robot-army/issue-${issue}`,
      started_at: AT, simulated: false,
    });
  }
  if (state !== "active") atTime(AT, () => transition(store, item.id, state, { reason: state === "done" ? "issue closed" : "the worker failed", issueClosedObserved: state === "done" }));
  return item.id;
}

/** Keeps `item` as the owner does (`robot-army keep`). */
async function keep(store: Store, item: number): Promise<void> {
  placeKeep(store, item, { worker: (await defaultConfig()).worker });
}

test("an issue that is not a work item yet, or an item on its way, is not finished, and says so", () =>
  withStore((store) => {
    itemWithWorker(store, 1, "active");
    const progress = rehearsalProgress(store, REPO, [1, 2], keptSession);
    assert.is(progress.finished, false);
    assert.equal(progress.issues.map((i) => i.finished), [false, false]);
    assert.is(notFinished(progress), "item 1 (demo/widgets#1) is active; demo/widgets#2 is not a work item yet");
  }));

test("a done item whose worker still runs, not kept, is not finished; retired, it is", () =>
  withStore((store) => {
    const item = itemWithWorker(store, 1, "done");
    const before = rehearsalProgress(store, REPO, [1], keptSession);
    assert.is(before.finished, false);
    assert.is(notFinished(before), "item 1's worker ra-widgets-1 is still running (not retired)");
    endSession(store, "session-1-1", "retired");
    const after = rehearsalProgress(store, REPO, [1], keptSession);
    assert.is(after.finished, true);
    assert.is(after.retired, 1);
    assert.is(after.done, 1);
    assert.is(after.issues[0].item?.id, item);
  }));

test("a done item whose worker's launch a crash cut short is not finished until that launch is settled: a worker no row records yet may run", () =>
  withStore((store) => {
    itemWithWorker(store, 1, "done");
    endSession(store, "session-1-1", "retired");
    appendAudit(store, { kind: "session.launch", phase: "intent", actionId: "launch-2", repo: REPO, item: 1, body: { session: "ra-widgets-1-2" } });
    const cut = rehearsalProgress(store, REPO, [1], keptSession);
    assert.is(notFinished(cut), "item 1's worker launch was cut short and is not settled yet");
    appendAudit(store, { kind: "session.launch", phase: "outcome", actionId: "launch-2", repo: REPO, item: 1, body: { ok: false, settled_from: "record" } });
    assert.is(rehearsalProgress(store, REPO, [1], keptSession).finished, true);
  }));

test("a done item whose worker ended otherwise (exited, lost) is finished, but no worker was retired", () =>
  withStore((store) => {
    itemWithWorker(store, 1, "done");
    endSession(store, "session-1-1", "exited", { code: 0 });
    const progress = rehearsalProgress(store, REPO, [1], keptSession);
    assert.is(progress.finished, true);
    assert.is(progress.retired, 0);
  }));

test("a kept worker of a done item is finished and counted kept; an earlier attempt's worker still running is not covered by the keep", () =>
  withStore(async (store) => {
    const kept = itemWithWorker(store, 2, "done");
    await keep(store, kept);
    const progress = rehearsalProgress(store, REPO, [2], keptSession);
    assert.is(progress.finished, true);
    assert.equal(progress.kept.map((s) => s.name), ["ra-widgets-2"]);
    assert.is(progress.issues[0].kept?.name, "ra-widgets-2");

    const twice = itemWithWorker(store, 3, "done", 2);
    await keep(store, twice);
    const both = rehearsalProgress(store, REPO, [3], keptSession);
    assert.is(both.finished, false, "the keep covers the current session only");
    assert.is(notFinished(both), "item 2's worker ra-widgets-3 is still running (not retired)");
    assert.equal(both.kept.map((s) => s.name), ["ra-widgets-3-2"]);
  }));

test("failed and abandoned items are finished: they keep their workers, which are counted as left to the owner", () =>
  withStore((store) => {
    itemWithWorker(store, 1, "failed");
    const abandoned = makeItem(store, { issue: 2, state: "abandoned", at: AT });
    const progress = rehearsalProgress(store, REPO, [1, 2], keptSession);
    assert.is(progress.finished, true);
    assert.is(progress.failed, 1);
    assert.is(progress.abandoned, 1);
    assert.equal(progress.leftToTheOwner.map((s: StoredSession) => s.name), ["ra-widgets-1"]);
    assert.is(progress.issues[1].item?.id, abandoned.id);
    assert.is(summaryCounts(progress, { stoppedNow: true, leftRunning: [] }),
      "0 items done, 1 failed, 1 abandoned, 0 workers retired, 1 worker of failed or abandoned items (stopped now), nothing left running");
  }));

test("the summary counts what the store holds: items done, workers retired, kept, and what is left running", () =>
  withStore(async (store) => {
    for (const issue of [1, 3]) {
      itemWithWorker(store, issue, "done");
      endSession(store, `session-${issue}-1`, "retired");
    }
    const kept = itemWithWorker(store, 2, "done");
    await keep(store, kept);
    const progress = rehearsalProgress(store, REPO, [1, 2, 3], keptSession);
    assert.is(progress.finished, true);
    assert.is(summaryCounts(progress, { stoppedNow: true, leftRunning: [] }), "3 items done, 2 workers retired, 1 kept (stopped now), nothing left running");
    assert.is(summaryCounts(progress, { stoppedNow: true, leftRunning: ["ra-widgets-2"] }),
      "3 items done, 2 workers retired, 1 kept (stopped now), still running after the stop: ra-widgets-2");
    assert.is(summaryCounts(progress, { stoppedNow: false, leftRunning: [] }), "3 items done, 2 workers retired, 1 kept, still running");
  }));

test("an issue labelled again after its item finished is read by its newest item", () =>
  withStore((store) => {
    itemWithWorker(store, 1, "done");
    endSession(store, "session-1-1", "retired");
    makeItem(store, { issue: 1, state: "ready", at: AT });
    const progress = rehearsalProgress(store, REPO, [1], keptSession);
    assert.is(progress.finished, false);
    assert.is(notFinished(progress), "item 2 (demo/widgets#1) is ready");
  }));

/** A cleanup decision about `item`'s worktree, as the pass records it. */
function decide(store: Store, item: number, state: CleanupState, reason: string, more: Partial<NewCleanupRecord> = {}): void {
  const gone = state === "done" || state === "branch_retained";
  recordCleanup(store, {
    item, state, reason, worktree_path: `/wt/issue-${item}`, branch: `robot-army/issue-${item}`,
    worktree: gone ? "removed" : "kept", branch_outcome: state === "done" ? "deleted" : state === "branch_retained" ? "kept" : "not_attempted",
    proof: null, tip: null, bundle: null, restore: null, by: "pass", simulated: false, at: AT, ...more,
  });
}

test("the reclaiming is finished once every done item has a cleanup decision that is not skipped; items not done are not waited for", () =>
  withStore((store) => {
    const one = itemWithWorker(store, 1, "done");
    const two = itemWithWorker(store, 2, "done");
    itemWithWorker(store, 3, "failed");
    const read = () => cleanupProgress(store, rehearsalProgress(store, REPO, [1, 2, 3], keptSession));
    assert.is(read().finished, false);
    assert.equal(read().waiting, ["item 1 (demo/widgets#1) has no cleanup decision yet", "item 2 (demo/widgets#2) has no cleanup decision yet"]);
    decide(store, one, "done", "every guard passed");
    decide(store, two, "skipped", "session ra-widgets-2 is open");
    assert.equal(read().waiting, ["item 2's cleanup was skipped: session ra-widgets-2 is open"], "skipped is the one state the pass comes back to: not a decision to end on");
    decide(store, two, "retained", "git refused: contains modified or untracked files");
    const done = read();
    assert.is(done.finished, true, "retained is a decision");
    assert.equal(done.items.map((i) => [i.issue, i.cleanup?.state]), [[1, "done"], [2, "retained"]]);
  }));

test("the summary's line per issue: its state, how the owner merged it, and what became of its worktree", () =>
  withStore((store) => {
    const items = [1, 2, 3, 4].map((issue) => itemWithWorker(store, issue, "done"));
    itemWithWorker(store, 5, "failed");
    decide(store, items[0], "done", "every guard passed");
    decide(store, items[1], "done", "every guard passed");
    decide(store, items[2], "branch_retained", "its commits are not proven on origin");
    const progress = rehearsalProgress(store, REPO, [1, 2, 3, 4, 5, 6], keptSession);
    const how: Record<number, string> = { 1: "merge commit", 2: "squash, its branch deleted on the forge", 3: "merge commit" };
    assert.equal(issueLines(progress, cleanupProgress(store, progress), (item) => how[item.issue]), [
      "#1 done · merged (merge commit) · worktree reclaimed: done",
      "#2 done · merged (squash, its branch deleted on the forge) · worktree reclaimed: done",
      "#3 done · merged (merge commit) · worktree reclaimed: branch_retained (its commits are not proven on origin)",
      "#4 done · not merged by the owner · worktree not reclaimed: no cleanup decision",
      "#5 failed · not merged by the owner",
      "#6 not a work item",
    ]);
    decide(store, items[3], "retained", "git refused:\x1b[31m dirty");
    assert.is(issueLines(progress, cleanupProgress(store, progress), () => undefined)[3], "#4 done · not merged by the owner · worktree kept: retained (git refused:\\u001b[31m dirty)", "a reason is printed escaped");
  }));

test("the wait gives up at its limit with where things stood, and ends at once when finished or stopped", () =>
  withStore(async (store) => {
    itemWithWorker(store, 1, "active");
    const check = () => rehearsalProgress(store, REPO, [1], keptSession);
    const started = Date.now();
    const gaveUp = await waitForTheEnd({ check, limitMs: 300, everyMs: 50, stopped: () => false });
    assert.is(gaveUp.how, "gave-up");
    assert.ok(Date.now() - started >= 300, "it waited the whole limit");
    assert.is(notFinished(gaveUp.progress!), "item 1 (demo/widgets#1) is active");

    const stopped = await waitForTheEnd({ check, limitMs: Infinity, everyMs: 50, stopped: () => Date.now() - started > 400 });
    assert.is(stopped.how, "stopped");

    let looks = 0;
    const finishing = await waitForTheEnd({
      check: () => {
        if (++looks === 3) {
          atTime(AT, () => transition(store, 1, "done", { reason: "issue closed", issueClosedObserved: true }));
          endSession(store, "session-1-1", "retired");
        }
        return check();
      },
      limitMs: 5_000, everyMs: 10, stopped: () => false,
    });
    assert.is(finishing.how, "finished");
    assert.is(looks, 3);
  }));

test("a look that cannot read the store counts as not finished, and the wait looks again", () =>
  withStore(async (store) => {
    itemWithWorker(store, 1, "done");
    endSession(store, "session-1-1", "retired");
    let looks = 0;
    const result = await waitForTheEnd({
      check: () => {
        if (++looks < 3) throw new Error("database is locked");
        return rehearsalProgress(store, REPO, [1], keptSession);
      },
      limitMs: 5_000, everyMs: 10, stopped: () => false,
    });
    assert.is(result.how, "finished");
    assert.is(looks, 3);
  }));

test.run();
