import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { createFileExclusive } from "../atomic.ts";
import { groupMembers, identify, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { collectGarbage, describeGc, fastExitsInARow } from "./gc.ts";
import type { GcEntry, GcReport } from "./gc.ts";
import { holdSession, update } from "./holder.ts";
import type { HolderResult } from "./holder.ts";
import { childIdentity, listRecords, readRecord, readSessionEvents, sessionFiles, unreadableRecords, writeRecord } from "./records.ts";
import type { SessionRecord } from "./records.ts";
import { createSession, respawnRecord } from "./start.ts";
import type { SessionSpec } from "./start.ts";
import { sessionState } from "./state.ts";
import { stopSession } from "./stop.ts";
import { holderGone, inSessionDir, sleep, startInTerminalGroup, trackSessionProcesses, waitFor } from "../testing/sessions.ts";

/** Holders and children this file started, so none outlives its test. */
const processes = trackSessionProcesses(test, { childrenBy: "pid" });
const { started, leaked } = processes;

/** A session run to its end in this process; `keep` stays on record only if asked. */
async function endedSession(root: string, spec: SessionSpec, options: { keep?: boolean } = {}): Promise<SessionRecord> {
  const created = await createSession(root, { ...spec, tags: { ...spec.tags, keep: "true" } });
  await holdSession(root, created.id, "tee");
  if (options.keep) return readRecord(root, created.id)!;
  return await update(root, created.id, (r) => {
    const tags = { ...r.tags };
    delete tags.keep;
    return { ...r, tags };
  });
}

/** A session held in this process and still running; `done` settles when it ends. */
async function runningHere(root: string, spec: SessionSpec): Promise<{ record: SessionRecord; done: Promise<HolderResult> }> {
  const created = await createSession(root, spec);
  let done!: Promise<HolderResult>;
  await new Promise<void>((resolve) => {
    done = holdSession(root, created.id, "tee", () => resolve());
  });
  const record = readRecord(root, created.id)!;
  started.push({ ...childIdentity(record), pid: record.childPid! });
  return { record, done };
}

/** A detached session; its holder and child are remembered so the test can end them. */
async function startSession(root: string, spec: SessionSpec): Promise<SessionRecord> {
  return (await processes.start(root, spec)).record;
}

/** A detached session whose holder this test SIGKILLs, leaving its child running (vanished). */
async function vanishedSession(root: string, spec: SessionSpec): Promise<SessionRecord> {
  const record = await startSession(root, spec);
  process.kill(record.holderPid!, "SIGKILL");
  await holderGone(record);
  return record;
}

/** Ends a process this test started, by its pid, and waits until it is gone. */
async function kill(identity: ProcessIdentity): Promise<void> {
  if (liveness(identity) === "running") process.kill(identity.pid, "SIGKILL");
  await waitFor(`pid ${identity.pid} to end`, () => liveness(identity) === "exited");
}

const names = (entries: GcEntry[]) => entries.map((e) => e.name).sort();
const childOf = (r: SessionRecord): ProcessIdentity => ({ pid: r.childPid!, started_at: r.childStartedAt });

/** Every file in the root with its content, to prove a pass changed nothing. */
function snapshot(root: string): Record<string, string> {
  return Object.fromEntries(readdirSync(root).sort().map((name) => [name, readFileSync(join(root, name), "utf8")]));
}

function emptyReport(overrides: Partial<GcReport> = {}): GcReport {
  return { dryRun: false, orphans: [], abandoned: [], respawned: [], flapping: [], removed: [], kept: [], skipped: [], ...overrides };
}

// --- sweep

test("gc on an empty root has nothing to clean up", inSessionDir(async ({ root }) => {
  const report = await collectGarbage(root);
  assert.equal(report, emptyReport());
  assert.equal(describeGc(report), ["Nothing to clean up"]);
  assert.equal(await collectGarbage(join(root, "missing")), emptyReport());
}));

test("gc sweeps exited, crashed, failed and killed sessions, reports kept ones, leaves running ones", inSessionDir(async ({ root, work }) => {
  const exited = await endedSession(root, { command: "sh", args: ["-c", "exit 3"], cwd: work, name: "exited" });
  const crashed = await endedSession(root, { command: "sh", args: ["-c", "kill -KILL $$"], cwd: work, name: "crashed" });
  const failed = await endedSession(root, { command: "ra-no-such-command-xyz", args: [], cwd: work, name: "failed" });
  const kept = await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "kept" }, { keep: true });
  const killed = await runningHere(root, { command: "sleep", args: ["30"], cwd: work, name: "killed" });
  assert.is(await stopSession(root, killed.record), "stopped");
  assert.is((await killed.done).record?.ended, "killed");
  const running = await runningHere(root, { command: "sleep", args: ["30"], cwd: work, name: "running" });
  try {
    const report = await collectGarbage(root);
    assert.equal(names(report.removed), ["crashed", "exited", "failed", "killed"]);
    const reasons = Object.fromEntries(report.removed.map((e) => [e.name, e.reason]));
    assert.equal(reasons, { exited: "exited 3", crashed: "crashed (SIGKILL)", failed: "failed to start", killed: "killed" });
    assert.equal(report.kept, [{ name: "kept", id: kept.id, reason: "keep=true" }]);
    assert.equal({ ...report, removed: [], kept: [] }, emptyReport());
    for (const gone of [exited, crashed, failed, killed.record]) assert.is(readRecord(root, gone.id), undefined, `${gone.name} is removed`);
    assert.equal(listRecords(root).map((r) => r.name).sort(), ["kept", "running"]);
    assert.equal(readdirSync(root).filter((f) => f.includes(exited.id)), [], "every file of a swept session is gone");
    assert.ok(describeGc(report).includes(`removed: exited ${exited.id.slice(0, 8)} (exited 3)`));
    assert.ok(describeGc(report).includes(`kept: kept ${kept.id.slice(0, 8)} (keep=true)`));
  } finally {
    await stopSession(root, running.record);
    await running.done;
  }
}));

