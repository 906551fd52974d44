import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { groupMembers as groupPids, identify, liveness } from "../processes.ts";
import { exitedPid } from "../testing/fixtures.ts";
import type { ProcessIdentity } from "../processes.ts";
import { exitCodeOf, holdSession, retained, update } from "./holder.ts";
import { withLock } from "./lock.ts";
import { childIdentity, holderIdentity, readRecord, readSessionEvents, removeSessionFiles, sessionFiles, writeRecord } from "./records.ts";
import type { SessionRecord } from "./records.ts";
import { createSession, startDetached } from "./start.ts";
import type { SessionSpec } from "./start.ts";
import { childRunning, sessionState, workerRuns } from "./state.ts";
import { describeLeftRunning, describeStopLeft, stopSession } from "./stop.ts";
import { groupMembers, holderGone, inSessionDir, rejection, startInTerminalGroup, trackSessionProcesses, waitFor } from "../testing/sessions.ts";

/**
 * Waits a moment for every member of a signalled group to be gone: a process that got a
 * fatal signal together with the recorded child may take a few ms longer to die.
 */
async function allGone(members: ProcessIdentity[]): Promise<void> {
  try {
    await waitFor("every process of the group to end", () => members.every((m) => liveness(m) === "exited"), 1_000);
  } catch {
    assert.equal(members.filter((m) => liveness(m) !== "exited").map((m) => m.pid), [], "these pids still run");
  }
}

/** Holders and process groups this file started, so none outlives its test. */
const processes = trackSessionProcesses(test, { childrenBy: "group" });
const { started: holders, leaked } = processes;

/** Starts a detached session and remembers its holder and its child's group. */
async function startSession(root: string, spec: SessionSpec): Promise<SessionRecord> {
  return (await processes.start(root, spec)).record;
}

// --- sessionState

test("sessionState: starting, then running, exited once the exit is recorded", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sleep", args: ["0.1"], cwd: work, tags: { keep: "true" } });
  assert.is(sessionState(root, created), "starting");
  await startDetached(root, created.id);
  const running = readRecord(root, created.id)!;
  holders.push({ pid: running.holderPid!, started_at: running.holderStartedAt });
  assert.is(sessionState(root, running), "running");
  assert.is(childRunning(running), true);
  const exited = await waitFor("the exit", () => {
    const r = readRecord(root, created.id);
    return r?.exitedAt ? r : undefined;
  });
  assert.is(sessionState(root, exited), "exited");
  assert.is(childRunning(exited), false);
  await holderGone(running);
}));

test("sessionState: a record with no holder long after it was written has vanished", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sleep", args: ["1"], cwd: work });
  const old = new Date(Date.now() - 120_000);
  utimesSync(sessionFiles(root, created.id).record, old, old);
  assert.is(sessionState(root, created), "vanished");
}));

test("sessionState: a holder pid with no recorded start time cannot be checked: unknown", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sleep", args: ["1"], cwd: work });
  assert.is(sessionState(root, { ...created, holderPid: process.pid, holderStartedAt: null }), "unknown");
  assert.is(sessionState(root, { ...created, holderPid: process.pid, holderStartedAt: identify(process.pid).started_at }), "running");
  assert.is(sessionState(root, { ...created, holderPid: process.pid, holderStartedAt: "2001-01-01T00:00:00.000Z" }), "vanished", "a reused pid is not our holder");
}));

// --- stopSession

