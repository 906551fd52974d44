import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gitHubMemory } from "../lib/boundaries/github-state.ts";
import { writeHeartbeat } from "../lib/daemon/heartbeat.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { identify } from "../lib/processes.ts";
import { acknowledgeAnomaly, raiseAnomaly } from "../lib/store/anomalies.ts";
import { appendAudit } from "../lib/store/audit.ts";
import { hold, pause, unpause } from "../lib/dispatch/controls.ts";
import { recordChangedSettings } from "../lib/repos/records.ts";
import { atTime, atTimeAsync, configWithRepos, makeItem, onboard, withStore } from "../lib/testing/items.ts";
import { openExistingStore } from "../lib/store/open.ts";
import { recordSession } from "../lib/work-items/sessions.ts";
import { transition } from "../lib/work-items/transition.ts";
import type { Store } from "../lib/store/open.ts";
import { command, run, statusFilter } from "./status.ts";
import { parse } from "../lib/cli.ts";
import { UsageError } from "../lib/errors.ts";
import type { StatusReport } from "../lib/reports/status.ts";

async function status(store: Store | undefined, argv: { includeSimulated?: boolean; json?: boolean; stateDir?: string; filter?: string[] } = {}, priorities = { "demo/widgets": 0, "demo/urgent": 3 }): Promise<string> {
  let text = "";
  const config = await configWithRepos(priorities);
  const filter = argv.filter ? statusFilter(parse(command, argv.filter)) : null;
  await atTimeAsync("2026-01-15T10:00:00Z", () =>
    run({ includeSimulated: argv.includeSimulated ?? false, json: argv.json ?? false, filter }, { config, store, stateDir: argv.stateDir ?? "/nonexistent-robot-army-state", write: (chunk) => (text += chunk) }));
  return text;
}

test("with no database, status says there is nothing and creates nothing", () =>
  withTempDir(async (dir) => {
    const stateDir = join(dir, "state");
    const store = await openExistingStore(stateDir);
    assert.is(await status(store, { stateDir }), "daemon: never run with this state dir\nwork items: none\nqueue: empty\nrate limit: not yet seen\nanomalies: none\n");
    const json = JSON.parse(await status(store, { json: true })) as StatusReport;
    assert.equal([json.total, json.paused, json.queue, json.held, json.untrusted, json.rate_limit, json.simulated_hidden, json.counts.ready], [0, null, [], [], [], null, 0, 0]);
    assert.not.ok(existsSync(stateDir));
  }));

test("counts by state, then the queue in dispatch order with positions, priorities first", () =>
  withStore(async (store) => {
    onboard(store, "demo/widgets", "demo/urgent");
    makeItem(store, { issue: 1, at: "2026-01-15T07:00:00Z", title: "Oldest" });
    makeItem(store, { issue: 2, at: "2026-01-15T08:00:00Z", title: "Newer" });
    makeItem(store, { repo: "demo/urgent", issue: 9, at: "2026-01-15T09:00:00Z", title: "Urgent" });
    makeItem(store, { issue: 3, state: "active" });
    makeItem(store, { issue: 4, state: "failed" });
    makeItem(store, { issue: 5, state: "discovered" });
    const text = await status(store);
    assert.is(text, [
      "daemon: never run with this state dir",
      "work items: 6",
      "  discovered  1",
      "  ready       3",
      "  active      1",
      "  failed      1",
      "needs you: 1",
      "  demo/widgets#4  item 5  failed: worktree could not be made: disk full  (robot-army show 5; robot-army retry 5)",
      "queue: 3 ready, in dispatch order",
      '  1. demo/urgent#9  item 3  "Urgent"  priority 3',
      '  2. demo/widgets#1  item 1  "Oldest"  priority 0',
      '  3. demo/widgets#2  item 2  "Newer"  priority 0',
      "rate limit: not yet seen",
      "anomalies: none",
      "",
    ].join("\n"));
    const json = JSON.parse(await status(store, { json: true })) as StatusReport;
    assert.equal(json.counts, { discovered: 1, ready: 3, dispatching: 0, active: 1, awaiting_review: 0, interrupted: 0, needs_info: 0, failed: 1, done: 0, abandoned: 0 });
    assert.equal(json.queue.map((q) => [q.position, q.repo, q.issue, q.priority]), [[1, "demo/urgent", 9, 3], [2, "demo/widgets", 1, 0], [3, "demo/widgets", 2, 0]]);
  }));

