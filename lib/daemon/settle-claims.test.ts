import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { atTimeAsync } from "../testing/items.ts";
import { observeCapacity, workerTags } from "../dispatch/capacity.ts";
import { configFrom, inWorkerDir, startWorker } from "../testing/workers.ts";
import type { WorkerDirs } from "../testing/workers.ts";
import { git, makeGitRepo } from "../testing/fixtures.ts";
import { worktreePath } from "../boundaries/worktrees.ts";
import { wireEffects } from "../effects.ts";
import { appendAudit, newLogCursor, queryAudit } from "../store/audit.ts";
import { launchesWithoutRow, recordSession, sessionById, sessionsOf } from "../work-items/sessions.ts";
import { raiseAnomaly } from "../store/anomalies.ts";
import { claimerOf, FRESH_CLAIM } from "../dispatch/claim.ts";
import { launcherFor } from "../boundaries/launchers/select.ts";
import { requeueCount, worktreeLeftByCut } from "../dispatch/requeued-worktree.ts";
import { liveSessionOf } from "../dispatch/verbs/live-session.ts";
import { adoptionOf } from "./adopt-worker.ts";
import type { Adoption } from "./adopt-worker.ts";
import { sweepUnfinished } from "./unfinished.ts";
import { identify, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { trackSessionProcesses, waitFor } from "../testing/sessions.ts";
import { sessionState } from "../sessions/state.ts";
import type { Store } from "../store/open.ts";
import type { Config } from "../config.ts";
import { createItem, getItem } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import { adopt, recordLeftWorkers, settleClaims } from "./settle-claims.ts";

const sessions = trackSessionProcesses(test, { childrenBy: "pid" });

/** Comments the issue heard, as a live GitHub writer posted them. */
const posted: Array<{ issue: number; body: string }> = [];

/** What settleClaims works with; at `live`, so an adopted worker's comment is posted (to `posted`). */
function claimsDeps(store: Store, root: string, config?: Config, stateDir = "/nowhere") {
  const github = { simulated: false, comment: async (_repo: string, issue: number, body: string) => (posted.push({ issue, body }), { id: posted.length, url: null }), addLabels: async () => {}, removeLabel: async () => {}, createClaim: async () => ({ created: true, sha: null }), advanceClaim: async () => ({ moved: true, sha: null }), deleteClaim: async () => "deleted" as const };
  const launcher = launcherFor(config ?? EMPTY_CONFIG, { launcher: "process" });
  return { store, sessionRoot: root, config: config ?? EMPTY_CONFIG, stateDir, host: "testhost", effects: wireEffects("live", { github }), launcher };
}

let EMPTY_CONFIG: Config;

/**
 * A ready item claimed by `claimer` (or with no claimer on record, as an older claim has none); `fresh` marks
 * the claim as the dispatch pass marks one (a new worktree and branch), which a resume's or restart's never is.
 */
function claimed(store: Store, issue: number, claimer: ProcessIdentity | null, fresh = false): number {
  const { id } = createItem(store, { repo: "demo/widgets", issue, title: `Issue ${issue}`, body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null }, { simulated: false });
  transition(store, id, "ready", { reason: "onboarded" });
  claim(store, id, claimer, fresh);
  return id;
}

function claim(store: Store, id: number, claimer: ProcessIdentity | null, fresh: boolean): void {
  transition(store, id, "dispatching", { reason: "a slot is free", details: { ...(claimer ? { claimed_by: claimer } : {}), ...(fresh ? { [FRESH_CLAIM]: true } : {}) } });
}

/** A real process that has come and gone, proven exited by its pid and start time. */
async function endedProcess(): Promise<ProcessIdentity> {
  const child = spawn("sleep", ["0.2"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("spawn", resolve));
  const who = identify(child.pid!);
  assert.ok(who.started_at, "the child's start time is readable");
  await new Promise((resolve) => child.once("exit", resolve));
  await waitFor("the claimer to be gone", () => liveness(who) === "exited");
  return who;
}

test.before(async () => {
  EMPTY_CONFIG = await configFrom("");
});

test("a claim whose process is proven gone is cut short: the item is interrupted, with the pid in its reason", inWorkerDir(async ({ store, root }) => {
  const gone = await endedProcess();
  const id = claimed(store, 1, gone);
  const result = await settleClaims(claimsDeps(store, root));
  assert.equal([result.cutShort, result.unknown], [1, 0]);
  const item = getItem(store, id)!;
  assert.is(item.state, "interrupted");
  assert.match(item.reason!, `its dispatch was cut short: the process that claimed it (pid ${gone.pid}) ended before its worker was recorded`);
  assert.match(result.events[0].line, /^dispatch of demo\/widgets#1 \(item 1\) was cut short .*: item interrupted; "robot-army resume 1"/);
  // Settled once: a second pass finds nothing dispatching.
  assert.equal((await settleClaims(claimsDeps(store, root))).cutShort, 0);
}));

test("a claim whose process still runs is in flight and left alone", inWorkerDir(async ({ store, root }) => {
  const id = claimed(store, 1, identify(process.pid));
  const result = await settleClaims(claimsDeps(store, root));
  assert.equal([result.cutShort, result.unknown, result.events.length], [0, 0, 0]);
  assert.is(getItem(store, id)!.state, "dispatching");
}));

test("a claim naming no process, or one that cannot be checked, is never taken for cut short", inWorkerDir(async ({ store, root }) => {
  const none = claimed(store, 1, null);
  // A pid with no recorded start time cannot be told from a reused pid: unknown, not gone.
  const unchecked = claimed(store, 2, { pid: process.pid, started_at: null });
  const result = await settleClaims(claimsDeps(store, root));
  assert.equal([result.cutShort, result.unknown], [0, 2]);
  assert.equal([getItem(store, none)!.state, getItem(store, unchecked)!.state], ["dispatching", "dispatching"]);
}));

test("a worker session tagged for a cut-short item is named, and left running", inWorkerDir(async (dirs) => {
  const gone = await endedProcess();
  const id = claimed(dirs.store, 1, gone);
  const worker = await startWorker(sessions, dirs, workerTags(dirs.store, id));
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root));
  assert.is(result.cutShort, 1);
  assert.match(getItem(dirs.store, id)!.reason!, `; session "${worker.name}" tagged for it still runs`);
  assert.match(result.events[0].line, `look at it with "robot-army session peek ${worker.name}" or end it with "robot-army session kill ${worker.name}"`);
  assert.is(result.events[0].session, worker.id);
  assert.is(sessionState(dirs.root, worker), "running");
}));

/**
 * The world a daemon SIGKILLed mid-dispatch leaves: the item claimed by a process now gone, its worktree made on
 * its branch, its worker's managed session launched there and running, the `session.launch` intent that process
 * wrote (as start-worker writes it), and, with `outcome: "own"`, the outcome it wrote too; no session row.
 * With `started: "after"` the session is started only by `start()`, after the intent (a child still starting when
 * its launcher died); with `"never"` it never is (a launch cut before its child wrote anything).
 */
async function cutAfterLaunch(dirs: WorkerDirs, options: {
  issue?: number; launch?: "intent" | "none"; outcome?: "own" | "failed" | "none"; sessionId?: string; started?: "before" | "after" | "never";
  writer?: ProcessIdentity; claimer?: ProcessIdentity; intent?: Record<string, unknown>; fresh?: boolean;
} = {}) {
  const issue = options.issue ?? 1;
  const repo = join(dirs.work, "widgets");
  const config = await configFrom(`[repos."demo/widgets"]\npath = "${repo}"\n\n[worktrees]\nroot = "${join(dirs.work, "worktrees")}"\n`);
  const gone = options.claimer ?? await endedProcess();
  const id = claimed(dirs.store, issue, gone, options.fresh);
  const branch = `robot-army/issue-${issue}`;
  const worktree = worktreePath(join(dirs.work, "worktrees"), "demo/widgets", issue);
  git(repo, "worktree", "add", "--quiet", "-b", branch, worktree);
  const name = `ra-widgets-${issue}`;
  const chosen = randomUUID();
  const start = async () => (await sessions.start(dirs.root, { id: chosen, name, command: "sleep", args: ["30"], cwd: worktree, tags: workerTags(dirs.store, id) })).record;
  const record = (options.started ?? "before") === "before" ? await start() : undefined;
  const actionId = randomUUID();
  if (options.launch !== "none") {
    const session = options.sessionId ?? chosen;
    const place = { launcher: "process", marker: name, terminal: { launcher: "process" } };
    const comment = { purpose: "dispatched", body: `robot-army dispatched a session for this issue.\n\n- Session id: ${session}` };
    appendAudit(dirs.store, {
      kind: "session.launch", phase: "intent", actionId, repo: "demo/widgets", item: id, sessionId: session,
      body: { session: name, session_id: session, cwd: worktree, branch, attempt: 1, profile: "demo", episode_key: `item-${id}`, ...place, comment, ...options.intent, writer: options.writer ?? gone },
    });
    if (options.outcome === "own") {
      appendAudit(dirs.store, { kind: "session.launch", phase: "outcome", actionId, repo: "demo/widgets", item: id, sessionId: session, body: { ok: true, session_id: session, ...place } });
    }
    if (options.outcome === "failed") {
      appendAudit(dirs.store, { kind: "session.launch", phase: "outcome", actionId, repo: "demo/widgets", item: id, sessionId: session, body: { ok: false, error: "session run did not confirm the start within 30s" } });
    }
  }
  return { id, config, record: record!, sessionId: chosen, name, start, worktree, branch, actionId };
}

/** Runs `fn` with the clock a little over a minute on: past session.launch's settleAfterSeconds. */
const aMinuteLater = <T>(fn: () => Promise<T>): Promise<T> => atTimeAsync(new Date(Date.now() + 61_000).toISOString(), fn);

/** The unfinished-effect sweep, as the tick runs it before settling claims. */
async function sweep(dirs: WorkerDirs, config: Config): Promise<void> {
  await sweepUnfinished({ store: dirs.store, config, sessionRoot: dirs.root, github: { listComments: async () => [], readRef: async () => null, readCommitMessage: async () => "", readCommit: async () => ({ message: "", parents: [] }) } });
}

test("a worker launched for a cut-short dispatch is adopted: its row written as its start writes it, the item active, the issue told once, capacity counting it", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  // Cut during the launch: no outcome, until the sweep settles it from the session's record.
  const cut = await cutAfterLaunch(dirs);
  await aMinuteLater(() => sweep(dirs, cut.config));
  const settledLaunch = queryAudit(dirs.store, { kind: "session.launch" }).find((r) => r.phase === "outcome");
  assert.equal([settledLaunch?.body.settled_from, settledLaunch?.body.ok], ["session-record", true]);
  // Cut after the launch's own outcome.
  const own = await cutAfterLaunch(dirs, { issue: 2, outcome: "own" });

  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, cut.config, dirs.state));
  assert.equal([result.cutShort, result.adopted, result.unknown], [2, 2, 0]);
  for (const { id, record, worktree, branch, actionId } of [cut, own]) {
    const item = getItem(dirs.store, id)!;
    assert.is(item.state, "active");
    assert.match(item.reason!, `its worker was adopted after its dispatch was cut short: the process that claimed it`);
    const rows = sessionsOf(dirs.store, id).map((row) => ({ ...row }));
    assert.is(rows.length, 1);
    const row = rows[0];
    assert.equal(
      [row.id, row.name, row.attempt, row.launcher, row.marker, row.terminal, row.worktree, row.branch, row.episode_key, row.profile, row.host, row.ended_at],
      [record.id, record.name, 1, "process", record.name, { launcher: "process" }, worktree, branch, `item-${id}`, "demo", "testhost", null],
    );
    assert.equal([row.pid, row.pid_started_at], [record.childPid, record.childStartedAt]);
    const moved = queryAudit(dirs.store, { kind: "state.work_item", item: id }).at(-1)!;
    assert.equal([moved.body.from, moved.body.to, moved.body.adopted, moved.body.launch, moved.body.session], ["dispatching", "active", true, actionId, record.id]);
    assert.is(sessionState(dirs.root, record), "running");
  }
  assert.equal(result.events.map((e) => e.event), ["worker_adopted", "worker_adopted"]);
  // The comment its start would have made once the row was written: posted once each.
  assert.equal(posted.map((p) => p.issue), [1, 2]);
  assert.match(posted[0].body, `- Session id: ${cut.record.id}`);
  const capacity = observeCapacity({ sessionRoot: dirs.root, config: cut.config, store: dirs.store });
  assert.equal([capacity.machine.ours, capacity.repos["demo/widgets"].live], [2, 2]);
  // Settled once: nothing is dispatching, so a second pass adopts nothing and tells nothing.
  assert.equal((await settleClaims(claimsDeps(dirs.store, dirs.root, cut.config, dirs.state))).cutShort, 0);
  assert.is(posted.length, 2);
}));