test("gc: with only kept sessions it reports them and has nothing to clean up", inSessionDir(async ({ root, work }) => {
  await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "kept", tags: { note: "x" } }, { keep: true });
  const report = await collectGarbage(root);
  assert.equal(names(report.kept), ["kept"]);
  assert.equal(describeGc(report).at(-1), "Nothing to clean up");
}));

test("gc skips a session whose holder cannot be checked and touches nothing of it", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sleep", args: ["1"], cwd: work, name: "murky" });
  writeRecord(root, { ...created, holderPid: process.pid, holderStartedAt: null });
  const before = snapshot(root);
  const report = await collectGarbage(root);
  assert.equal(names(report.skipped), ["murky"]);
  assert.match(report.skipped[0].reason, /cannot be checked/);
  assert.equal(snapshot(root), before);
}));

// --- vanished

test("gc skips a vanished session whose child may still run; once stopped, sweeps it", inSessionDir(async ({ root, work }) => {
  const record = await vanishedSession(root, { command: "sleep", args: ["30"], cwd: work, name: "ghostly" });
  const report = await collectGarbage(root);
  assert.equal(names(report.skipped), ["ghostly"]);
  assert.match(report.skipped[0].reason, new RegExp(`child pid ${record.childPid} may still run`));
  assert.equal(report.removed, []);
  assert.ok(readRecord(root, record.id), "its files stay");
  assert.is(liveness(childOf(record)), "running", "gc did not signal it");
  assert.is(await stopSession(root, record, { graceMs: 2_000 }), "stopped");
  assert.is(liveness(childOf(record)), "exited");
  const second = await collectGarbage(root);
  assert.equal(second.removed, [{ name: "ghostly", id: record.id, reason: "killed" }]);
}));

test("gc removes a vanished session whose child is proven gone", inSessionDir(async ({ root, work }) => {
  const record = await vanishedSession(root, { command: "sleep", args: ["30"], cwd: work, name: "gone" });
  await kill(childOf(record));
  assert.is(sessionState(root, readRecord(root, record.id)!), "vanished");
  const report = await collectGarbage(root);
  assert.equal(report.removed, [{ name: "gone", id: record.id, reason: "vanished: its holder died without recording an exit" }]);
  assert.is(readRecord(root, record.id), undefined);
}));

