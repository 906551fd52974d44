/**
 * A per-session lock: a file created exclusively that names its holder by pid and start
 * time. A lock whose owner is proven gone (DESIGN rule 6) is broken; one whose owner
 * cannot be checked is waited for, never taken.
 */
import { readFileSync, rmSync } from "node:fs";
import { createFileExclusive } from "../atomic.ts";
import { RobotArmyError } from "../errors.ts";
import { identify, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";

const me: ProcessIdentity = identify(process.pid);

/** Runs `fn` holding the lock file `path`; waits up to `timeoutMs` for another holder. */
export async function withLock<T>(path: string, fn: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (!createFileExclusive(path, JSON.stringify(me))) {
    if (breakIfStale(path)) continue;
    if (Date.now() > deadline) throw new RobotArmyError(`Lock "${path}" is still held by another process after ${timeoutMs / 1000}s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { force: true });
  }
}

/**
 * Removes the lock when its owner is proven gone; true when it did (or the lock vanished).
 * Breaking is done holding `<path>.break`, and the owner is read again under it: two
 * waiters that both saw the same dead owner would otherwise both delete, the second one
 * deleting the lock the first had just taken. A `.break` left by a breaker that died is
 * itself broken only once its owner is proven gone. `seen` is the owner as first read.
 */
export function breakIfStale(path: string, seen: ReturnType<typeof owner> = owner(path)): boolean {
  if (seen === "vanished") return true;
  if (seen === "unreadable" || liveness(seen) !== "exited") return false;
  const breaker = `${path}.break`;
  if (!createFileExclusive(breaker, JSON.stringify(me))) {
    const other = owner(breaker);
    if (other !== "vanished" && other !== "unreadable" && liveness(other) === "exited") rmSync(breaker, { force: true });
    return false;
  }
  try {
    const now = owner(path);
    if (now === "vanished") return true;
    if (now === "unreadable" || now.pid !== seen.pid || now.started_at !== seen.started_at) return false;
    rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(breaker, { force: true });
  }
}

/** Who holds a lock file: "vanished" when it is gone, "unreadable" when half-written by a live creator. */
export function owner(path: string): ProcessIdentity | "vanished" | "unreadable" {
  try {
    const held = JSON.parse(readFileSync(path, "utf8")) as ProcessIdentity | null;
    return typeof held?.pid === "number" ? held : "unreadable";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "vanished" : "unreadable";
  }
}