test("stopSession: SIGTERM ends a detached child and everything in its process group; the files stay", inSessionDir(async ({ root, work }) => {
  const record = await startSession(root, { command: "sh", args: ["-c", "sleep 30 & sleep 30"], cwd: work, name: "pair" });
  const members = await waitFor("sh and its two sleeps", () => {
    const found = groupMembers(record.childPgid!);
    return found.length === 3 && found;
  });
  assert.ok(members.every((m) => liveness(m) === "running"));
  assert.is(await stopSession(root, record, { graceMs: 3_000 }), "stopped");
  await allGone(members);
  const after = readRecord(root, record.id)!;
  assert.is(after.ended, "killed");
  assert.is(after.exitSignal, "SIGTERM");
  assert.ok(after.killRequestedAt);
  assert.ok(after.exitedAt);
  assert.is(sessionState(root, after), "exited");
  const files = sessionFiles(root, record.id);
  await holderGone(record);
  assert.ok(existsSync(files.record) && existsSync(files.events) && existsSync(files.log), "a killed session's files stay");
  assert.equal(readSessionEvents(root, record.id).map((e) => e.kind), ["start", "kill", "exit"]);
}));

test("stopSession: SIGKILL after the grace period reaches a child (and its group) that ignores TERM", inSessionDir(async ({ root, work }) => {
  // The sleep inherits the ignored TERM: only a KILL to the whole group ends it.
  const record = await startSession(root, { command: "sh", args: ["-c", "trap '' TERM; sleep 30; echo not-reached"], cwd: work });
  const members = await waitFor("sh and its sleep", () => {
    const found = groupMembers(record.childPgid!);
    return found.length === 2 && found;
  });
  const began = Date.now();
  assert.is(await stopSession(root, record, { graceMs: 300 }), "stopped");
  assert.ok(Date.now() - began >= 300, "TERM was given its grace period");
  await allGone(members);
  const after = readRecord(root, record.id)!;
  assert.is(after.ended, "killed");
  assert.is(after.exitSignal, "SIGKILL");
  await holderGone(record);
}));

test("stopSession reaches a process of the session's group that ignores TERM, even when the child itself ends on TERM", inSessionDir(async ({ root, work }) => {
  // sh ends on TERM at once; the sleep in the subshell ignores it: only the KILL after the grace period ends it.
  const record = await startSession(root, { command: "sh", args: ["-c", "(trap '' TERM; sleep 30; echo x) & wait"], cwd: work });
  const members = await waitFor("sh, the subshell and its sleep", () => {
    const found = groupMembers(record.childPgid!);
    return found.length === 3 && found;
  });
  try {
    assert.is(await stopSession(root, record, { graceMs: 300 }), "stopped");
    await holderGone(record);
    await allGone(members);
  } finally {
    // The group our holder made for this session; ended here so the bug above leaves nothing behind.
    if (groupMembers(record.childPgid!).length) process.kill(-record.childPgid!, "SIGKILL");
    await waitFor("the group to end", () => groupMembers(record.childPgid!).length === 0);
  }
}));

test("stopSession: a killed --ephemeral session is removed by its holder", inSessionDir(async ({ root, work }) => {
  const record = await startSession(root, { command: "sleep", args: ["30"], cwd: work, ephemeral: true });
  assert.is(await stopSession(root, record), "stopped");
  await holderGone(record);
  assert.equal(readdirSync(root).filter((f) => f.includes(record.id)), []);
  assert.is(liveness({ ...childIdentity(record), pid: record.childPid! }), "exited");
}));

test("stopSession returns once the holder is done with the files: a reaped --ephemeral session is never seen half-removed", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sleep", args: ["30"], cwd: work, ephemeral: true });
  // This test plays the holder, slowed down: when its child ends it records the exit and,
  // still under the session's lock, takes a moment before it removes the files.
  const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  const holder = identify(process.pid);
  const started = identify(child.pid!);
  await update(root, created.id, (r) => ({
    ...r, holderPid: holder.pid, holderStartedAt: holder.started_at, holderStartId: holder.start_id ?? null,
    childPid: started.pid, childStartedAt: started.started_at, childStartId: started.start_id ?? null, childPgid: started.pid,
  }));
  const reaped = new Promise<void>((resolve, reject) => child.once("exit", () => {
    withLock(sessionFiles(root, created.id).lock, async () => {
      writeRecord(root, { ...readRecord(root, created.id)!, exitedAt: new Date().toISOString(), ended: "killed", exitSignal: "SIGTERM" });
      await new Promise((r) => setTimeout(r, 400));
      removeSessionFiles(root, created.id);
    }).then(resolve, reject);
  }));
  assert.is(await stopSession(root, readRecord(root, created.id)!), "stopped");
  assert.is(readRecord(root, created.id), undefined, "stopSession came back while the holder was still reaping: `session kill` would say the files are kept");
  await reaped;
}));

