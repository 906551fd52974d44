import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isoSeconds } from "../clock.ts";
import { identify, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { atTime } from "../testing/items.ts";
import { checkHealth } from "./health.ts";
import { heartbeatPath, writeHeartbeat } from "./heartbeat.ts";
import { lockPath } from "./lock.ts";

const NOW = new Date("2026-01-15T10:00:00Z");
const MAX_AGE = 5 * 60_000;
const before = (ms: number) => isoSeconds(new Date(NOW.getTime() - ms));

/** A real process that runs until the test ends it, and its identity. */
async function withLiveProcess(fn: (who: ProcessIdentity) => void | Promise<void>): Promise<void> {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  try {
    const who = identify(child.pid!);
    assert.is(liveness(who), "running");
    await fn(who);
  } finally {
    await ended(child, () => child.kill("SIGKILL"));
  }
}

/** The identity of a real process recorded while it ran, which has since exited (and been reaped). */
async function exitedProcess(): Promise<ProcessIdentity> {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  const who = identify(child.pid!);
  await ended(child, () => child.kill("SIGTERM"));
  assert.is(liveness(who), "exited");
  return who;
}

function ended(child: ChildProcess, stop: () => void): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    stop();
  });
}

function writeLock(dir: string, who: ProcessIdentity, at: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(lockPath(dir), JSON.stringify({ ...who, at }) + "\n");
}

function beat(dir: string, pid: number, at: string): void {
  writeHeartbeat(dir, { pid, at, tick: 7, next_at: null, last_poll_at: null });
}

const check = (dir: string) => checkHealth(dir, MAX_AGE, { now: NOW });

test("an empty state dir, or none at all, is NEVER STARTED and says to run the daemon", () => withTempDir((dir) => {
  const health = check(join(dir, "state"));
  assert.is(health.verdict, "NEVER STARTED");
  assert.match(health.detail, '"robot-army run"');
  assert.equal([health.pid, health.heartbeat_at, health.age_s, health.max_age_s], [null, null, null, 300]);
}));

test("a live daemon whose own heartbeat is within max_age is ok, with its pid and the heartbeat's age", () => withTempDir(async (dir) => {
  await withLiveProcess((who) => {
    writeLock(dir, who, before(3_600_000));
    beat(dir, who.pid, before(60_000));
    const health = check(dir);
    assert.is(health.verdict, "ok");
    assert.equal([health.pid, health.heartbeat_at, health.age_s], [who.pid, before(60_000), 60]);
    assert.match(health.detail, `the daemon (pid ${who.pid}) runs, and its last tick (7) was 1m ago, within 5m`);
  });
}));