test("--state and --repo narrow the counts, the queue and what needs you to those items, and list each with its state and why", () =>
  withStore(async (store) => {
    onboard(store, "demo/widgets", "demo/urgent");
    makeItem(store, { issue: 1, at: "2026-01-15T07:00:00Z", title: "Oldest" });
    makeItem(store, { repo: "demo/urgent", issue: 9, at: "2026-01-15T09:00:00Z", title: "Urgent" });
    makeItem(store, { issue: 4, state: "failed", title: "Broken" });
    makeItem(store, { repo: "demo/urgent", issue: 5, state: "failed", title: "Also broken" });
    makeItem(store, { issue: 6, state: "active", title: "Busy" });
    const text = await status(store, { filter: ["--state", "failed,ready", "--repo", "demo/widgets"] });
    assert.is(text, [
      "daemon: never run with this state dir",
      "work items (state failed or ready, repository demo/widgets): 2",
      "  ready   1",
      "  failed  1",
      '  demo/widgets#1  item 1  "Oldest"  ready: repository onboarded',
      '  demo/widgets#4  item 3  "Broken"  failed: worktree could not be made: disk full',
      "needs you: 1",
      "  demo/widgets#4  item 3  failed: worktree could not be made: disk full  (robot-army show 3; robot-army retry 3)",
      // Its place in the whole queue: demo/urgent#9 goes first.
      "queue: 1 ready, in dispatch order",
      '  2. demo/widgets#1  item 1  "Oldest"  priority 0',
      "rate limit: not yet seen",
      "anomalies: none",
      "",
    ].join("\n"));
    const json = JSON.parse(await status(store, { json: true, filter: ["--state", "failed"] })) as StatusReport & { items: Array<{ id: number; state: string }>; filter: unknown };
    assert.equal([json.total, json.items.map((i) => [i.id, i.state]), json.queue, json.filter], [2, [[3, "failed"], [4, "failed"]], [], { states: ["failed"], repo: null }]);
    assert.equal(json.needs_you.map((n) => n.item?.id), [3, 4]);
    // Without a filter, the report is whole and lists no items.
    assert.not.ok("items" in (JSON.parse(await status(store, { json: true })) as object));
    assert.throws(() => statusFilter(parse(command, ["--state", "faild"])), (e: Error) => e instanceof UsageError && e.message.startsWith('Unknown state "faild" (did you mean failed?)'));
    assert.throws(() => statusFilter(parse(command, ["--repo", "widgets"])), (e: Error) => e instanceof UsageError && e.message.includes('--repo must be written owner/name, got "widgets"'));
  }));

test("needs you: items whose worker asked something, with the question and attach, then failed ones with show and retry; --json has them", () =>
  withStore(async (store) => {
    const asking = makeItem(store, { issue: 3, state: "active", at: "2026-01-15T08:00:00Z" });
    atTime("2026-01-15T09:30:00Z", () => transition(store, asking.id, "needs_info", { reason: "worker asks: which database?\u001b[2J" }));
    makeItem(store, { issue: 4, state: "failed", at: "2026-01-15T09:00:00Z" });
    makeItem(store, { issue: 5, state: "active" });
    makeItem(store, { issue: 6, state: "failed", simulated: true });
    const text = await status(store);
    assert.match(text, [
      "needs you: 2",
      "  demo/widgets#3  item 1  the worker asks you: which database?\\u001b[2J  (robot-army attach 1; robot-army show 1)",
      "  demo/widgets#4  item 2  failed: worktree could not be made: disk full  (robot-army show 2; robot-army retry 2)",
      "queue: empty",
    ].join("\n"));
    const json = JSON.parse(await status(store, { json: true })) as StatusReport;
    assert.equal(json.needs_you.map((n) => [n.item?.id, n.kind, n.what, n.since, n.commands]), [
      [1, "needs_info", "which database?\u001b[2J", "2026-01-15T09:30:00Z", ["robot-army attach 1", "robot-army show 1"]],
      [2, "failed", "worktree could not be made: disk full", "2026-01-15T09:00:00Z", ["robot-army show 2", "robot-army retry 2"]],
    ]);
    assert.is((JSON.parse(await status(store, { json: true, includeSimulated: true })) as StatusReport).needs_you.length, 3);
    transition(store, asking.id, "active", { reason: "the worker is at work again" });
    assert.not.match(await status(store), "the worker asks you:");
  }));

