/**
 * One daemon per state dir: `<state dir>/daemon.lock` holds the pid and start time of the
 * daemon that owns it (DESIGN rule 6). A second daemon is refused, naming that pid. A lock
 * whose holder is proven gone is taken over and the takeover audited; one whose holder
 * cannot be checked is left alone (rule 1: unknown is never "dead").
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createFileExclusive } from "../atomic.ts";
import { nowIso } from "../clock.ts";
import { PreconditionError } from "../errors.ts";
import { identify, liveness, sameProcess } from "../processes.ts";
import { breakIfStale } from "../stale-lock.ts";
import type { ProcessIdentity } from "../processes.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";

/** What the lock file holds. */
export interface LockContent extends ProcessIdentity {
  /** When the lock was taken. */
  at: string;
}

/** A lock this process holds. */
export interface DaemonLock {
  path: string;
  holder: LockContent;
  /** Removes the lock file, only while it is still this process's. */
  release(): void;
}

/** The lock file of a state dir. */
export function lockPath(stateDir: string): string {
  return join(stateDir, "daemon.lock");
}

/**
 * Takes the state dir's daemon lock for this process, or throws PreconditionError (exit 3)
 * naming the pid that holds it. A stale lock (holder proven gone) is replaced, audited as
 * `daemon.lock_taken_over`.
 */
export function acquireDaemonLock(stateDir: string, store: Store, self: ProcessIdentity = identify(process.pid)): DaemonLock {
  const path = lockPath(stateDir);
  const holder: LockContent = { ...self, at: nowIso() };
  const text = JSON.stringify(holder) + "\n";
  // A stale lock is broken under the shared breaker, then the name is raced for like any
  // other daemon would; another breaker at work is waited for, briefly.
  let broken: LockContent | undefined;
  const deadline = Date.now() + 2_000;
  for (;;) {
    if (createFileExclusive(path, text, { private: true })) {
      if (broken) appendAudit(store, { kind: "daemon.lock_taken_over", body: { path, stale: { ...broken }, by: { ...self } } });
      return { path, holder, release: () => releaseLock(path, holder) };
    }
    const current = readLock(path);
    if (current === "gone") continue;
    if (current === "unreadable") {
      throw new PreconditionError(`Daemon lock "${path}" cannot be read, so whether its daemon still runs cannot be checked; remove it only once no daemon runs`);
    }
    const state = liveness(current);
    if (state === "running") {
      throw new PreconditionError(`Another daemon (pid ${current.pid}) holds "${path}" for this state dir; stop it first`);
    }
    if (state === "unknown") {
      throw new PreconditionError(`Daemon lock "${path}" is held by pid ${current.pid}, which cannot be checked; remove the lock only once that process is gone`);
    }
    if (breakIfStale(path, current) === "broken") broken = current;
    else if (Date.now() > deadline) throw new PreconditionError(`Daemon lock "${path}" is held by pid ${current.pid}, which is gone, but another process is breaking it; try again`);
    else sleepSync(20);
  }
}

/** Blocks this thread for `ms` (the lock is taken once, at start-up, before anything else runs). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The lock file's holder; "gone" when there is no file, "unreadable" when it holds no pid. */
export function readLock(path: string): LockContent | "gone" | "unreadable" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : "unreadable";
  }
  try {
    const parsed = JSON.parse(text) as LockContent;
    if (!Number.isInteger(parsed.pid)) return "unreadable";
    return {
      pid: parsed.pid,
      started_at: typeof parsed.started_at === "string" ? parsed.started_at : null,
      start_id: typeof parsed.start_id === "string" ? parsed.start_id : null,
      at: String(parsed.at ?? ""),
    };
  } catch {
    return "unreadable";
  }
}

function releaseLock(path: string, holder: LockContent): void {
  const current = readLock(path);
  if (typeof current === "object" && sameProcess(current, holder)) rmSync(path, { force: true });
}