test("gc keeps a vanished session whose child ended while what it started still runs in its group; sweeps it once that ends", inSessionDir(async ({ root, work }) => {
  const record = await vanishedSession(root, { command: "sh", args: ["-c", "sleep 30 & exec sleep 1"], cwd: work, name: "grandparent" });
  const pgid = record.childPgid!;
  try {
    await waitFor("the child to end", () => liveness(childOf(record)) === "exited", 5_000);
    const report = await collectGarbage(root);
    assert.equal(report.skipped, [{ name: "grandparent", id: record.id, reason: `holder gone and child pid ${record.childPid} ended, but what it started in process group ${pgid} may still run` }]);
    assert.equal(report.removed, []);
    assert.ok(readRecord(root, record.id), "its files stay: they are how the worker is known to run");
  } finally {
    // The group its holder made for this test's session.
    if (groupMembers(pgid).length) process.kill(-pgid, "SIGKILL");
  }
  await waitFor("the group to end", () => groupMembers(pgid).length === 0);
  assert.equal((await collectGarbage(root)).removed, [{ name: "grandparent", id: record.id, reason: "vanished: its holder died without recording an exit" }]);
}));

// --- orphans

test("gc stops and removes an orphan whose parent session is gone", inSessionDir(async ({ root, work }) => {
  const orphan = await startSession(root, { command: "sh", args: ["-c", "sleep 30"], cwd: work, name: "kid", tags: { parent: "mom" } });
  const report = await collectGarbage(root);
  assert.equal(report.orphans, [{ name: "kid", id: orphan.id, reason: `parent "mom" is gone` }]);
  assert.equal({ ...report, orphans: [] }, emptyReport());
  assert.is(liveness(childOf(orphan)), "exited", "the orphan's command was stopped");
  await holderGone(orphan);
  assert.equal(readdirSync(root).filter((f) => f.includes(orphan.id)), []);
}));

test("gc: a session whose parent runs is no orphan; one whose parent has ended is", inSessionDir(async ({ root, work }) => {
  const mom = await runningHere(root, { command: "sleep", args: ["30"], cwd: work, name: "mom" });
  try {
    await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "by-name", tags: { parent: "mom" } }, { keep: true });
    await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "by-id", tags: { parent: mom.record.id } }, { keep: true });
    await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "kid", tags: { parent: "dad" } });
    await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "dad" });
    const report = await collectGarbage(root);
    assert.equal(names(report.orphans), ["kid"], "dad has exited: kid is an orphan");
    assert.equal(names(report.kept), ["by-id", "by-name"]);
    assert.equal(names(report.removed), ["dad"]);
  } finally {
    await stopSession(root, mom.record);
    await mom.done;
  }
}));

test("gc reports a kept orphan and neither stops nor removes it: keep governs what ends", inSessionDir(async ({ root, work }) => {
  const orphan = await startSession(root, { command: "sh", args: ["-c", "sleep 30"], cwd: work, name: "kid", tags: { parent: "mom", keep: "yes" } });
  try {
    const report = await collectGarbage(root);
    assert.equal(report.orphans, []);
    assert.equal(report.kept, [{ name: "kid", id: orphan.id, reason: `keep=yes; an orphan: parent "mom" is gone` }]);
    assert.is(liveness(childOf(orphan)), "running", "the kept orphan's command still runs");
    assert.ok(readRecord(root, orphan.id), "its record stays");
  } finally {
    await stopSession(root, readRecord(root, orphan.id) ?? orphan);
    await holderGone(orphan);
  }
}));

test("an ended kept orphan is reported once, as an orphan it keeps", inSessionDir(async ({ root, work }) => {
  const kid = await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "kid", tags: { parent: "gone-dad" } }, { keep: true });
  const report = await collectGarbage(root);
  assert.equal(report.kept, [{ name: "kid", id: kid.id, reason: `keep=true; an orphan: parent "gone-dad" is gone` }]);
  assert.equal(report.removed, []);
  assert.ok(readRecord(root, kid.id));
}));