test("stopSession: a killed session tagged keep stays, even --ephemeral", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sleep", args: ["30"], cwd: work, ephemeral: true, tags: { keep: "true" } });
  let holding: Promise<Awaited<ReturnType<typeof holdSession>>> | undefined;
  await new Promise<void>((resolve) => {
    holding = holdSession(root, created.id, "tee", () => resolve());
  });
  assert.is(await stopSession(root, readRecord(root, created.id)!), "stopped");
  assert.is((await holding!).reaped, false);
  assert.is(readRecord(root, created.id)?.ended, "killed");
}));

test("sessionState says vanished once the holder is SIGKILLed; stopSession then ends the child and records the exit itself", inSessionDir(async ({ root, work }) => {
  const record = await startSession(root, { command: "sh", args: ["-c", "sleep 30 & sleep 30"], cwd: work });
  const members = await waitFor("sh and its two sleeps", () => {
    const found = groupMembers(record.childPgid!);
    return found.length === 3 && found;
  });
  assert.is(sessionState(root, record), "running");
  process.kill(record.holderPid!, "SIGKILL");
  await holderGone(record);
  assert.is(sessionState(root, readRecord(root, record.id)!), "vanished");
  assert.ok(members.every((m) => liveness(m) === "running"), "the child and its group run on");
  assert.is(await stopSession(root, record, { graceMs: 2_000 }), "stopped");
  await allGone(members);
  const after = readRecord(root, record.id)!;
  assert.ok(after.exitedAt);
  assert.is(after.ended, "killed");
  assert.ok(after.killRequestedAt);
  assert.is(sessionState(root, after), "exited");
  const exit = readSessionEvents(root, record.id).find((e) => e.kind === "exit");
  assert.is(exit?.recordedBy, "session kill");
}));

test("stopSession recording a vanished session's exit claims no signal it did not send", inSessionDir(async ({ root, work }) => {
  const record = await startSession(root, { command: "sleep", args: ["30"], cwd: work });
  process.kill(record.holderPid!, "SIGKILL");
  await holderGone(record);
  assert.is(await stopSession(root, record, { graceMs: 2_000 }), "stopped");
  // TERM ended the child: SIGKILL was never sent, and nobody saw how the child ended.
  const after = readRecord(root, record.id)!;
  assert.ok(after.exitSignal === null || after.exitSignal === "SIGTERM", `exitSignal is ${after.exitSignal}, but no SIGKILL was sent`);
}));

test("stopSession stops a session held in this process; the holder reports the kill", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sleep", args: ["30"], cwd: work });
  let holding: Promise<Awaited<ReturnType<typeof holdSession>>> | undefined;
  const childStarted = new Promise<void>((resolve) => {
    holding = holdSession(root, created.id, "tee", () => resolve());
  });
  await childStarted;
  const running = readRecord(root, created.id)!;
  assert.is(running.holderPid, process.pid);
  assert.is(await stopSession(root, running), "stopped");
  const result = await holding!;
  assert.is(result.signal, "SIGTERM");
  assert.is(exitCodeOf(result), 143);
  assert.is(result.reaped, false);
  assert.is(result.record?.ended, "killed", "a kill is not a crash");
}));

test("stopSession: an exited session is not running: nothing is signalled or changed", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sh", args: ["-c", "exit 2"], cwd: work, tags: { keep: "1" } });
  await holdSession(root, created.id, "tee");
  const exited = readRecord(root, created.id)!;
  assert.is(await stopSession(root, exited), "not-running");
  assert.equal(readRecord(root, created.id), exited);
}));