test("needs you: an interrupted item with how its worker ended and resume, an item awaiting review with its pull request to review", () =>
  withStore(async (store) => {
    const stopped = makeItem(store, { issue: 3, state: "active", at: "2026-01-15T08:00:00Z" });
    atTime("2026-01-15T09:00:00Z", () => transition(store, stopped.id, "interrupted", { reason: "worker ended by SIGTERM (exit code 143)" }));
    const reviewed = makeItem(store, { issue: 4, state: "active", at: "2026-01-15T08:00:00Z" });
    recordSession(store, {
      id: "s4", item: reviewed.id, name: "ra-widgets-4", host: "h", launcher: "process", marker: "m", worktree: "/w/4", branch: "robot-army/issue-4",
      started_at: "2026-01-15T08:00:00Z", simulated: false,
    });
    // What a refresh writes (lib/intake/pull-requests.test.ts reads them from the forge).
    store.statement("INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at) VALUES ('demo/widgets', 12, 'robot-army/issue-4', 'abc', 'open', NULL, '2026-01-15T09:00:00Z', 'https://github.example/demo/widgets/pull/12', '2026-01-15T09:00:00Z')").run();
    store.statement("INSERT INTO pull_request_refreshes VALUES ('demo/widgets', '2026-01-15T09:00:00Z')").run();
    atTime("2026-01-15T09:30:00Z", () => transition(store, reviewed.id, "awaiting_review", { reason: "worker exited 0; pull request #12 is open" }));
    assert.match(await status(store), [
      "needs you: 2",
      "  demo/widgets#3  item 1  interrupted: worker ended by SIGTERM (exit code 143)  (robot-army resume 1; robot-army restart 1; robot-army show 1)",
      "  demo/widgets#4  item 2  awaiting your review: worker exited 0; pull request #12 is open  (review https://github.example/demo/widgets/pull/12; robot-army show 2; robot-army resume 2)",
    ].join("\n"));
    const json = JSON.parse(await status(store, { json: true })) as StatusReport;
    assert.equal(json.needs_you.map((n) => [n.item?.id, n.kind, n.commands[0], n.review ?? null]), [
      [1, "interrupted", "robot-army resume 1", null],
      [2, "awaiting_review", "robot-army show 2", { number: 12, url: "https://github.example/demo/widgets/pull/12", merged: false }],
    ]);
  }));

test("the daemon: never run, running (its lock's pid and start time), stopped; and why the last tick withheld dispatch", () =>
  withStore(async (store, dir) => {
    const stateDir = join(dir, "daemon-state");
    mkdirSync(stateDir);
    assert.match(await status(store, { stateDir }), /^daemon: never run with this state dir\n/);
    writeHeartbeat(stateDir, { pid: process.pid, at: "2026-01-15T09:59:00Z", tick: 7, next_at: "2026-01-15T10:00:30Z", last_poll_at: null });
    writeFileSync(join(stateDir, "daemon.lock"), JSON.stringify({ ...identify(process.pid), at: "2026-01-15T09:00:00Z" }));
    appendAudit(store, { kind: "reconcile.pass", body: { dispatch: { withheld: "paused since 2026-01-15T09:00:00Z: no worker session is dispatched until \"robot-army unpause\"" } } });
    const running = await status(store, { stateDir });
    assert.ok(running.startsWith([
      `daemon: running (pid ${process.pid}), last tick 7 at 2026-01-15T09:59:00Z, next at 2026-01-15T10:00:30Z`,
      "dispatch: withheld at the last tick: paused since 2026-01-15T09:00:00Z: no worker session is dispatched until \"robot-army unpause\"",
      "",
    ].join("\n")), running);
    // The lock names a pid whose start time is another's: that daemon is gone.
    writeFileSync(join(stateDir, "daemon.lock"), JSON.stringify({ pid: process.pid, started_at: "2020-01-01T00:00:00.000Z", at: "x" }));
    appendAudit(store, { kind: "reconcile.pass", body: { dispatch: { withheld: null } } });
    const stopped = await status(store, { stateDir });
    assert.match(stopped, new RegExp(`^daemon: not running \\(last was pid ${process.pid}, last tick 7 at 2026-01-15T09:59:00Z\\)\nwork items`));
    const json = JSON.parse(await status(store, { stateDir, json: true })) as StatusReport;
    assert.equal(json.daemon, { state: "stopped", pid: process.pid, tick: 7, last_tick_at: "2026-01-15T09:59:00Z", next_tick_at: null, withheld: null });
  }));