test("gc never leaves an orphan's command running untracked when its holder has vanished", inSessionDir(async ({ root, work }) => {
  const orphan = await vanishedSession(root, { command: "sleep", args: ["30"], cwd: work, name: "kid", tags: { parent: "mom" } });
  try {
    await collectGarbage(root);
    const child = liveness(childOf(orphan));
    const onRecord = readRecord(root, orphan.id) !== undefined;
    assert.ok(child === "exited" || onRecord, `the orphan's child is ${child} and its record is ${onRecord ? "kept" : "removed"}`);
  } finally {
    await kill(childOf(orphan));
  }
}));

// --- abandoned

test("gc stops a permanent session whose cwd was deleted and records it abandoned", inSessionDir(async ({ root, work }) => {
  const cwd = join(work, "gone-soon");
  mkdirSync(cwd);
  const record = await startSession(root, { command: "sleep", args: ["30"], cwd, name: "keeper", permanent: true });
  rmSync(cwd, { recursive: true });
  const report = await collectGarbage(root);
  assert.equal(report.abandoned, [{ name: "keeper", id: record.id, reason: `working directory ${cwd} is gone` }]);
  assert.equal(report.respawned, [], "an abandoned session is not respawned");
  assert.is(liveness(childOf(record)), "exited");
  await holderGone(record);
  const after = readRecord(root, record.id)!;
  assert.is(after.ended, "abandoned");
  assert.ok(after.exitedAt);
  assert.ok(readSessionEvents(root, record.id).some((e) => e.kind === "abandoned"));
  const again = await collectGarbage(root);
  assert.equal(again, emptyReport(), "an abandoned session is neither respawned nor swept");
}));

test("gc never records a vanished permanent session abandoned while its command may still run", inSessionDir(async ({ root, work }) => {
  const cwd = join(work, "gone-soon");
  mkdirSync(cwd);
  const record = await vanishedSession(root, { command: "sleep", args: ["30"], cwd, name: "keeper", permanent: true });
  rmSync(cwd, { recursive: true });
  try {
    await collectGarbage(root);
    const child = liveness(childOf(record));
    const after = readRecord(root, record.id);
    assert.ok(child === "exited" || !after?.exitedAt, `the child is ${child} while the record says it ended (${after?.ended}) at ${after?.exitedAt}`);
  } finally {
    await kill(childOf(record));
  }
}));

// --- respawn and flapping

test("gc respawns an ended permanent session under a new generation, then marks it flapping after three exits", inSessionDir(async ({ root, work }) => {
  const first = await endedSession(root, { command: "sh", args: ["-c", "exit 1"], cwd: work, name: "phoenix", permanent: true });
  assert.is(first.generation, 1);
  for (const generation of [2, 3]) {
    const report = await collectGarbage(root);
    assert.equal(report.respawned, [{ name: "phoenix", id: first.id, reason: `generation ${generation}` }]);
    assert.equal(describeGc(report), [`respawned: phoenix ${first.id.slice(0, 8)} (generation ${generation})`]);
    const again = await waitFor(`generation ${generation} to exit`, () => {
      const r = readRecord(root, first.id);
      return r?.generation === generation && r.exitedAt ? r : undefined;
    });
    started.push({ pid: again.holderPid!, started_at: again.holderStartedAt });
    assert.is(again.exitCode, 1);
    await holderGone(again);
  }
  const third = await collectGarbage(root);
  assert.equal(third.respawned, []);
  assert.equal(third.flapping, [{ name: "phoenix", id: first.id, reason: "3 runs in a row ended within 60s of starting" }]);
  const flapping = readRecord(root, first.id)!;
  assert.is(flapping.tags.flapping, "true");
  assert.is(flapping.generation, 3);
  assert.equal(readSessionEvents(root, first.id).map((e) => e.kind),
    ["start", "exit", "respawn", "start", "exit", "respawn", "start", "exit", "tag"]);
  assert.equal(await collectGarbage(root), emptyReport(), "a flapping session is left alone");
}));

test("gc skips a vanished permanent session whose child may still run instead of respawning it", inSessionDir(async ({ root, work }) => {
  const record = await vanishedSession(root, { command: "sleep", args: ["30"], cwd: work, name: "twin", permanent: true });
  try {
    const report = await collectGarbage(root);
    assert.equal(names(report.skipped), ["twin"]);
    assert.equal(report.respawned, []);
    assert.is(readRecord(root, record.id)?.generation, 1);
  } finally {
    await kill(childOf(record));
  }
}));