test("a worker launched for a dispatch cut short whose issue closed while its launch waited to be settled is recorded, its item left done, so it is watched and retired", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  const cut = await cutAfterLaunch(dirs);
  // Within the launch's settle window the item waits, dispatching; meanwhile the poll sees its issue closed.
  const waiting = await settleClaims(claimsDeps(dirs.store, dirs.root, cut.config, dirs.state));
  assert.equal([waiting.waiting, waiting.recorded], [1, 0]);
  transition(dirs.store, cut.id, "done", { reason: "issue closed", issueClosedObserved: true });
  await aMinuteLater(() => sweep(dirs, cut.config));
  // The repository's pull request list was read, with its mark, before the worker's branch was tracked.
  const pullList = `${cut.config.github.api_base}/repos/demo/widgets/pulls?state=all&sort=updated&direction=desc&per_page=100`;
  dirs.store.statement("INSERT INTO etags (url, etag, body, fetched_at) VALUES (?, 'W/\"x\"', '{}', '2026-01-01T00:00:00Z')").run(pullList);
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, cut.config, dirs.state));
  assert.equal([result.cutShort, result.adopted, result.recorded], [0, 0, 1]);
  assert.is(getItem(dirs.store, cut.id)!.state, "done", "the item keeps the state it moved to");
  const rows = sessionsOf(dirs.store, cut.id).map((row) => ({ ...row }));
  assert.equal(rows.map((row) => [row.id, row.name, row.ended_at]), [[cut.record.id, cut.record.name, null]]);
  assert.equal(result.events.map((e) => e.event), ["worker_recorded"]);
  assert.match(result.events[0].line, `its item is done: session ${cut.record.name} (${cut.record.id}) it launched runs, now recorded so it is watched and retired`);
  assert.equal(posted, [], "nothing is said on an issue that has moved on");
  // Its branch is tracked only now: the next refresh reads the pull request list whole, so the pull request the
  // worker opened before (which a 304 would never show again) is found, and a merged one retires it.
  assert.is(dirs.store.statement("SELECT url FROM etags WHERE url = ?").get(pullList), undefined);
  const capacity = observeCapacity({ sessionRoot: dirs.root, config: cut.config, store: dirs.store });
  assert.is(capacity.machine.ours, 1);
  // Once recorded, a second pass finds nothing left.
  assert.is((await settleClaims(claimsDeps(dirs.store, dirs.root, cut.config, dirs.state))).recorded, 0);
}));