test("ready items of a repository that is not trusted here are untrusted, apart, with why and what trusts it", () =>
  withStore(async (store) => {
    onboard(store, "demo/widgets", "demo/urgent", "demo/gone");
    recordChangedSettings(store, "demo/urgent", { path: "/src/urgent", private: true });
    makeItem(store, { issue: 1 });
    makeItem(store, { repo: "demo/urgent", issue: 9, title: "Urgent" });
    makeItem(store, { repo: "demo/new", issue: 4, title: "New" });
    makeItem(store, { repo: "demo/gone", issue: 5, title: "Gone" });
    const priorities = { "demo/widgets": 0, "demo/urgent": 3, "demo/new": 0 };
    const text = await status(store, {}, priorities);
    assert.match(text, 'queue: 1 ready, in dispatch order\n  1. demo/widgets#1  item 1  "Issue 1"  priority 0\n');
    assert.match(text, [
      "untrusted: 3 ready, not dispatched until their repositories are trusted on this machine",
      '  demo/urgent#9  item 2  "Urgent"  demo/urgent needs reapproval; "robot-army onboard demo/urgent --reapprove"',
      '  demo/new#4  item 3  "New"  demo/new not onboarded; "robot-army onboard demo/new"',
      '  demo/gone#5  item 4  "Gone"  demo/gone not in the config; add [repos."demo/gone"] to the config',
      "",
    ].join("\n"));
    assert.not.match(text, "held");
    const json = JSON.parse(await status(store, { json: true }, priorities)) as StatusReport;
    assert.equal(json.held, []);
    assert.equal(json.untrusted.map((u) => [u.id, u.reason, u.remedy]), [
      [2, "needs reapproval", '"robot-army onboard demo/urgent --reapprove"'],
      [3, "not onboarded", '"robot-army onboard demo/new"'],
      [4, "not in the config", 'add [repos."demo/gone"] to the config'],
    ]);
  }));

test("the queue is what dispatch takes: items you held and the pause are shown apart, each with the way out, and under \"needs you\"", () =>
  withStore(async (store) => {
    onboard(store, "demo/widgets", "demo/urgent");
    makeItem(store, { issue: 1, at: "2026-01-15T07:00:00Z", title: "Oldest" });
    makeItem(store, { issue: 2, at: "2026-01-15T08:00:00Z", title: "Newer" });
    makeItem(store, { repo: "demo/urgent", issue: 9, at: "2026-01-15T09:00:00Z", title: "Urgent" });
    makeItem(store, { issue: 3, at: "2026-01-15T09:30:00Z", title: "Newest" });
    atTime("2026-01-15T09:40:00Z", () => {
      hold(store, { item: 1 }, { reason: "waiting on the design" });
      hold(store, { repo: "demo/urgent" });
      pause(store, { reason: "release freeze" });
    });
    const text = await status(store);
    assert.match(text, [
      "work items: 4",
      "  ready  4",
      "needs you: 3",
      "  dispatch paused: release freeze  (robot-army unpause)",
      "  demo/urgent#9  item 3  held by you: held  (robot-army unhold --repo demo/urgent)",
      "  demo/widgets#1  item 1  held by you: waiting on the design  (robot-army unhold 1)",
      'paused: since 2026-01-15T09:40:00Z (release freeze); nothing is dispatched until "robot-army unpause"',
      "queue: 2 ready, in dispatch order",
      '  1. demo/widgets#2  item 2  "Newer"  priority 0',
      '  2. demo/widgets#3  item 4  "Newest"  priority 0',
      "held by you: 2 ready, not dispatched until unheld",
      '  demo/urgent#9  item 3  "Urgent"  repository held; "robot-army unhold --repo demo/urgent"',
      '  demo/widgets#1  item 1  "Oldest"  held (waiting on the design); "robot-army unhold 1"',
      "rate limit: ",
    ].join("\n"));
    const json = JSON.parse(await status(store, { json: true })) as StatusReport;
    assert.equal(json.paused, { since: "2026-01-15T09:40:00Z", reason: "release freeze" });
    assert.equal(json.queue.map((q) => [q.position, q.id]), [[1, 2], [2, 4]]);
    assert.equal(json.held.map((h) => [h.id, h.hold, h.unhold]), [
      [3, { on: "repository", reason: null, set_at: "2026-01-15T09:40:00Z" }, "robot-army unhold --repo demo/urgent"],
      [1, { on: "item", reason: "waiting on the design", set_at: "2026-01-15T09:40:00Z" }, "robot-army unhold 1"],
    ]);
    assert.equal(json.untrusted, []);
    assert.equal(json.needs_you.map((n) => [n.kind, n.item?.id ?? null, n.commands]), [
      ["paused", null, ["robot-army unpause"]], ["held", 3, ["robot-army unhold --repo demo/urgent"]], ["held", 1, ["robot-army unhold 1"]],
    ]);
    unpause(store);
    assert.not.match(await status(store), "paused");
  }));

