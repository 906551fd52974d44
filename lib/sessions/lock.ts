/**
 * A per-session lock: a file created exclusively that names its holder by pid and start
 * time. A lock whose owner is proven gone (DESIGN rule 6) is broken; one whose owner
 * cannot be checked is waited for, never taken.
 */
import { rmSync } from "node:fs";
import { createFileExclusive } from "../atomic.ts";
import { RobotArmyError } from "../errors.ts";
import { identify } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { breakIfStale } from "../stale-lock.ts";

const me: ProcessIdentity = identify(process.pid);

/** Runs `fn` holding the lock file `path`; waits up to `timeoutMs` for another holder. */
export async function withLock<T>(path: string, fn: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (!createFileExclusive(path, JSON.stringify(me), { private: true })) {
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