test("with the daemon's cursor a launch left without a row is read again until its worker is recorded; after that, and with nothing new, none is read", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  const cut = await cutAfterLaunch(dirs);
  await aMinuteLater(() => sweep(dirs, cut.config));
  const [launch] = launchesWithoutRow(dirs.store);
  assert.is(launch.item, cut.id, "its launch settled as started, with no row");
  const cursor = newLogCursor();
  const deps = claimsDeps(dirs.store, dirs.root, cut.config, dirs.state);
  const result = { cutShort: 0, adopted: 0, unknown: 0, waiting: 0, requeued: 0, failed: 0, recorded: 0, events: [] };
  // Its item still dispatching, the claim is the claims step's to settle: this one leaves it, and reads it again next pass.
  await recordLeftWorkers(deps, result, cursor);
  assert.equal([result.recorded, cursor.again], [0, [launch.id]]);
  transition(dirs.store, cut.id, "done", { reason: "issue closed", issueClosedObserved: true });
  await recordLeftWorkers(deps, result, cursor);
  assert.equal([result.recorded, cursor.again], [1, []], "read again, and recorded");
  assert.equal(sessionsOf(dirs.store, cut.id).map((row) => row.id), [cut.record.id]);
  assert.equal(launchesWithoutRow(dirs.store, cursor), []);
}));