test("simulated items are hidden and counted, and shown with --include-simulated", () =>
  withStore(async (store) => {
    onboard(store, "demo/widgets");
    makeItem(store, { issue: 1 });
    for (const issue of [2, 3, 4]) makeItem(store, { issue, simulated: true });
    const hidden = await status(store);
    assert.match(hidden, "work items: 1\n");
    assert.match(hidden, "queue: 1 ready");
    assert.match(hidden, "3 simulated items hidden; --include-simulated shows them\n");
    assert.not.match(hidden, "demo/widgets#2");
    const shown = await status(store, { includeSimulated: true });
    assert.match(shown, "work items: 4\n");
    assert.match(shown, '  4. demo/widgets#4  item 4  "Issue 4"  (simulated)  priority 0');
    assert.not.match(shown, "hidden");
    assert.is((JSON.parse(await status(store, { json: true })) as StatusReport).simulated_hidden, 3);
  }));

test("one simulated item hidden is said in the singular", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 1, simulated: true });
    assert.match(await status(store), "1 simulated item hidden; --include-simulated shows them");
  }));

test("the rate limit the GitHub boundary recorded is shown, with the optional requests slowed while under a quarter is left and a deferral while it lasts", () =>
  withStore(async (store) => {
    const memory = gitHubMemory(store, "https://api.github.com");
    memory.saveRateLimit({ limit: 5000, remaining: 4321, reset: "2026-01-15T10:30:00Z", deferredUntil: null, deferredFor: null });
    assert.match(await status(store), "rate limit: 4321 of 5000 left, resets at 2026-01-15T10:30:00Z\n");
    memory.saveRateLimit({ limit: 5000, remaining: 1249, reset: "2026-01-15T10:30:00Z", deferredUntil: null, deferredFor: null });
    assert.match(await status(store), "rate limit: 1249 of 5000 left, resets at 2026-01-15T10:30:00Z; under a quarter left: pull requests and heartbeats slowed\n");
    memory.saveRateLimit({ limit: 5000, remaining: 10, reset: "2026-01-15T10:30:00Z", deferredUntil: "2026-01-15T10:30:00Z", deferredFor: "floor" });
    assert.match(await status(store), "rate limit: 10 of 5000 left, resets at 2026-01-15T10:30:00Z; calls deferred until 2026-01-15T10:30:00Z, but claims and heartbeats\n");
    memory.saveRateLimit({ limit: 5000, remaining: 0, reset: "2026-01-15T10:30:00Z", deferredUntil: "2026-01-15T10:30:00Z", deferredFor: "used up" });
    assert.match(await status(store), "rate limit: 0 of 5000 left, resets at 2026-01-15T10:30:00Z; calls deferred until 2026-01-15T10:30:00Z\n", "a used-up limit holds back claims and heartbeats too");
    memory.saveRateLimit({ limit: 5000, remaining: 10, reset: "2026-01-15T09:30:00Z", deferredUntil: "2026-01-15T09:30:00Z", deferredFor: "floor" });
    assert.not.match(await status(store), "deferred", "a deferral that has run out is not shown");
  }));