test("stopSession refuses a session still starting", inSessionDir(async ({ root, work }) => {
  const created = await createSession(root, { command: "sleep", args: ["1"], cwd: work });
  const error = await rejection(stopSession(root, created));
  assert.instance(error, PreconditionError);
  assert.match((error as Error).message, /still starting/);
  assert.is(readRecord(root, created.id)?.killRequestedAt, null);
}));

test("stopSession refuses a session whose holder cannot be checked, and signals nothing", inSessionDir(async ({ root, work }) => {
  const bystander = spawn("sleep", ["30"], { stdio: "ignore" });
  const closed = new Promise((resolve) => bystander.once("close", resolve));
  try {
    const created = await createSession(root, { command: "sleep", args: ["30"], cwd: work });
    const unknown: SessionRecord = {
      ...created, holderPid: bystander.pid!, holderStartedAt: null, childPid: bystander.pid!, childStartedAt: null, childPgid: null,
    };
    writeRecord(root, unknown);
    const error = await rejection(stopSession(root, unknown, { graceMs: 100 }));
    assert.instance(error, PreconditionError);
    assert.match((error as Error).message, /cannot be checked/);
    assert.is(liveness(identify(bystander.pid!)), "running", "the process was not signalled");
    assert.is(readRecord(root, created.id)?.killRequestedAt, null);
  } finally {
    bystander.kill("SIGKILL");
    await closed;
  }
}));

test("stopSession never signals a group whose id now names another process: the kernel reuses it only once ours was empty", inSessionDir(async ({ root, work }) => {
  // A group of someone else's: a leader this test made, with a member of its own.
  const bystander = spawn("sh", ["-c", "sleep 30 & wait"], { stdio: "ignore", detached: true });
  await new Promise((resolve) => bystander.once("spawn", resolve));
  const pgid = bystander.pid!;
  try {
    await waitFor("the bystander's member", () => groupPids(pgid).length === 2);
    const created = await createSession(root, { command: "sleep", args: ["30"], cwd: work });
    const [boot, ticks] = identify(pgid).start_id!.split(":");
    // Our session's child once had this pid and led this group id; it started at another time.
    const ours: SessionRecord = {
      ...created, holderPid: exitedPid(), holderStartedAt: null, holderStartId: `${boot}:1`,
      childPid: pgid, childStartedAt: null, childStartId: `${boot}:${Number(ticks) - 1}`, childPgid: pgid,
    };
    writeRecord(root, ours);
    assert.is(sessionState(root, ours), "vanished");
    assert.is(await stopSession(root, ours, { graceMs: 100 }), "not-running");
    assert.is(groupPids(pgid).length, 2, "the bystander's group was not signalled");
  } finally {
    process.kill(-pgid, "SIGKILL");
  }
  await waitFor("the bystander's group to end", () => groupPids(pgid).length === 0);
}));

// --- a foreground session whose command leaves a job in its terminal's process group

/** A foreground session as a terminal tab runs it (see startInTerminalGroup), its group ended after the test. */
async function startForeground(root: string, work: string, script: string): Promise<{ record: SessionRecord; pgid: number }> {
  const started = await startInTerminalGroup(root, work, script);
  processes.groups.push(started.pgid);
  assert.equal([started.record.childPgid, started.record.sharedPgid], [null, started.pgid], "the child shares the group its holder leads");
  return started;
}