test("without every piece of evidence the worker is not adopted: the item is interrupted and the worker named, as before", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  // 1: no launch on record; 2: a launch naming another session (with no record).
  const none = await cutAfterLaunch(dirs, { issue: 1, launch: "none" });
  const other = await cutAfterLaunch(dirs, { issue: 3, outcome: "own", sessionId: randomUUID() });
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, none.config, dirs.state));
  assert.equal([result.cutShort, result.adopted], [2, 0]);
  for (const { id, record } of [none, other]) {
    const item = getItem(dirs.store, id)!;
    assert.is(item.state, "interrupted");
    assert.match(item.reason!, `; session "${record.name}" tagged for it still runs`);
    assert.equal(sessionsOf(dirs.store, id), []);
    assert.is(sessionState(dirs.root, record), "running");
  }
  assert.equal(posted, []);
}));

test("a worker whose session cannot be checked is not adopted, though its launch is proven", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  const cut = await cutAfterLaunch(dirs, { outcome: "own" });
  // A record that cannot be read may be this item's: whether a worker runs for it is unknown.
  writeFileSync(join(dirs.root, `${randomUUID()}.json`), "{ not json");
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, cut.config, dirs.state));
  assert.equal([result.cutShort, result.adopted], [1, 0]);
  const item = getItem(dirs.store, cut.id)!;
  assert.is(item.state, "interrupted");
  assert.match(item.reason!, `; session "${cut.record.name}" its launch started still runs, not adopted: whether another worker runs for it cannot be checked`);
  assert.equal(sessionsOf(dirs.store, cut.id), []);
  assert.equal(posted, []);
}));