test("gc: a permanent session that cannot start again does not stop the pass from sweeping the rest", inSessionDir(async ({ root, work }) => {
  await endedSession(root, { command: "ra-no-such-command-xyz", args: [], cwd: work, name: "broken", permanent: true });
  await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "litter" });
  let report: GcReport | undefined;
  let error: unknown;
  try {
    report = await collectGarbage(root);
  } catch (caught) {
    error = caught;
  }
  assert.is(error, undefined, `gc threw: ${(error as Error | undefined)?.message}`);
  assert.equal(names(report!.removed), ["litter"]);
}));

// --- dry run

test("a dry run says what it would do and changes nothing", inSessionDir(async ({ root, work }) => {
  const cwd = join(work, "gone");
  mkdirSync(cwd);
  await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "litter" });
  await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "kept" }, { keep: true });
  await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "phoenix", permanent: true });
  await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd, name: "homeless", permanent: true });
  rmSync(cwd, { recursive: true });
  const orphan = await runningHere(root, { command: "sleep", args: ["30"], cwd: work, name: "kid", tags: { parent: "mom" } });
  try {
    const before = snapshot(root);
    const report = await collectGarbage(root, { dryRun: true });
    assert.is(report.dryRun, true);
    assert.equal(names(report.orphans), ["kid"]);
    assert.equal(names(report.abandoned), ["homeless"]);
    assert.equal(names(report.respawned), ["phoenix"]);
    assert.equal(names(report.removed), ["litter"]);
    assert.equal(names(report.kept), ["kept"]);
    assert.equal(report.flapping, []);
    assert.equal(report.skipped, []);
    assert.equal(snapshot(root), before, "no file was changed");
    assert.is(liveness(childOf(orphan.record)), "running", "the orphan was not stopped");
    const lines = describeGc(report);
    assert.ok(lines.some((l) => l.startsWith("would remove orphan: kid")));
    assert.ok(lines.some((l) => l.startsWith("would respawn: phoenix")));
    assert.ok(lines.some((l) => l.startsWith("would remove: litter")));
    assert.not.ok(lines.includes("Nothing to clean up"));
  } finally {
    await stopSession(root, orphan.record);
    await orphan.done;
  }
}));

// --- a stale pass

/** Holds a session's lock as this process, the way another gc pass or a holder would. */
function holdLock(root: string, id: string): () => void {
  const path = sessionFiles(root, id).lock;
  assert.ok(createFileExclusive(path, JSON.stringify(identify(process.pid))), "lock taken");
  return () => rmSync(path);
}

test("a stale pass never removes a session that was respawned after it read it", inSessionDir(async ({ root, work }) => {
  const seen = await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "litter" });
  const release = holdLock(root, seen.id);
  const pass = collectGarbage(root); // reads every record now, then waits for the lock
  await sleep(50);
  const newer = { ...respawnRecord(seen), holderPid: process.pid, holderStartedAt: identify(process.pid).started_at };
  writeRecord(root, newer);
  release();
  const report = await pass;
  assert.equal(report.removed, []);
  assert.equal(report.skipped, [{ name: "litter", id: seen.id, reason: "changed since this pass read it" }]);
  assert.equal(readRecord(root, seen.id), newer, "the newer generation is untouched");
}));

test("a stale pass never respawns over a generation another pass already started", inSessionDir(async ({ root, work }) => {
  const seen = await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "phoenix", permanent: true });
  const release = holdLock(root, seen.id);
  const pass = collectGarbage(root);
  await sleep(50);
  const newer = respawnRecord(seen);
  writeRecord(root, newer);
  release();
  const report = await pass;
  assert.equal(report.respawned, []);
  assert.equal(names(report.skipped), ["phoenix"]);
  const after = readRecord(root, seen.id)!;
  assert.equal(after, newer, "generation 2 as the other pass wrote it: no holder started, no generation 3");
  assert.not.ok(readSessionEvents(root, seen.id).some((e) => e.kind === "respawn"));
}));