/** A token as GitHub formats it, written into rows as a store made before the redactor would hold it. */
const OLD_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

test("a title is printed with every control character escaped, the C1 ones too (U+009B, CSI)", () =>
  withStore(async (store) => {
    onboard(store, "demo/widgets");
    makeItem(store, { issue: 7, title: "Fix\u009b2J the\u001b[31m widget\u0085" });
    const text = await status(store);
    assert.match(text, '"Fix\\u009b2J the\\u001b[31m widget\\u0085"');
    assert.not.match(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  }));

test("rows written before the redactor existed are shown redacted, as text and as JSON", () =>
  withStore(async (store) => {
    onboard(store, "demo/widgets");
    const item = makeItem(store, { issue: 7 });
    store.db.prepare("UPDATE work_items SET title = ? WHERE id = ?").run(`Leaked ${OLD_TOKEN}`, item.id);
    for (const json of [false, true]) {
      const text = await status(store, { json });
      assert.not.ok(text.includes(OLD_TOKEN), text);
      assert.ok(text.includes("Leaked [redacted]"), text);
    }
  }));

test("open anomalies are under \"needs you\" with what acknowledges them, counted, and in --json; acknowledged ones are not", () =>
  withStore(async (store) => {
    raiseAnomaly(store, { kind: "effect_unfinished", actionId: "a-1", repo: "demo/widgets", item: 1, detail: "a comment was never posted" });
    assert.match(await status(store), "\nneeds you: 1\n  anomaly 1: effect_unfinished: a comment was never posted  (robot-army anomalies --acknowledge 1; robot-army show 1)\n");
    assert.match(await status(store), "\n1 anomaly needs you: robot-army anomalies\n");
    raiseAnomaly(store, { kind: "spool_damaged", actionId: "a-2", detail: "a file set aside" });
    assert.match(await status(store), "\n2 anomalies need you: robot-army anomalies\n");
    const json = JSON.parse(await status(store, { json: true })) as StatusReport;
    assert.equal(json.anomalies.map((a) => [a.id, a.kind, a.item]), [[1, "effect_unfinished", 1], [2, "spool_damaged", null]]);
    assert.equal(json.needs_you.map((n) => [n.kind, n.anomaly, n.what]), [["anomaly", 1, "effect_unfinished: a comment was never posted"], ["anomaly", 2, "spool_damaged: a file set aside"]]);
    // Narrowed by state, every anomaly of the repository (or of none) is still there, with its words; another repository's is not.
    const narrowed = await status(store, { filter: ["--state", "active", "--repo", "demo/widgets"] });
    assert.match(narrowed, "  anomaly 1: effect_unfinished: a comment was never posted");
    assert.match(narrowed, "  anomaly 2: spool_damaged: a file set aside");
    assert.not.match(await status(store, { filter: ["--state", "active", "--repo", "demo/other"] }), "anomaly 1:");
    acknowledgeAnomaly(store, 1);
    acknowledgeAnomaly(store, 2);
    assert.match(await status(store), "\nanomalies: none\n");
  }));

test("status counts the items' pull requests, open, merged and closed unmerged, once there are any", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 3, state: "active" });
    assert.not.match(await status(store), "pull requests");
    // What a refresh writes (lib/intake/pull-requests.test.ts reads them from the forge).
    const pull = store.statement("INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at) VALUES ('demo/widgets', ?, ?, 'abc', ?, ?, '2026-01-15T09:00:00Z', 'u', '2026-01-15T09:00:00Z')");
    pull.run(6, "b6", "closed", "2026-01-15T09:00:00Z");
    pull.run(7, "b7", "closed", "2026-01-15T09:00:00Z");
    pull.run(8, "b8", "open", null);
    assert.match(await status(store), "\n  active  1\npull requests: 1 open, 2 merged\n");
    pull.run(9, "b9", "closed", null);
    assert.match(await status(store), "\npull requests: 1 open, 2 merged, 1 closed unmerged\n");
    assert.equal((JSON.parse(await status(store, { json: true })) as StatusReport).pull_requests, { open: 1, merged: 2, closed: 1 });
  }));

test.run();