test("a dispatch cut mid-launch is left dispatching until its launch is settled: a worker whose record came after the cut is adopted, a launch that never made one is interrupted", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  const earlier = randomUUID();
  // A resume's launch, its child not yet on record when its launcher died; and a launch whose child never wrote one.
  const late = await cutAfterLaunch(dirs, { issue: 1, started: "after", intent: { active_details: { earlier } } });
  const never = await cutAfterLaunch(dirs, { issue: 2, started: "never" });
  const deps = claimsDeps(dirs.store, dirs.root, late.config, dirs.state);
  // The restarted daemon's first pass, at once: within the launch's settleAfterSeconds neither launch is settled, nor either claim.
  await sweep(dirs, late.config);
  assert.equal(queryAudit(dirs.store, { kind: "session.launch" }).filter((r) => r.phase === "outcome"), [], "its child may still be starting: not concluded \"not launched\"");
  const early = await settleClaims(deps);
  assert.equal([early.cutShort, early.adopted, early.unknown, early.waiting], [0, 0, 0, 2]);
  assert.equal([getItem(dirs.store, late.id)!.state, getItem(dirs.store, never.id)!.state], ["dispatching", "dispatching"]);
  assert.equal(early.events.map((e) => e.event), ["claim_waiting", "claim_waiting"]);
  assert.match(early.events[0].line, /^dispatch of demo\/widgets#1 \(item 1\) was cut short \(pid \d+ ended\) while launching session ra-widgets-1: left dispatching until that launch is settled from the session's record$/);
  // The child its launcher handed the start to writes the session's record after the cut.
  const record = await late.start();
  // A minute on, past the launch's settleAfterSeconds: the sweep settles both launches, and the claims follow them.
  const result = await aMinuteLater(async () => {
    await sweep(dirs, late.config);
    return await settleClaims(deps);
  });
  assert.equal([result.cutShort, result.adopted, result.unknown, result.waiting], [2, 1, 0, 0]);
  assert.is(getItem(dirs.store, late.id)!.state, "active");
  const [row] = sessionsOf(dirs.store, late.id);
  assert.equal([row.id, row.started_at], [record.id, record.startedAt], "its row says when it started, not when it was adopted");
  const moved = queryAudit(dirs.store, { kind: "state.work_item", item: late.id }).at(-1)!;
  assert.equal([moved.body.to, moved.body.adopted, moved.body.earlier], ["active", true, earlier], "an adopted resume still says which session it continues");
  const interrupted = getItem(dirs.store, never.id)!;
  assert.is(interrupted.state, "interrupted");
  assert.match(interrupted.reason!, /ended before its worker was recorded$/);
  assert.equal(queryAudit(dirs.store, { kind: "session.launch", item: never.id }).find((r) => r.phase === "outcome")?.body.found, "not launched (no session record)");
  assert.equal(posted.map((p) => p.issue), [1]);
}));

test("a launch the sweep reported as effect_unfinished is not waited for: the claim is settled as before", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  const cut = await cutAfterLaunch(dirs, { issue: 1 });
  raiseAnomaly(dirs.store, { kind: "effect_unfinished", actionId: cut.actionId, repo: "demo/widgets", item: cut.id, detail: "whether session ra-widgets-1 runs cannot be checked" });
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, cut.config, dirs.state));
  assert.equal([result.cutShort, result.adopted, result.waiting], [1, 0, 0]);
  const item = getItem(dirs.store, cut.id)!;
  assert.is(item.state, "interrupted");
  assert.match(item.reason!, `; session "ra-widgets-1" its launch started still runs, not adopted: its launch has no outcome yet`);
}));