test("stopSession of a foreground session whose command left a job in its terminal's group says it was left running, not stopped", inSessionDir(async ({ root, work }) => {
  const { record, pgid } = await startForeground(root, work, `sleep 30 > "${join(work, "job.out")}" 2>&1 & exec sleep 30`);
  const job = await waitFor("the background job", () => groupPids(pgid).find((pid) => pid !== record.holderPid && pid !== record.childPid), 5_000);
  assert.is(await stopSession(root, record, { graceMs: 2_000 }), "left-running");
  const after = readRecord(root, record.id)!;
  assert.equal([after.ended, after.membersAtExit], ["killed", "remained"]);
  assert.is(liveness(childIdentity(record) as ProcessIdentity), "exited", "its own command was stopped");
  assert.ok(groupPids(pgid).includes(job), "the job in the group the holder did not make was not signalled (DESIGN rule 6)");
  assert.is(describeLeftRunning(after), `1 process it started still runs in process group ${pgid}, which robot-army did not make and so does not signal: pid ${job}`);
  assert.is(workerRuns(root, after), true, "its exit is on record, but what it started still works in its directory");
  process.kill(-pgid, "SIGKILL");
  await waitFor("the group to end", () => groupPids(pgid).length === 0);
  assert.is(workerRuns(root, after), false, "once the job is proven gone, nothing of it runs");
}));

test("an exit recorded while what the command started could not be read is unknown, never not running", inSessionDir(async ({ root, work }) => {
  const { record, pgid } = await startForeground(root, work, `sleep 30 > "${join(work, "job.out")}" 2>&1 & exec sleep 30`);
  await stopSession(root, record, { graceMs: 2_000 });
  process.kill(-pgid, "SIGKILL");
  await waitFor("the group to end", () => groupPids(pgid).length === 0);
  const after = readRecord(root, record.id)!;
  assert.is(after.membersAtExit, "remained");
  // As its holder writes it when the group cannot be read: the command's start was never read, so no member can be told.
  const unread: SessionRecord = { ...after, membersAtExit: "unknown", childStartId: null };
  assert.is(workerRuns(root, unread), "unknown");
  assert.is(describeLeftRunning(unread), "whether processes it started still run cannot be checked");
  assert.is(workerRuns(root, { ...unread, sharedPgid: null }), "unknown", "nor with no group on record");
  assert.is(workerRuns(root, { ...unread, membersAtExit: undefined }), false, "an exit that left nothing behind is evidence the command ended");
}));

test("stopSession recording the exit of a foreground session whose holder was killed says what its command left in the terminal's group", inSessionDir(async ({ root, work }) => {
  const { record, pgid } = await startForeground(root, work, `sleep 30 > "${join(work, "job.out")}" 2>&1 & exec sleep 30`);
  const job = await waitFor("the background job", () => groupPids(pgid).find((pid) => pid !== record.holderPid && pid !== record.childPid), 5_000);
  const holder = { ...holderIdentity(record), pid: record.holderPid! };
  process.kill(holder.pid, "SIGKILL");
  await waitFor("the holder to be gone", () => liveness(holder) === "exited");
  assert.is(await stopSession(root, readRecord(root, record.id)!, { graceMs: 500 }), "left-running");
  const after = readRecord(root, record.id)!;
  assert.equal([after.ended, after.exitSignal, after.membersAtExit], ["killed", "SIGTERM", "remained"], "the exit it recorded itself says what was left");
  assert.ok(groupPids(pgid).includes(job), "the job was not signalled");
  assert.is(describeStopLeft(after), `stopped its command, but 1 process it started still runs in process group ${pgid}, which robot-army did not make and so does not signal: pid ${job}`);
  assert.is(workerRuns(root, after), true);
  process.kill(-pgid, "SIGKILL");
  await waitFor("the group to end", () => groupPids(pgid).length === 0);
}));

test("a holder whose exit left members behind keeps its files, even --ephemeral", () => {
  const base = { tags: {}, permanent: false, ephemeral: true, ended: "killed" } as unknown as SessionRecord;
  assert.is(retained(base), false);
  assert.is(retained({ ...base, membersAtExit: "remained" }), true);
  assert.is(retained({ ...base, ended: "exited", membersAtExit: "unknown" }), true);
});

test("no test above left a process running", () => {
  assert.equal(leaked, []);
});

test.run();
