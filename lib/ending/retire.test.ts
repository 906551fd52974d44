import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { git } from "../testing/fixtures.ts";
import { groupMembers } from "../processes.ts";
import { PROJECT_ROOT, runtimeArgv } from "../runtime.ts";
import { atTime, makeItem } from "../testing/items.ts";
import { trackSessionProcesses } from "../testing/sessions.ts";
import { configFrom, inWorkerDir } from "../testing/workers.ts";
import type { WorkerDirs } from "../testing/workers.ts";
import { openJournal } from "../episodes/journal.ts";
import { setStatus, startEpisode } from "../episodes/lifecycle.ts";
import { findOpen } from "../episodes/open-episodes.ts";
import { sessionState } from "../sessions/state.ts";
import { listRecords, readRecord } from "../sessions/records.ts";
import { spoolDir } from "../sessions/spool.ts";
import { drainSpool } from "../daemon/spool-drain.ts";
import { waitFor } from "../testing/sessions.ts";
import { listAnomalies } from "../store/anomalies.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { hold, pause } from "../dispatch/controls.ts";
import { recordSession, sessionById } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";
import { workerTags } from "../dispatch/capacity.ts";
import { placeKeep, releaseKeep } from "./keeps.ts";
import { QUIET_PERIOD_SECONDS, retireIdleWorkers, retireSignal } from "./retire.ts";

const sessions = trackSessionProcesses(test, { childrenBy: "group" });

const HOST = "testhost";
const MERGED_AT = "2026-01-15T10:00:00Z";

/** A worker of item `itemId`: a real detached session, its row, and an episode in its worktree at `status` since `since`. */
async function worker(dirs: WorkerDirs, itemId: number, options: { status?: "idle" | "busy"; since?: string; attempt?: number; tags?: Record<string, string> } = {}) {
  const worktree = join(dirs.work, `issue-${itemId}-${options.attempt ?? 1}`);
  mkdirSync(worktree, { recursive: true });
  git(worktree, "init", "--quiet");
  const { record } = await sessions.start(dirs.root, { command: "sleep", args: ["60"], cwd: worktree, tags: { ...workerTags(dirs.store, itemId), ...options.tags } });
  const key = `item-${itemId}${(options.attempt ?? 1) > 1 ? `-${options.attempt}` : ""}`;
  const row = recordSession(dirs.store, {
    id: record.id, item: itemId, name: `ra-widgets-${itemId}${(options.attempt ?? 1) > 1 ? `-${options.attempt}` : ""}`, host: HOST,
    launcher: "process", marker: record.name, worktree, branch: `robot-army/issue-${itemId}`, started_at: "2026-01-15T09:00:00Z",
    simulated: false, episode_key: key,
  });
  if (options.status !== undefined) {
    const journal = await openJournal(worktree, { forWrite: true });
    const since = new Date(options.since ?? "2026-01-15T10:00:00Z");
    await startEpisode(journal, { key, clientPid: process.pid, now: since });
    await setStatus(journal, { key, status: options.status, now: since });
  }
  return { record, row, worktree, key };
}

/** A merged pull request from the item's branch, as the pull request refresh stores it. */
function merged(store: Store, itemId: number, number = 10 + itemId): void {
  store.statement(
    `INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at)
     VALUES ('demo/widgets', ?, ?, 'abc1234', 'closed', ?, ?, 'http://forge/pull', ?)`,
  ).run(number, `robot-army/issue-${itemId}`, MERGED_AT, MERGED_AT, MERGED_AT);
}

async function pass(dirs: WorkerDirs, at: string, options: { profile?: string } = {}) {
  const config = await configFrom(`[worker]\nbinary = "demo-worker"\n${options.profile ? `profile = "${options.profile}"\n` : ""}`);
  return await atTime(at, () => retireIdleWorkers({
    store: dirs.store, sessionRoot: dirs.root, config, effects: { sessions: true, simulated: false }, host: HOST, graceMs: 2_000,
  }));
}

function retireRecords(store: Store) {
  return queryAudit(store, { kind: "session.retire" });
}

test("the signal: a merge retires an idle worker at once, no merge only after the quiet period, busy never", () => {
  const since = "2026-01-15T10:00:00Z";
  assert.is(retireSignal({ idle: true, since, seconds: 0 }, true), "merged_pull_request");
  assert.is(retireSignal({ idle: true, since, seconds: QUIET_PERIOD_SECONDS - 1 }, false), null);
  assert.is(retireSignal({ idle: true, since, seconds: QUIET_PERIOD_SECONDS }, false), "quiet_period");
  assert.is(retireSignal({ idle: false, why: "busy" }, true), null);
});