test("the session the launch names is the one adopted, or named when it is not, whatever other session tagged for the item runs first", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  const adopted = await cutAfterLaunch(dirs, { issue: 1, started: "after", outcome: "own" });
  const failed = await cutAfterLaunch(dirs, { issue: 2, started: "after", outcome: "failed" });
  // Started first and named first: a session-root scan lists each stray before the session its item's launch named.
  const strays = [];
  for (const { id } of [adopted, failed]) {
    strays.push((await sessions.start(dirs.root, { name: `ra-stray-${id}`, command: "sleep", args: ["30"], cwd: dirs.work, tags: workerTags(dirs.store, id) })).record);
  }
  const launched = [await adopted.start(), await failed.start()];
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, adopted.config, dirs.state));
  assert.equal([result.cutShort, result.adopted], [2, 1]);
  assert.is(getItem(dirs.store, adopted.id)!.state, "active");
  assert.equal(sessionsOf(dirs.store, adopted.id).map((r) => r.id), [launched[0].id]);
  const item = getItem(dirs.store, failed.id)!;
  assert.is(item.state, "interrupted");
  assert.match(item.reason!, `; session "${launched[1].name}" its launch started still runs, not adopted: its launch's outcome says it failed`);
  assert.ok(!item.reason!.includes(strays[1].name), item.reason!);
  assert.is(result.events.find((e) => e.item === failed.id)?.session, launched[1].id);
  for (const record of [...strays, ...launched]) assert.is(sessionState(dirs.root, record), "running", "nothing is signalled");
}));

test("a launch whose writer names only a pid is not proven the claimer's, even where the claim has no start time either", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  const ended = await endedProcess();
  // The claim names the process by its start id alone; the launch by its pid alone.
  const claimer = { pid: ended.pid, started_at: null, start_id: ended.start_id };
  const cut = await cutAfterLaunch(dirs, { issue: 1, outcome: "own", claimer, writer: { pid: ended.pid, started_at: null, start_id: null } });
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, cut.config, dirs.state));
  assert.equal([result.cutShort, result.adopted], [1, 0]);
  assert.is(getItem(dirs.store, cut.id)!.state, "interrupted");
  assert.equal(sessionsOf(dirs.store, cut.id), []);
}));

test("an adoption stands only on what it read: a claim or a session row written meanwhile leaves the item for a later pass", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  const rowSince = await cutAfterLaunch(dirs, { issue: 1, outcome: "own" });
  const claimSince = await cutAfterLaunch(dirs, { issue: 2, outcome: "own" });
  const deps = claimsDeps(dirs.store, dirs.root, rowSince.config, dirs.state);
  const adoptions = [];
  for (const cut of [rowSince, claimSince]) {
    const claimer = claimerOf(dirs.store, cut.id)!;
    const adoption = await adoptionOf(deps, getItem(dirs.store, cut.id)!, claimer, liveSessionOf(dirs.store, dirs.root, cut.id, null));
    assert.ok(!("not" in adoption), JSON.stringify(adoption));
    adoptions.push({ cut, claimer, adoption: adoption as Adoption });
  }
  // While adoptionOf awaited git: a row of item 1 written by another start, and item 2 claimed anew by a process that runs.
  recordSession(dirs.store, { id: randomUUID(), item: rowSince.id, name: "ra-widgets-1-other", host: "testhost", launcher: "process", marker: "m", worktree: rowSince.worktree, branch: rowSince.branch, started_at: "", simulated: false });
  transition(dirs.store, claimSince.id, "interrupted", { reason: "test" });
  transition(dirs.store, claimSince.id, "ready", { reason: "test" });
  transition(dirs.store, claimSince.id, "dispatching", { reason: "a slot is free", details: { claimed_by: identify(process.pid) } });
  const result = { cutShort: 0, adopted: 0, unknown: 0, waiting: 0, requeued: 0, failed: 0, recorded: 0, events: [] };
  for (const { cut, claimer, adoption } of adoptions) {
    assert.is(await adopt(deps, getItem(dirs.store, cut.id)!, claimer, adoption, result), "changed");
    assert.is(getItem(dirs.store, cut.id)!.state, "dispatching");
    assert.is(sessionById(dirs.store, cut.record.id), undefined);
  }
  assert.equal([result.adopted, posted], [0, []]);
}));