test("a heartbeat stamped from the future is UNREADABLE, never ok: from a dead daemon or a live one", () => withTempDir(async (dir) => {
  // Thirty days ahead, from a pid that is gone: read at face value it was "just now".
  const thirtyDays = new Date(NOW.getTime() + 30 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  beat(dir, (await exitedProcess()).pid, thirtyDays);
  const health = check(dir);
  assert.is(health.verdict, "UNREADABLE");
  assert.match(health.detail, `is stamped ${thirtyDays}, 30d ahead of this clock, so when the daemon last ticked cannot be told`);
  await withLiveProcess((who) => {
    writeLock(dir, who, before(3_600_000));
    beat(dir, who.pid, thirtyDays);
    assert.is(check(dir).verdict, "UNREADABLE");
    // A few seconds ahead is a write racing the read: still read.
    beat(dir, who.pid, new Date(NOW.getTime() + 5_000).toISOString().replace(/\.\d{3}Z$/, "Z"));
    assert.is(check(dir).verdict, "ok");
  });
}));

test("no lock and a fresh heartbeat (a run --once from a timer) is ok, and says so", () => withTempDir((dir) => {
  beat(dir, 4242, before(30_000));
  const health = check(dir);
  assert.is(health.verdict, "ok");
  assert.match(health.detail, 'no daemon holds the lock, and the last tick (pid 4242) was 30s ago, within 5m: a "run --once"');
}));

test("a live daemon that took the lock within max_age and has not beaten yet is STARTING, also over an older daemon's heartbeat", () => withTempDir(async (dir) => {
  await withLiveProcess((who) => {
    writeLock(dir, who, before(20_000));
    const none = check(dir);
    assert.is(none.verdict, "STARTING");
    assert.match(none.detail, `the daemon (pid ${who.pid}) took the lock 20s ago and has not ticked yet`);
    beat(dir, who.pid + 1, before(3_600_000));
    assert.is(check(dir).verdict, "STARTING");
    beat(dir, who.pid, before(3_600_000)); // its pid, but written before it took the lock: another daemon's
    assert.is(check(dir).verdict, "STARTING");
  });
}));

test("a live daemon whose heartbeat is older than max_age is HUNG, naming the age and what to run", () => withTempDir(async (dir) => {
  await withLiveProcess((who) => {
    writeLock(dir, who, before(7_200_000));
    beat(dir, who.pid, before(20 * 60_000));
    const health = check(dir);
    assert.is(health.verdict, "HUNG");
    assert.is(health.age_s, 1200);
    assert.match(health.detail, `the daemon (pid ${who.pid}) runs but the last heartbeat (pid ${who.pid}, tick 7, at ${before(1_200_000)}) is 20m old, older than 5m`);
    assert.match(health.detail, '"robot-army log"');
  });
}));

test("a live daemon whose ticks are further apart than max_age is not HUNG before its next tick is due, nor while that tick runs, and is once max_age past it", () => withTempDir(async (dir) => {
  await withLiveProcess((who) => {
    writeLock(dir, who, before(7_200_000));
    const last = before(20 * 60_000);
    writeHeartbeat(dir, { pid: who.pid, at: last, tick: 3, next_at: isoSeconds(new Date(NOW.getTime() + 40 * 60_000)), last_poll_at: null });
    const waiting = check(dir);
    assert.is(waiting.verdict, "ok");
    assert.match(waiting.detail, "its last tick (3) was 20m ago, and the next is due at 2026-01-15T10:40:00Z");
    // The tick it announced is running: its heartbeat comes at its end, so it is not hung within max_age of it.
    writeHeartbeat(dir, { pid: who.pid, at: last, tick: 3, next_at: before(60_000), last_poll_at: null });
    assert.is(check(dir).verdict, "ok");
    writeHeartbeat(dir, { pid: who.pid, at: last, tick: 3, next_at: before(6 * 60_000), last_poll_at: null });
    assert.is(check(dir).verdict, "HUNG");
  });
}));

test("a live daemon that never beat within max_age of taking the lock is HUNG", () => withTempDir(async (dir) => {
  await withLiveProcess((who) => {
    writeLock(dir, who, before(10 * 60_000));
    const health = check(dir);
    assert.is(health.verdict, "HUNG");
    assert.match(health.detail, "took the lock 10m ago and has not ticked since");
  });
}));

test("a daemon stopped on purpose (its heartbeat says so as it stopped) is STOPPED, not DIED and not ok, however recent its last tick", () => withTempDir((dir) => {
  writeHeartbeat(dir, { pid: 4242, at: before(10_000), tick: 7, next_at: null, last_poll_at: null, stopped: { at: before(5_000), reason: "SIGINT" } });
  assert.is(check(dir).verdict, "STOPPED");
  writeHeartbeat(dir, { pid: 4242, at: before(600_000), tick: 7, next_at: null, last_poll_at: null, stopped: { at: before(590_000), reason: "SIGTERM" } });
  const health = check(dir);
  assert.is(health.verdict, "STOPPED");
  assert.is(health.detail, `the daemon (pid 4242) was stopped (SIGTERM) at ${before(590_000)}, and no daemon runs since: start it again with "robot-army run"`);
  // Without the mark, the same heartbeat is a death.
  beat(dir, 4242, before(600_000));
  assert.is(check(dir).verdict, "DIED");
}));

test("a lock whose process has exited (by pid and start time) is DIED, whatever its heartbeat says", () => withTempDir(async (dir) => {
  const gone = await exitedProcess();
  writeLock(dir, gone, before(600_000));
  const never = check(dir);
  assert.is(never.verdict, "DIED");
  assert.match(never.detail, `the daemon (pid ${gone.pid}, lock ${lockPath(dir)} taken ${before(600_000)}) is gone; it never wrote a heartbeat`);
  beat(dir, gone.pid, before(10_000));
  assert.is(check(dir).verdict, "DIED");
}));

test("a lock naming a pid that now runs another program (another start time) is DIED, never ok", () => withTempDir(async (dir) => {
  await withLiveProcess((who) => {
    writeLock(dir, { pid: who.pid, started_at: "2020-01-01T00:00:00.000Z", start_id: "boot:1" }, before(60_000));
    beat(dir, who.pid, before(10_000));
    assert.is(check(dir).verdict, "DIED");
  });
}));

test("no lock and a heartbeat older than max_age is DIED", () => withTempDir((dir) => {
  beat(dir, 4242, before(3_600_000));
  const health = check(dir);
  assert.is(health.verdict, "DIED");
  assert.match(health.detail, "no daemon holds the lock and the last heartbeat (pid 4242, tick 7, at 2026-01-15T09:00:00Z) is 1h old, older than 5m");
}));

test("a lock or heartbeat that cannot be read, or a lock's process that cannot be checked, is UNREADABLE, never ok", () => withTempDir(async (dir) => {
  writeFileSync(lockPath(dir), "junk");
  beat(dir, 4242, before(1_000));
  assert.is(check(dir).verdict, "UNREADABLE");
  assert.match(check(dir).detail, `the daemon lock ${lockPath(dir)} cannot be read`);

  await withLiveProcess((who) => {
    writeLock(dir, who, before(60_000));
    writeFileSync(heartbeatPath(dir), "{ not json");
    const junk = check(dir);
    assert.is(junk.verdict, "UNREADABLE");
    assert.match(junk.detail, `the heartbeat ${heartbeatPath(dir)} cannot be read`);
    writeFileSync(heartbeatPath(dir), JSON.stringify({ pid: who.pid, at: "yesterday" }));
    assert.is(check(dir).verdict, "UNREADABLE");

    beat(dir, who.pid, before(1_000));
    writeLock(dir, { pid: who.pid, started_at: null }, before(60_000)); // no start time: cannot be told from a reused pid
    const unchecked = check(dir);
    assert.is(unchecked.verdict, "UNREADABLE");
    assert.match(unchecked.detail, `names pid ${who.pid}, which cannot be checked`);
  });
}));

test("the check's clock is robot-army's (RA_NOW)", () => withTempDir((dir) => {
  beat(dir, 4242, "2026-01-15T10:00:00Z");
  assert.is(atTime("2026-01-15T10:04:00Z", () => checkHealth(dir, MAX_AGE)).verdict, "ok");
  assert.is(atTime("2026-01-15T10:06:00Z", () => checkHealth(dir, MAX_AGE)).verdict, "DIED");
}));

test.run();