test("a merged pull request whose worker has been idle 47 seconds is retired on that pass, audited with its signal", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 6, state: "done" });
  const { record, row } = await worker(dirs, item.id, { status: "idle", since: "2026-01-15T10:00:00Z" });
  merged(dirs.store, item.id);
  const result = await pass(dirs, "2026-01-15T10:00:47Z");
  assert.is(result.retired, 1);
  assert.match(result.events[0].line, `retired ra-widgets-${item.id} of item ${item.id} (demo/widgets#6): pull request #${10 + item.id} merged, worker idle 47 s`);
  const closed = sessionById(dirs.store, row.id)!;
  assert.is(closed.end_reason, "retired");
  assert.is(sessionState(dirs.root, readRecord(dirs.root, record.id)!), "exited", "the worker's process is stopped");
  const [intent, outcome] = retireRecords(dirs.store);
  assert.equal([intent.body.signal, intent.body.idle_s, intent.sessionId], ["merged_pull_request", 47, row.id]);
  assert.equal([outcome.phase, outcome.body.ok, outcome.body.result], ["outcome", true, "retired"]);
}));

test("with no merge a worker idle 29 minutes is left, and retired at 31 with signal quiet_period", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 2, state: "done" });
  const { row } = await worker(dirs, item.id, { status: "idle", since: "2026-01-15T10:00:00Z" });
  const early = await pass(dirs, "2026-01-15T10:29:00Z");
  assert.equal([early.retired, early.left, early.orphans.raised], [0, 1, 0], "idle and waiting out the quiet period is no orphan");
  assert.is(sessionById(dirs.store, row.id)!.ended_at, null);
  const late = await pass(dirs, "2026-01-15T10:31:00Z");
  assert.is(late.retired, 1);
  assert.equal([retireRecords(dirs.store)[0].body.signal, retireRecords(dirs.store)[0].body.idle_s], ["quiet_period", 31 * 60]);
}));

test("a worker waiting for its owner (needs_info) is never taken for idle: not retired after a merge, even once its turn ended", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 5, state: "done" });
  const { row, worktree, key } = await worker(dirs, item.id, { status: "busy", since: "2026-01-15T10:00:00Z" });
  const journal = await openJournal(worktree, { forWrite: true });
  await setStatus(journal, { key, status: "needs_info", reason: "shall I also update the docs?", now: new Date("2026-01-15T10:01:00Z") });
  await setStatus(journal, { key, status: "idle", now: new Date("2026-01-15T10:02:00Z") });
  merged(dirs.store, item.id);
  const result = await pass(dirs, "2026-01-15T11:00:00Z");
  assert.equal([result.retired, result.left], [0, 1]);
  assert.is(sessionById(dirs.store, row.id)!.ended_at, null);
  assert.match(result.events.map((e) => e.line).join("\n"), 'is "needs_info", not idle');
}));

test("busy, a malformed timestamp and a missing episode are never retired, however long ago the merge; each is an orphan_session", inWorkerDir(async (dirs) => {
  const busy = makeItem(dirs.store, { issue: 1, state: "done" });
  await worker(dirs, busy.id, { status: "busy", since: "2026-01-15T08:00:00Z" });
  const malformed = makeItem(dirs.store, { issue: 2, state: "done" });
  const bad = await worker(dirs, malformed.id, { status: "idle", since: "2026-01-15T08:00:00Z" });
  const journal = await openJournal(bad.worktree);
  const entry = await findOpen(journal, bad.key);
  // Written past the schema check, as a hand edit would leave it.
  const { writeFileSync } = await import("node:fs");
  writeFileSync(entry!.file, (await import("yaml")).stringify({ ...entry!.episode, status_changed_at: "yesterday" }));
  const missing = makeItem(dirs.store, { issue: 3, state: "done" });
  await worker(dirs, missing.id);
  for (const id of [busy.id, malformed.id, missing.id]) merged(dirs.store, id);
  const result = await pass(dirs, "2026-01-16T10:00:00Z");
  assert.equal([result.retired, result.left, result.orphans.raised], [0, 3, 3]);
  assert.is(retireRecords(dirs.store).length, 0, "no retirement was even attempted");
  assert.equal(listAnomalies(dirs.store, { open: true }).map((a) => [a.kind, a.item]), [["orphan_session", busy.id], ["orphan_session", malformed.id], ["orphan_session", missing.id]]);
  const again = await pass(dirs, "2026-01-16T10:01:00Z");
  assert.is(again.orphans.raised, 0, "raised once, not every pass");
}));