/** The config of a clone at `<work>/widgets` whose worktrees go to `<work>/worktrees`. */
async function widgetsConfig(dirs: WorkerDirs): Promise<Config> {
  return await configFrom(`[repos."demo/widgets"]\npath = "${join(dirs.work, "widgets")}"\n\n[worktrees]\nroot = "${join(dirs.work, "worktrees")}"\n`);
}

/** The item's last state move, as its audit record keeps it. */
const lastMove = (store: Store, id: number) => queryAudit(store, { kind: "state.work_item", item: id }).at(-1)!.body;

test("a fresh dispatch cut short before it made anything goes back to the queue, audited, three times in a row; the fourth time the item fails; the owner's retry starts the count again", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  const config = await widgetsConfig(dirs);
  const deps = claimsDeps(dirs.store, dirs.root, config, dirs.state);
  const id = claimed(dirs.store, 1, await endedProcess(), true);
  for (let n = 1; n <= 3; n++) {
    if (n > 1) claim(dirs.store, id, await endedProcess(), true);
    const result = await settleClaims(deps);
    assert.equal([result.requeued, result.failed, result.cutShort], [1, 0, 0]);
    const item = getItem(dirs.store, id)!;
    assert.is(item.state, "ready");
    assert.match(item.reason!, /^its dispatch was cut short before any worker started: the process that claimed it \(pid \d+\) ended with no worker launched, no window open and no commit on its branch; back in the queue/);
    assert.ok(item.reason!.endsWith(`(${n} of 3)`), item.reason!);
    const moved = lastMove(dirs.store, id);
    assert.equal([moved.from, moved.to, moved.requeued, moved.worktree, moved.cut_before_start], ["dispatching", "ready", true, null, n]);
    assert.equal(result.events.map((e) => e.event), ["claim_requeued"]);
    assert.match(result.events[0].line, `dispatch of demo/widgets#1 (item 1) was cut short (pid `);
  }
  claim(dirs.store, id, await endedProcess(), true);
  const fourth = await settleClaims(deps);
  assert.equal([fourth.requeued, fourth.failed], [0, 1]);
  const failed = getItem(dirs.store, id)!;
  assert.is(failed.state, "failed");
  assert.match(failed.reason!, "4 times in a row (back in the queue the 3 times before)");
  assert.is(lastMove(dirs.store, id).requeued, undefined, "a failure is no requeue");
  assert.match(fourth.events[0].line, `4 times in a row: item failed; "robot-army retry 1" puts it back in the queue`);
  // Counted in a row: a worker that started in between starts the count again.
  const other = claimed(dirs.store, 2, null, true);
  const requeue = () => transition(dirs.store, other, "ready", { reason: "cut", details: { requeued: true } });
  requeue();
  claim(dirs.store, other, null, true);
  requeue();
  assert.is(requeueCount(dirs.store, other), 2);
  claim(dirs.store, other, null, true);
  transition(dirs.store, other, "active", { reason: "its worker started" });
  transition(dirs.store, other, "interrupted", { reason: "worker ended" });
  transition(dirs.store, other, "dispatching", { reason: "resumed by the owner" });
  requeue();
  assert.is(requeueCount(dirs.store, other), 1);
  // The owner retries it: the next cut puts it back in the queue again, counted from one.
  transition(dirs.store, id, "ready", { reason: "retried by the owner" });
  claim(dirs.store, id, await endedProcess(), true);
  assert.is((await settleClaims(deps)).requeued, 1);
  assert.ok(getItem(dirs.store, id)!.reason!.endsWith("(1 of 3)"));
}));

