import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { identify } from "../processes.ts";
import { queryAudit } from "../store/audit.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import { acquireDaemonLock, lockPath, readLock } from "./lock.ts";

function inStateDir(fn: (dir: string, store: Store) => Promise<void> | void) {
  return () => withTempDir(async (dir) => {
    const store = await openStore(dir);
    try {
      await fn(dir, store);
    } finally {
      store.close();
    }
  });
}

function refusal(fn: () => unknown): PreconditionError {
  try {
    fn();
  } catch (error) {
    assert.instance(error, PreconditionError);
    return error as PreconditionError;
  }
  throw new Error("Expected the lock to be refused");
}

/** The pid of a process that has exited (a child of ours, reaped), with a start time it no longer has. */
function exitedPid(): number {
  const child = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

test("the lock holds this process's pid and start time, and release removes it", inStateDir((dir, store) => {
  const lock = acquireDaemonLock(dir, store);
  const held = readLock(lockPath(dir));
  assert.ok(typeof held === "object");
  assert.equal([held.pid, held.started_at], [process.pid, identify(process.pid).started_at]);
  lock.release();
  assert.not.ok(existsSync(lockPath(dir)));
}));

test("a second daemon is refused, naming the pid that holds the lock", inStateDir((dir, store) => {
  const lock = acquireDaemonLock(dir, store);
  const error = refusal(() => acquireDaemonLock(dir, store, { pid: 999_999, started_at: null }));
  assert.match(error.message, `Another daemon (pid ${process.pid}) holds`);
  assert.is(error.exitCode, 3);
  lock.release();
}));

test("a lock whose holder is proven gone is taken over, and the takeover audited", inStateDir((dir, store) => {
  const stale = exitedPid();
  writeFileSync(lockPath(dir), JSON.stringify({ pid: stale, started_at: "2020-01-01T00:00:00.000Z", at: "2020-01-01T00:00:00Z" }));
  const lock = acquireDaemonLock(dir, store);
  assert.is(lock.holder.pid, process.pid);
  const [record] = queryAudit(store, { kind: "daemon.lock_taken_over" });
  assert.is((record.body.stale as { pid: number }).pid, stale);
  lock.release();
}));

test("a stale lock is taken over even when a breaker died holding .break, and the takeover is audited once", inStateDir((dir, store) => {
  const dead = { pid: exitedPid(), started_at: "2020-01-01T00:00:00.000Z" };
  writeFileSync(lockPath(dir), JSON.stringify({ ...dead, at: "2020-01-01T00:00:00Z" }));
  writeFileSync(`${lockPath(dir)}.break`, JSON.stringify({ pid: exitedPid(), started_at: "2020-01-01T00:00:00.000Z" }));
  const lock = acquireDaemonLock(dir, store);
  assert.is(readLock(lockPath(dir)) !== "gone" && (readLock(lockPath(dir)) as { pid: number }).pid, process.pid);
  assert.not.ok(existsSync(`${lockPath(dir)}.break`));
  assert.is(queryAudit(store, { kind: "daemon.lock_taken_over" }).length, 1);
  lock.release();
  assert.not.ok(existsSync(lockPath(dir)));
}));

test("a lock whose holder cannot be checked is not taken over", inStateDir((dir, store) => {
  // pid 1 runs, but with no start time recorded it cannot be proven to be the same process.
  writeFileSync(lockPath(dir), JSON.stringify({ pid: process.pid, started_at: null, at: "2020-01-01T00:00:00Z" }));
  assert.match(refusal(() => acquireDaemonLock(dir, store, { pid: 999_999, started_at: null })).message, "cannot be checked");
  writeFileSync(lockPath(dir), "not json");
  assert.match(refusal(() => acquireDaemonLock(dir, store)).message, "cannot be read");
  assert.ok(existsSync(lockPath(dir)), "the lock is left where it was");
  assert.is(queryAudit(store, { kind: "daemon.lock_taken_over" }).length, 0);
}));

test("release leaves a lock another daemon has taken since", inStateDir((dir, store) => {
  const lock = acquireDaemonLock(dir, store);
  writeFileSync(lockPath(dir), JSON.stringify({ pid: 4242, started_at: "x", at: "y" }));
  lock.release();
  assert.ok(existsSync(join(dir, "daemon.lock")));
}));

test.run();