test("two gc passes at once respawn a permanent session once", inSessionDir(async ({ root, work }) => {
  const seen = await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "phoenix", permanent: true });
  const [a, b] = await Promise.all([collectGarbage(root), collectGarbage(root)]);
  assert.is(a.respawned.length + b.respawned.length, 1);
  const respawned = readRecord(root, seen.id)!;
  assert.is(respawned.generation, 2);
  started.push({ pid: respawned.holderPid!, started_at: respawned.holderStartedAt });
  const exited = await waitFor("generation 2 to exit", () => {
    const r = readRecord(root, seen.id);
    return r?.exitedAt ? r : undefined;
  });
  assert.is(exited.generation, 2);
  await holderGone(exited);
}));

test("no test above left a process running", () => {
  assert.equal(leaked, []);
});

test("flapping is measured on the runs themselves: three short runs in a row, however far apart gc saw them", () => {
  const run = (generation: number, start: string, end: string) => [
    { at: start, kind: "start", generation }, { at: end, kind: "exit", generation },
  ];
  const spaced = [
    ...run(1, "2026-01-15T10:00:00Z", "2026-01-15T10:00:01Z"),
    ...run(2, "2026-01-15T10:05:00Z", "2026-01-15T10:05:02Z"),
    ...run(3, "2026-01-15T10:10:00Z", "2026-01-15T10:10:01Z"),
  ];
  assert.is(fastExitsInARow(spaced), 3);
  const longThenShort = [...run(1, "2026-01-15T10:00:00Z", "2026-01-15T11:00:00Z"), ...run(2, "2026-01-15T11:05:00Z", "2026-01-15T11:05:01Z")];
  assert.is(fastExitsInARow(longThenShort), 1, "a long run breaks the row");
  assert.is(fastExitsInARow([{ at: "2026-01-15T10:00:00Z", kind: "exit", generation: 1, ended: "failed-to-start" }]), 1);
});

test("gc neither removes nor calls stopped an orphan whose command left a job in its terminal's group, until the job has ended", inSessionDir(async ({ root, work }) => {
  const { record, pgid } = await startInTerminalGroup(root, work, `sleep 30 > "${join(work, "job.out")}" 2>&1 & exec sleep 30`);
  processes.groups.push(pgid);
  await update(root, record.id, (r) => ({ ...r, tags: { ...r.tags, parent: "gone-parent" } }));
  const job = await waitFor("the background job", () => groupMembers(pgid).find((pid) => pid !== record.holderPid && pid !== record.childPid), 5_000);
  const left = `1 process it started still runs in process group ${pgid}, which robot-army did not make and so does not signal: pid ${job}`;
  const first = await collectGarbage(root);
  assert.equal(first.orphans, [], "not removed: its record is what says the job may still work in its directory");
  assert.equal(first.skipped.map((s) => s.reason), [`stopped its command, but ${left}`]);
  assert.equal(readRecord(root, record.id)?.membersAtExit, "remained");
  // The next pass finds its exit on record and the job still running: still not swept.
  const second = await collectGarbage(root);
  assert.equal([second.orphans, second.removed], [[], []]);
  assert.equal(second.skipped.map((s) => s.reason), [`its command ended, but ${left}`]);
  process.kill(-pgid, "SIGKILL");
  await waitFor("the group to end", () => groupMembers(pgid).length === 0);
  const third = await collectGarbage(root);
  assert.equal(third.orphans.map((o) => o.id), [record.id], "once nothing it started runs, it goes");
  assert.not.ok(existsSync(sessionFiles(root, record.id).record));
}));

test("a damaged record hides no other session and is skipped by gc, never acted on", inSessionDir(async ({ root, work }) => {
  const ended = await endedSession(root, { command: "sh", args: ["-c", "exit 0"], cwd: work, name: "fine", tags: { keep: "true" } });
  writeFileSync(join(root, "0badbad0-0000-4000-8000-000000000000.json"), "{ not json");
  assert.equal(listRecords(root).map((r) => r.id), [ended.id]);
  assert.equal(unreadableRecords(root).map((u) => basename(u.file)), ["0badbad0-0000-4000-8000-000000000000.json"]);
  const report = await collectGarbage(root);
  assert.equal(report.skipped.map((s) => s.reason), ["its record cannot be read"]);
  assert.ok(existsSync(join(root, "0badbad0-0000-4000-8000-000000000000.json")), "left for a person to look at");
}));

test.run();