test("a fresh dispatch cut short after its worktree was made goes back to the queue with it, and the next dispatch finds it; one whose branch has a commit of its own is interrupted, saying why", inWorkerDir(async (dirs) => {
  const repo = makeGitRepo(join(dirs.work, "widgets"));
  const config = await widgetsConfig(dirs);
  const gone = await endedProcess();
  const made = (issue: number) => {
    const id = claimed(dirs.store, issue, gone, true);
    const path = worktreePath(join(dirs.work, "worktrees"), "demo/widgets", issue);
    const branch = `robot-army/${issue}-issue-${issue}`;
    git(repo, "worktree", "add", "--quiet", "-b", branch, path);
    const head = git(path, "rev-parse", "HEAD").trim();
    const actionId = randomUUID();
    appendAudit(dirs.store, { kind: "worktree.create", phase: "intent", actionId, repo: "demo/widgets", item: id, body: { path, branch } });
    appendAudit(dirs.store, { kind: "worktree.create", phase: "outcome", actionId, repo: "demo/widgets", item: id, body: { ok: true, path, branch, head } });
    return { id, path, branch, head };
  };
  const clean = made(1);
  const committed = made(2);
  writeFileSync(join(committed.path, "work.txt"), "the worker's first change\n");
  git(committed.path, "add", "work.txt");
  git(committed.path, "commit", "--quiet", "-m", "A commit of its own");

  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, config, dirs.state));
  assert.equal([result.requeued, result.cutShort], [1, 1]);
  assert.is(getItem(dirs.store, clean.id)!.state, "ready");
  assert.ok(getItem(dirs.store, clean.id)!.reason!.endsWith(`(1 of 3); its worktree "${clean.path}" is kept`));
  assert.equal(lastMove(dirs.store, clean.id).worktree, { path: clean.path, branch: clean.branch, head: clean.head });
  assert.equal(await worktreeLeftByCut(dirs.store, repo, clean.id), { path: clean.path, branch: clean.branch, head: clean.head });
  const interrupted = getItem(dirs.store, committed.id)!;
  assert.is(interrupted.state, "interrupted");
  assert.match(interrupted.reason!, `ended before its worker was recorded; not put back in the queue: its branch ${committed.branch} has commits of its own`);
  // A change in the worktree left since, or a commit: no longer the one left, so a new dispatch never takes it for it.
  writeFileSync(join(clean.path, "later.txt"), "made after the requeue\n");
  assert.is(await worktreeLeftByCut(dirs.store, repo, clean.id), undefined);
  git(clean.path, "add", "later.txt");
  git(clean.path, "commit", "--quiet", "-m", "Later");
  assert.is(await worktreeLeftByCut(dirs.store, repo, clean.id), undefined);
}));

test("a fresh dispatch whose worker's launch had begun stays interrupted, whatever became of the launch: a worker may have run, or may start yet", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  // A launch that failed by its outcome while its session runs; a launch whose child never wrote a record.
  const ran = await cutAfterLaunch(dirs, { issue: 1, outcome: "failed", fresh: true });
  const never = await cutAfterLaunch(dirs, { issue: 2, started: "never", fresh: true });
  const deps = claimsDeps(dirs.store, dirs.root, ran.config, dirs.state);
  const result = await aMinuteLater(async () => {
    await sweep(dirs, ran.config);
    return await settleClaims(deps);
  });
  assert.equal([result.cutShort, result.requeued, result.adopted], [2, 0, 0]);
  for (const cut of [ran, never]) {
    const item = getItem(dirs.store, cut.id)!;
    assert.is(item.state, "interrupted");
    assert.match(item.reason!, `; not put back in the queue: its worker's launch had begun (session ${cut.name}), so a worker may have run`);
  }
}));

test("a fresh dispatch cut after its worktree was made, with changes in it nobody committed, stays interrupted", inWorkerDir(async (dirs) => {
  const repo = makeGitRepo(join(dirs.work, "widgets"));
  const config = await widgetsConfig(dirs);
  const id = claimed(dirs.store, 1, await endedProcess(), true);
  const path = worktreePath(join(dirs.work, "worktrees"), "demo/widgets", 1);
  const branch = "robot-army/1-issue-1";
  git(repo, "worktree", "add", "--quiet", "-b", branch, path);
  const made = { kind: "worktree.create", repo: "demo/widgets", item: id, actionId: randomUUID() } as const;
  appendAudit(dirs.store, { ...made, phase: "intent", body: { path, branch } });
  appendAudit(dirs.store, { ...made, phase: "outcome", body: { ok: true, path, branch, head: git(path, "rev-parse", "HEAD").trim() } });
  writeFileSync(join(path, "README.md"), "changed, not committed\n");
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, config, dirs.state));
  assert.equal([result.cutShort, result.requeued], [1, 0]);
  assert.match(getItem(dirs.store, id)!.reason!, `; not put back in the queue: its worktree "${path}" has uncommitted changes`);
}));

test.run();