test("an orphan raised while busy is retracted once the worker goes idle and is retired, and resolved gone when it dies", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 1, state: "done" });
  const w = await worker(dirs, item.id, { status: "busy", since: "2026-01-15T10:00:00Z" });
  merged(dirs.store, item.id);
  assert.is((await pass(dirs, "2026-01-15T10:01:00Z")).orphans.raised, 1);
  const journal = await openJournal(w.worktree);
  await setStatus(journal, { key: w.key, status: "idle", now: new Date("2026-01-15T10:02:00Z") });
  const retired = await pass(dirs, "2026-01-15T10:03:00Z");
  assert.equal([retired.retired, retired.orphans.retracted], [1, 1]);
  assert.is(listAnomalies(dirs.store, { open: true }).length, 0);
  const other = makeItem(dirs.store, { issue: 2, state: "done" });
  const dying = await worker(dirs, other.id, { status: "busy" });
  assert.is((await pass(dirs, "2026-01-15T10:04:00Z")).orphans.raised, 1);
  // The worker ends by itself: its row closes (as the spool drain closes it), and the anomaly resolves as gone.
  const { endSession } = await import("../work-items/sessions.ts");
  endSession(dirs.store, dying.row.id, "exited", { code: 0 });
  const gone = await pass(dirs, "2026-01-15T10:05:00Z");
  assert.is(gone.orphans.gone, 1);
  assert.is(listAnomalies(dirs.store, { open: true }).length, 0);
}));

test("failed and abandoned items keep their workers, idle or not", inWorkerDir(async (dirs) => {
  const failed = makeItem(dirs.store, { issue: 1, state: "failed" });
  const a = await worker(dirs, failed.id, { status: "idle", since: "2026-01-15T08:00:00Z" });
  const abandoned = makeItem(dirs.store, { issue: 2, state: "active" });
  const b = await worker(dirs, abandoned.id, { status: "idle", since: "2026-01-15T08:00:00Z" });
  transition(dirs.store, abandoned.id, "abandoned", { reason: "label removed" });
  for (const id of [failed.id, abandoned.id]) merged(dirs.store, id);
  const result = await pass(dirs, "2026-01-16T10:00:00Z");
  assert.equal([result.retired, result.orphans.raised], [0, 0]);
  for (const w of [a, b]) assert.is(sessionState(dirs.root, readRecord(dirs.root, w.record.id)!), "running");
}));

test("a pause and holds do not block retirement: they govern what starts", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 1, state: "done" });
  await worker(dirs, item.id, { status: "idle", since: "2026-01-15T10:00:00Z" });
  merged(dirs.store, item.id);
  pause(dirs.store, { reason: "owner away" });
  hold(dirs.store, { item: item.id }, { reason: "looking at it" });
  hold(dirs.store, { repo: "demo/widgets" }, { reason: "looking at it" });
  assert.is((await pass(dirs, "2026-01-15T10:01:00Z")).retired, 1);
}));

test("a kept item's current worker is not retired; unkept it is retired on the next idle pass; an earlier attempt's worker is not covered", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 1, state: "active" });
  const earlier = await worker(dirs, item.id, { status: "busy", since: "2026-01-15T10:00:00Z" });
  const current = await worker(dirs, item.id, { status: "idle", since: "2026-01-15T10:00:00Z", attempt: 2 });
  placeKeep(dirs.store, item.id, { worker: (await configFrom('[worker]\nbinary = "demo-worker"\n')).worker });
  transition(dirs.store, item.id, "done", { reason: "issue closed", issueClosedObserved: true });
  merged(dirs.store, item.id);
  const kept = await pass(dirs, "2026-01-15T10:01:00Z");
  assert.is(kept.retired, 0);
  assert.is(sessionById(dirs.store, current.row.id)!.ended_at, null, "the kept session stays");
  assert.equal(listAnomalies(dirs.store, { open: true }).map((a) => a.action_id), [earlier.row.id], "the earlier, busy attempt is an orphan: the keep is not its");
  const journal = await openJournal(earlier.worktree);
  await setStatus(journal, { key: earlier.key, status: "idle", now: new Date("2026-01-15T10:02:00Z") });
  const earlierGoes = await pass(dirs, "2026-01-15T10:03:00Z");
  assert.is(earlierGoes.retired, 1, "the earlier attempt's idle worker is retired despite the keep");
  assert.is(sessionById(dirs.store, earlier.row.id)!.end_reason, "retired");
  releaseKeep(dirs.store, item.id);
  const unkept = await pass(dirs, "2026-01-15T10:04:00Z");
  assert.is(unkept.retired, 1);
  assert.is(sessionById(dirs.store, current.row.id)!.end_reason, "retired");
}));

