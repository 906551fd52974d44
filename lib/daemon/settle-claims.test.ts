import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { observeCapacity, workerTags } from "../dispatch/capacity.ts";
import { configFrom, inWorkerDir, startWorker } from "../testing/workers.ts";
import type { WorkerDirs } from "../testing/workers.ts";
import { git, makeGitRepo } from "../testing/fixtures.ts";
import { worktreePath } from "../boundaries/worktrees.ts";
import { wireEffects } from "../effects.ts";
import { appendAudit, queryAudit } from "../store/audit.ts";
import { sessionsOf } from "../work-items/sessions.ts";
import { sweepUnfinished } from "./unfinished.ts";
import { identify, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { trackSessionProcesses, waitFor } from "../testing/sessions.ts";
import { sessionState } from "../sessions/state.ts";
import type { Store } from "../store/open.ts";
import type { Config } from "../config.ts";
import { createItem, getItem } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import { settleClaims } from "./settle-claims.ts";

const sessions = trackSessionProcesses(test, { childrenBy: "pid" });

/** Comments the issue heard, as a live GitHub writer posted them. */
const posted: Array<{ issue: number; body: string }> = [];

/** What settleClaims works with; at `live`, so an adopted worker's comment is posted (to `posted`). */
function claimsDeps(store: Store, root: string, config?: Config, stateDir = "/nowhere") {
  const github = { simulated: false, comment: async (_repo: string, issue: number, body: string) => (posted.push({ issue, body }), { id: posted.length, url: null }), addLabels: async () => {}, removeLabel: async () => {} };
  return { store, sessionRoot: root, config: config ?? EMPTY_CONFIG, stateDir, host: "testhost", effects: wireEffects("live", { github }) };
}

let EMPTY_CONFIG: Config;

/** A ready item claimed by `claimer` (or with no claimer on record, as an older claim has none). */
function claimed(store: Store, issue: number, claimer: ProcessIdentity | null): number {
  const { id } = createItem(store, { repo: "demo/widgets", issue, title: `Issue ${issue}`, body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null }, { simulated: false });
  transition(store, id, "ready", { reason: "onboarded" });
  transition(store, id, "dispatching", { reason: "a slot is free", ...(claimer ? { details: { claimed_by: claimer } } : {}) });
  return id;
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
 */
async function cutAfterLaunch(dirs: WorkerDirs, options: { issue?: number; launch?: "intent" | "none"; outcome?: "own" | "none"; sessionId?: string } = {}) {
  const issue = options.issue ?? 1;
  const repo = join(dirs.work, "widgets");
  const config = await configFrom(`[repos."demo/widgets"]\npath = "${repo}"\n\n[worktrees]\nroot = "${join(dirs.work, "worktrees")}"\n`);
  const gone = await endedProcess();
  const id = claimed(dirs.store, issue, gone);
  const branch = `robot-army/issue-${issue}`;
  const worktree = worktreePath(join(dirs.work, "worktrees"), "demo/widgets", issue);
  git(repo, "worktree", "add", "--quiet", "-b", branch, worktree);
  const { record } = await sessions.start(dirs.root, { name: `ra-widgets-${issue}`, command: "sleep", args: ["30"], cwd: worktree, tags: workerTags(dirs.store, id) });
  const actionId = randomUUID();
  if (options.launch !== "none") {
    const session = options.sessionId ?? record.id;
    const place = { launcher: "process", marker: record.name, terminal: { launcher: "process" } };
    const comment = { purpose: "dispatched", body: `robot-army dispatched a session for this issue.\n\n- Session id: ${session}` };
    appendAudit(dirs.store, {
      kind: "session.launch", phase: "intent", actionId, repo: "demo/widgets", item: id, sessionId: session,
      body: { session: record.name, session_id: session, cwd: worktree, branch, attempt: 1, profile: "demo", episode_key: `item-${id}`, ...place, comment, writer: gone },
    });
    if (options.outcome === "own") {
      appendAudit(dirs.store, { kind: "session.launch", phase: "outcome", actionId, repo: "demo/widgets", item: id, sessionId: session, body: { ok: true, session_id: session, ...place } });
    }
  }
  return { id, config, record, worktree, branch, actionId };
}

/** The unfinished-effect sweep, as the tick runs it before settling claims. */
async function sweep(dirs: WorkerDirs, config: Config): Promise<void> {
  await sweepUnfinished({ store: dirs.store, config, sessionRoot: dirs.root, github: { listComments: async () => [] } });
}

test("a worker launched for a cut-short dispatch is adopted: its row written as its start writes it, the item active, the issue told once, capacity counting it", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  // Cut during the launch: no outcome, until the sweep settles it from the session's record.
  const cut = await cutAfterLaunch(dirs);
  await sweep(dirs, cut.config);
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

test("without every piece of evidence the worker is not adopted: the item is interrupted and the worker named, as before", inWorkerDir(async (dirs) => {
  makeGitRepo(join(dirs.work, "widgets"));
  posted.length = 0;
  // 1: no launch on record; 2: a launch with no outcome (the sweep has not settled it); 3: a launch naming another session.
  const none = await cutAfterLaunch(dirs, { issue: 1, launch: "none" });
  const open = await cutAfterLaunch(dirs, { issue: 2 });
  const other = await cutAfterLaunch(dirs, { issue: 3, outcome: "own", sessionId: randomUUID() });
  const result = await settleClaims(claimsDeps(dirs.store, dirs.root, none.config, dirs.state));
  assert.equal([result.cutShort, result.adopted], [3, 0]);
  for (const { id, record } of [none, open, other]) {
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
  assert.match(item.reason!, "whether a worker runs for it cannot be checked");
  assert.equal(sessionsOf(dirs.store, cut.id), []);
  assert.equal(posted, []);
}));

test.run();
