import { test } from "uvu";
import * as assert from "uvu/assert";
import { appendAudit, queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import type { Exit } from "../sessions/spool.ts";
import { makeItem, withStore } from "../testing/items.ts";
import { getItem } from "../work-items/queries.ts";
import type { WorkItemState } from "../work-items/queries.ts";
import { recordSession, sessionById } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";
import { closeFromExit } from "./worker-ended.ts";

const BRANCH = "robot-army/issue-7";

/** An active item of demo/widgets#7 with one open session on BRANCH (started 2026-01-15T10:00:00Z); its id. */
function activeItem(store: Store, state: WorkItemState = "active"): number {
  const item = makeItem(store, { issue: 7, state: "active" }).id;
  if (state !== "active") transition(store, item, state, { reason: state });
  recordSession(store, {
    id: "s1", item, name: "ra-widgets-7", host: "testhost", launcher: "process", marker: "m", worktree: "/w/7", branch: BRANCH,
    started_at: "2026-01-15T10:00:00Z", simulated: false,
  });
  return item;
}

/** GitHub answered for demo/widgets after the session started, with these pull requests of its branches. */
function pullsRefreshed(store: Store, pulls: Array<{ number: number; state: "open" | "closed"; merged_at?: string; branch?: string }>): void {
  for (const pull of pulls) {
    store.statement(
      `INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at)
       VALUES ('demo/widgets', ?, ?, 'abc', ?, ?, '2026-01-15T11:00:00Z', ?, '2026-01-15T11:00:00Z')`,
    ).run(pull.number, pull.branch ?? BRANCH, pull.state, pull.merged_at ?? null, `https://github.example/demo/widgets/pull/${pull.number}`);
  }
  store.statement("INSERT INTO pull_request_refreshes (repo, refreshed_at) VALUES ('demo/widgets', '2026-01-15T11:00:00Z')").run();
}

const exited = (code: number, command = "claude"): Exit => ({ ended: "exited", code, signal: null, at: "2026-01-15T12:00:00Z", command });

/** The item's state and reason, and the reason its last audit record gives. */
function after(store: Store, item: number): [WorkItemState, string | null, unknown] {
  const found = getItem(store, item)!;
  return [found.state, found.reason, queryAudit(store, { kind: "state.work_item", item }).at(-1)!.body.reason];
}

test("exit 0 with a pull request open from its branch: the item awaits review, the pull request named", () =>
  withStore((store) => {
    const item = activeItem(store);
    pullsRefreshed(store, [{ number: 3, state: "closed" }, { number: 4, state: "open" }, { number: 9, state: "open", branch: "someone/else" }]);
    const ended = closeFromExit(store, { id: "s1", item }, exited(0))!;
    assert.equal([ended.moved, ended.state, ended.endReason], [true, "awaiting_review", "exited"]);
    assert.equal(after(store, item), ["awaiting_review", "worker exited 0; pull request #4 is open", "worker exited 0; pull request #4 is open"]);
    assert.equal([sessionById(store, "s1")!.end_reason, sessionById(store, "s1")!.exit_code], ["exited", 0]);
  }));

test("exit 0 with its pull request already merged awaits review too: the issue it closes makes it done", () =>
  withStore((store) => {
    const item = activeItem(store);
    pullsRefreshed(store, [{ number: 5, state: "closed", merged_at: "2026-01-15T11:00:00Z" }]);
    assert.is(closeFromExit(store, { id: "s1", item }, exited(0))!.state, "awaiting_review");
    assert.is(getItem(store, item)!.reason, "worker exited 0; pull request #5 is merged");
  }));

test("exit 0 with no pull request: interrupted, saying so; with pull requests not checked yet, saying that instead", async () => {
  await withStore((store) => {
    const item = activeItem(store);
    pullsRefreshed(store, []);
    const ended = closeFromExit(store, { id: "s1", item }, exited(0))!;
    assert.equal([ended.moved, ended.state, ended.why], [true, "interrupted", "worker exited 0 with no pull request"]);
  });
  await withStore((store) => {
    const item = activeItem(store);
    pullsRefreshed(store, [{ number: 3, state: "closed" }]);
    assert.equal(after(store, closeFromExit(store, { id: "s1", item }, exited(0))!.item)[1], "worker exited 0 with no pull request open (#3 was closed unmerged)");
  });
  await withStore((store) => {
    const item = activeItem(store);
    assert.equal(after(store, closeFromExit(store, { id: "s1", item }, exited(0))!.item), ["interrupted", "worker exited 0 with no pull request known yet", "worker exited 0 with no pull request known yet"]);
  });
});

test("exit 1 fails the item", () =>
  withStore((store) => {
    const item = activeItem(store);
    pullsRefreshed(store, [{ number: 4, state: "open" }]);
    const ended = closeFromExit(store, { id: "s1", item }, exited(1))!;
    assert.equal([ended.moved, ended.state], [true, "failed"]);
    assert.equal(after(store, item), ["failed", "worker exited (code 1)", "worker exited (code 1)"]);
  }));

test("exit 126 fails the item: not executable, naming the worker's command", () =>
  withStore((store) => {
    const item = activeItem(store);
    closeFromExit(store, { id: "s1", item }, exited(126, "/opt/agents/claude"));
    assert.equal(after(store, item).slice(0, 2), ["failed", 'worker "/opt/agents/claude" exited (code 126): not executable']);
  }));

test("exit 127 fails the item: command not found, naming the worker's command; an exit record from before the command was kept names none", async () => {
  await withStore((store) => {
    const item = activeItem(store);
    closeFromExit(store, { id: "s1", item }, exited(127, "claude"));
    assert.equal(after(store, item).slice(0, 2), ["failed", 'worker "claude" exited (code 127): command not found']);
  });
  await withStore((store) => {
    const item = activeItem(store);
    closeFromExit(store, { id: "s1", item }, { ended: "exited", code: 127, signal: null, at: "2026-01-15T12:00:00Z" });
    assert.equal(after(store, item).slice(0, 2), ["failed", "worker exited (code 127): command not found"]);
  });
});

test("a command that could not be started at all fails the item, naming it", () =>
  withStore((store) => {
    const item = activeItem(store);
    const ended = closeFromExit(store, { id: "s1", item }, { ended: "failed-to-start", code: null, signal: null, at: "2026-01-15T12:00:00Z", command: "claude" })!;
    assert.equal([ended.endReason, ended.state, ended.why], ["crashed", "failed", 'worker "claude" failed to start']);
  }));

test("exit 128+N (N a signal's number) and a death by a signal interrupt the item, naming the signal", async () => {
  await withStore((store) => {
    const item = activeItem(store);
    pullsRefreshed(store, [{ number: 4, state: "open" }]);
    const ended = closeFromExit(store, { id: "s1", item }, exited(143))!;
    assert.equal([ended.state, ended.why], ["interrupted", "worker ended by SIGTERM (exit code 143)"]);
  });
  await withStore((store) => {
    const item = activeItem(store);
    assert.equal(after(store, closeFromExit(store, { id: "s1", item }, exited(130))!.item)[1], "worker ended by SIGINT (exit code 130)");
  });
  await withStore((store) => {
    const item = activeItem(store);
    const ended = closeFromExit(store, { id: "s1", item }, { ended: "crashed", code: null, signal: "SIGKILL", at: "2026-01-15T12:00:00Z", command: "claude" })!;
    assert.equal([ended.endReason, ended.state, ended.why], ["crashed", "interrupted", "worker ended by SIGKILL"]);
  });
});

test("a worker stopped from outside interrupts the item as killed, whatever its code", () =>
  withStore((store) => {
    const item = activeItem(store);
    pullsRefreshed(store, [{ number: 4, state: "open" }]);
    const ended = closeFromExit(store, { id: "s1", item }, { ended: "killed", code: 0, signal: null, at: "2026-01-15T12:00:00Z" })!;
    assert.equal([ended.endReason, ended.state, ended.why], ["killed", "interrupted", "worker was killed"]);
  }));

test("a worker killed while its retirement, cut short by a crash, was under way was retired: its row says so, its done item stays done", () =>
  withStore((store) => {
    const item = activeItem(store);
    transition(store, item, "done", { reason: "issue closed", issueClosedObserved: true });
    const retire = { kind: "session.retire", repo: "demo/widgets", item, sessionId: "s1", actionId: "a-1" } as const;
    appendAudit(store, { ...retire, phase: "intent", body: { session: "ra-widgets-7", signal: "merged_pull_request" } });
    const killed = { ended: "killed", code: null, signal: "SIGTERM", at: "2026-01-15T12:00:00Z" } as const;
    assert.is(closeFromExit(store, { id: "s1", item }, killed)!.endReason, "retired");
    assert.is(sessionById(store, "s1")!.end_reason, "retired");
    assert.is(getItem(store, item)!.state, "done");
    // Once that retirement has its outcome, a later kill is an outside one.
    appendAudit(store, { ...retire, phase: "outcome", body: { ok: false, found: "still running" } });
    recordSession(store, { id: "s2", item, name: "ra-widgets-7-2", host: "testhost", launcher: "process", marker: "m", worktree: "/w/7", branch: BRANCH, started_at: "2026-01-15T11:00:00Z", simulated: false });
    appendAudit(store, { ...retire, sessionId: "s2", actionId: "a-2", phase: "intent", body: {} });
    appendAudit(store, { ...retire, sessionId: "s2", actionId: "a-2", phase: "outcome", body: { ok: false } });
    assert.is(closeFromExit(store, { id: "s2", item }, killed)!.endReason, "killed");
  }));

test("any other code interrupts the item with the code: 2, 3, 125, 128 and 255 (128+127 is no signal)", async () => {
  for (const code of [2, 3, 125, 128, 255]) {
    await withStore((store) => {
      const item = activeItem(store);
      assert.equal(after(store, closeFromExit(store, { id: "s1", item }, exited(code))!.item).slice(0, 2), ["interrupted", `worker exited (code ${code})`]);
    });
  }
});

test("a worker that exits 0 while it waits for the owner (needs_info) with a pull request open leaves it for review", () =>
  withStore((store) => {
    const item = activeItem(store, "needs_info");
    pullsRefreshed(store, [{ number: 4, state: "open" }]);
    assert.is(closeFromExit(store, { id: "s1", item }, exited(0))!.state, "awaiting_review");
  }));

test("an item already interrupted or done stays as it is whatever the exit says", async () => {
  for (const state of ["interrupted", "done"] as const) {
    await withStore((store) => {
      const item = activeItem(store);
      transition(store, item, state, { reason: state, issueClosedObserved: true });
      const ended = closeFromExit(store, { id: "s1", item }, exited(1))!;
      assert.equal([ended.moved, ended.state], [false, state]);
    });
  }
});


test("every end keeps the worker's last lines for the owner's decision: a quick exit as one, a later end as session.last_lines; none when it printed nothing", () =>
  withStore((store) => {
    const item = activeItem(store);
    closeFromExit(store, { id: "s1", item }, { ...exited(1), ended: "crashed", ran_seconds: 600, last_lines: ["Error: out of memory"] });
    assert.equal(queryAudit(store, { kind: "session.last_lines", item }).map((r) => [r.sessionId, r.body.code, r.body.last_lines]), [["s1", 1, ["Error: out of memory"]]]);
    assert.equal(queryAudit(store, { kind: "session.quick_exit", item }), []);
    recordSession(store, {
      id: "s2", item, name: "ra-widgets-7", host: "testhost", launcher: "process", marker: "m", worktree: "/w/7", branch: BRANCH,
      started_at: "2026-01-15T12:30:00Z", simulated: false,
    });
    closeFromExit(store, { id: "s2", item }, { ...exited(0), ran_seconds: 900, last_lines: [] });
    assert.equal(queryAudit(store, { kind: "session.last_lines", item }).length, 1, "nothing kept of an end that printed nothing");
  }));

test.run();
