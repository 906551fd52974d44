/**
 * Stopping a session: SIGTERM to its child (to the process group its holder made, for a
 * detached session), SIGKILL after a grace period. The kill is marked in the record
 * first, so the holder records the exit as `killed`. Signals go only to a child proven to
 * be the recorded one (pid plus start time), never to pid 0 or 1.
 */
import { isoSeconds, now } from "../clock.ts";
import { PreconditionError } from "../errors.ts";
import { groupLiveness, liveness } from "../processes.ts";
import { update } from "./holder.ts";
import { withLock } from "./lock.ts";
import { appendSessionEvent, holderIdentity, readRecord, sessionFiles } from "./records.ts";
import type { SessionRecord } from "./records.ts";
import { childRunning, commandRuns, leftRunning, sessionState } from "./state.ts";

/**
 * What stopping found and did: `stopped` once the exit is recorded and nothing the command
 * started is left running; `left-running` when the exit is recorded but processes it
 * started still run (or cannot be checked) in a process group its holder did not make,
 * which nothing signals (`describeLeftRunning` says which); `not-running` when it had ended.
 */
export type StopResult = "stopped" | "left-running" | "not-running";

/** Stops a running session and waits until its exit is recorded. */
export async function stopSession(root: string, seen: SessionRecord, options: { graceMs?: number } = {}): Promise<StopResult> {
  const state = sessionState(root, seen);
  if (state === "exited") return "not-running";
  if (state === "starting") throw new PreconditionError(`Session "${seen.name}" is still starting; try again in a moment`);
  if (state === "unknown") throw new PreconditionError(`Session "${seen.name}": its holder pid ${seen.holderPid} cannot be checked, so it is not signalled`);
  const record = await update(root, seen.id, (r) => ({ ...r, killRequestedAt: r.killRequestedAt ?? isoSeconds(now()) }));
  appendSessionEvent(root, record.id, "kill", { generation: record.generation });
  const graceMs = options.graceMs ?? 5_000;
  let sent: NodeJS.Signals | null = null;
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    // A child that exited leaving its group running is stopped through that group: its holder waits on it.
    // Read again: the child's exit noted since this stop began is in the record now, not in the one it was given.
    if (childRunning(record) || leftInOwnGroup(readRecord(root, record.id) ?? record)) {
      signalChild(record, signal);
      sent = signal;
    }
    if (await exitRecorded(root, record, signal === "SIGTERM" ? graceMs : 5_000)) {
      await killLeftInGroup(record, graceMs);
      return leftAtExit(root, record) ? "left-running" : "stopped";
    }
  }
  // The holder is gone (vanished) or stuck: with the child proven ended, record the exit here,
  // claiming only the signal this process sent.
  if (childRunning(record) === false) {
    await killLeftInGroup(record, graceMs);
    // What it started in a group its holder did not make runs on (or cannot be read): never "stopped".
    const runs = commandRuns(record);
    const membersAtExit = runs === true ? "remained" : runs === undefined ? "unknown" : undefined;
    if (sent === null) return membersAtExit ? "left-running" : "not-running";
    await update(root, record.id, (r) => r.exitedAt ? r : { ...r, exitedAt: isoSeconds(now()), ended: "killed", exitSignal: sent, ...(membersAtExit ? { membersAtExit } : {}) });
    appendSessionEvent(root, record.id, "exit", { ended: "killed", signal: sent, recordedBy: "session kill", generation: record.generation, ...(membersAtExit ? { members: membersAtExit } : {}) });
    return membersAtExit ? "left-running" : "stopped";
  }
  throw new PreconditionError(`Session "${record.name}" did not stop after SIGKILL; its child pid ${record.childPid} may be stuck in the kernel`);
}

/**
 * Whether the exit its holder recorded left processes the command started running, or
 * unread, and they are not proven gone since: the stop did not end everything it started.
 */
function leftAtExit(root: string, record: SessionRecord): boolean {
  const current = readRecord(root, record.id);
  if (!current || current.generation !== record.generation || !current.membersAtExit) return false;
  return commandRuns(current) !== false;
}

/**
 * What a stop left running, in one clause for the owner: which processes the command
 * started still run (by pid), or that whether any do cannot be checked.
 * @example `stopped its command, but ${describeLeftRunning(record)}`
 */
export function describeLeftRunning(record: SessionRecord): string {
  const left = leftRunning(record);
  if (left === "unknown") return "whether processes it started still run cannot be checked";
  if (left.length === 0) return "what it started ran on after it and has ended since";
  const count = left.length === 1 ? "1 process it started still runs" : `${left.length} processes it started still run`;
  const where = record.childPgid !== null && record.childPgid === record.childPid
    ? `in its process group ${record.childPgid}`
    : `in process group ${record.sharedPgid}, which robot-army did not make and so does not signal`;
  return `${count} ${where}: pid ${left.join(", pid ")}`;
}

/**
 * What a stop that left processes running did, for the owner: "stopped its command" (or,
 * when the command had already ended, "found its command ended") and what it left running.
 * @example `Session "fg": ${describeStopLeft(record)}`
 */
export function describeStopLeft(record: SessionRecord): string {
  return `${record.exitedAt ? "stopped its command" : "found its command ended"}, but ${describeLeftRunning(record)}`;
}

/**
 * What the child started in the group its holder made may outlive it (a background job
 * that ignores TERM): after the grace period, SIGKILL to that group ends it too.
 */
async function killLeftInGroup(record: SessionRecord, graceMs: number): Promise<void> {
  const pgid = record.childPgid;
  if (pgid === null || pgid !== record.childPid || pgid <= 1) return;
  // Still the group the holder made: a member started since the child, its id not taken by another leader.
  const ours = () => groupLiveness({ pgid, leader_start_id: record.childStartId ?? null }, record.childStartId) === "running";
  const deadline = Date.now() + graceMs;
  while (ours() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  if (!ours()) return;
  try {
    process.kill(-pgid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
  // A SIGKILLed process is gone a moment after the signal, not at once: what follows reads the group again.
  const killed = Date.now() + 2_000;
  while (ours() && Date.now() < killed) await new Promise((r) => setTimeout(r, 10));
}

/** Whether the holder waits on what the child left running in the group the holder made for it. */
function leftInOwnGroup(record: SessionRecord): boolean {
  const pgid = record.childPgid;
  if (!record.childExitedAt || pgid === null || pgid !== record.childPid || pgid <= 1) return false;
  return groupLiveness({ pgid, leader_start_id: record.childStartId ?? null }, record.childStartId) === "running";
}

function signalChild(record: SessionRecord, signal: NodeJS.Signals): void {
  const pid = record.childPid;
  if (pid === null || pid <= 1) return;
  // A group is signalled only when the holder made it, and only while its leader is the recorded child.
  const target = record.childPgid !== null && record.childPgid === pid ? -pid : pid;
  try {
    process.kill(target, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/**
 * Waits until the exit is recorded, the record is gone, or the holder and child are both
 * gone. The holder records the exit and reaps its files under the session's lock, so once
 * the exit shows, the lock is taken once: what the holder does with the files is done, and
 * whoever reads the record next sees whether they were kept.
 */
async function exitRecorded(root: string, record: SessionRecord, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const current = readRecord(root, record.id);
    if (!current || current.generation !== record.generation) return true;
    if (current.exitedAt) {
      await withLock(sessionFiles(root, record.id).lock, () => undefined);
      return true;
    }
    const holderGone = liveness({ ...holderIdentity(current), pid: current.holderPid ?? 0 }) === "exited";
    if (holderGone && childRunning(current) === false) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}