test("a session carrying its own keep tag is kept like a kept item: neither retired nor an orphan", inWorkerDir(async (dirs) => {
  const idle = makeItem(dirs.store, { issue: 1, state: "done" });
  await worker(dirs, idle.id, { status: "idle", since: "2026-01-15T10:00:00Z", tags: { keep: "true" } });
  const busy = makeItem(dirs.store, { issue: 2, state: "done" });
  await worker(dirs, busy.id, { status: "busy", since: "2026-01-15T10:00:00Z", tags: { keep: "true" } });
  for (const id of [idle.id, busy.id]) merged(dirs.store, id);
  const result = await pass(dirs, "2026-01-15T10:01:00Z");
  assert.equal([result.retired, result.left, result.orphans.raised], [0, 2, 0]);
  assert.is(retireRecords(dirs.store).length, 0);
}));

test("the generic profile has no registry: its workers are never taken for idle", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 1, state: "done" });
  await worker(dirs, item.id, { status: "idle", since: "2026-01-15T08:00:00Z" });
  merged(dirs.store, item.id);
  const result = await pass(dirs, "2026-01-16T10:00:00Z", { profile: "generic" });
  assert.equal([result.retired, result.orphans.raised], [0, 1]);
}));

test("a worker that survives its stop settles nothing: the row stays open and orphan_session is raised", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 1, state: "done" });
  const worktree = join(dirs.work, "issue-1");
  mkdirSync(worktree, { recursive: true });
  git(worktree, "init", "--quiet");
  // Run in the foreground of a group made here, as a terminal tab runs it: its background job shares that
  // group, which its holder did not make, so nothing signals the group and the job outlives the stop.
  const argv = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  const holder = spawn(argv[0], [...argv.slice(1), "session", "run", "--name", "fg", "--tag", `ra_item=${item.id}`, "--", "sh", "-c", "sleep 60 > job.out 2>&1 & exec sleep 60"], {
    cwd: worktree, env: process.env, detached: true, stdio: "ignore",
  });
  const pgid = holder.pid!;
  try {
    const deadline = Date.now() + 30_000;
    while (groupMembers(pgid).length < 3 || !listRecords(dirs.root)[0]?.childPid) {
      if (Date.now() > deadline) throw new Error("the foreground session did not start its job");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const record = listRecords(dirs.root)[0];
    const row = recordSession(dirs.store, {
      id: record.id, item: item.id, name: "fg", host: HOST, launcher: "process", marker: "fg", worktree,
      branch: "robot-army/issue-1", started_at: "2026-01-15T09:00:00Z", simulated: false, episode_key: "item-1",
    });
    const journal = await openJournal(worktree, { forWrite: true });
    await startEpisode(journal, { key: "item-1", clientPid: process.pid, now: new Date("2026-01-15T10:00:00Z") });
    await setStatus(journal, { key: "item-1", status: "idle", now: new Date("2026-01-15T10:00:00Z") });
    merged(dirs.store, item.id);
    const result = await pass(dirs, "2026-01-15T10:01:00Z");
    assert.equal([result.retired, result.orphans.raised], [0, 1]);
    assert.is(sessionById(dirs.store, row.id)!.ended_at, null, "\"could not\" is never recorded as gone");
    assert.match(listAnomalies(dirs.store, { open: true })[0].detail, "could not stop its process");
    const outcome = retireRecords(dirs.store).find((r) => r.phase === "outcome")!;
    assert.is(outcome.body.result, "left-running");
    // The holder spooled the command's exit; while the job it left runs, the drain leaves that exit waiting
    // and the row open, and the next pass neither retries the stop nor resolves the orphan as gone.
    const spool = spoolDir(process.env);
    await waitFor("the worker's exit to be spooled", () => existsSync(spool) && readdirSync(spool).some((f) => f.endsWith(".json")));
    const drained = await drainSpool(dirs.store, spool, new Set(), dirs.root);
    assert.equal([drained.processed, drained.waiting], [0, 1]);
    assert.is(sessionById(dirs.store, row.id)!.ended_at, null);
    const next = await pass(dirs, "2026-01-15T10:02:00Z");
    assert.equal([next.retired, next.orphans.gone], [0, 0]);
    assert.is(retireRecords(dirs.store).length, 2, "no second stop of a session whose exit is on record");
    assert.is(listAnomalies(dirs.store, { open: true }).length, 1);
    // The job ends: the exit is drained, the row closes, and the orphan is resolved as gone.
    process.kill(-pgid, "SIGKILL");
    while (groupMembers(pgid).length) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.is((await drainSpool(dirs.store, spool, new Set(), dirs.root)).processed, 1);
    assert.is((await pass(dirs, "2026-01-15T10:03:00Z")).orphans.gone, 1);
  } finally {
    if (groupMembers(pgid).length) process.kill(-pgid, "SIGKILL");
    while (groupMembers(pgid).length) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}));

test.run();
