/**
 * Breaking a lock file whose owner is proven gone (DESIGN rule 6), shared by the session
 * locks and the daemon lock. A lock file holds JSON naming its owner by pid and start time.
 */
import { readFileSync, rmSync } from "node:fs";
import { createFileExclusive } from "./atomic.ts";
import { identify, liveness } from "./processes.ts";
import type { ProcessIdentity } from "./processes.ts";

const me: ProcessIdentity = identify(process.pid);

/**
 * Removes the lock when its owner is proven gone: "broken" when this call removed it,
 * "vanished" when it was gone already, false when it stands (or another process is breaking it).
 * Breaking is done holding `<path>.break`, and the owner is read again under it: two
 * waiters that both saw the same dead owner would otherwise both delete, the second one
 * deleting the lock the first had just taken. A `.break` left by a breaker that died is
 * itself broken only once its owner is proven gone. `seen` is the owner as first read.
 */
export function breakIfStale(path: string, seen: ReturnType<typeof lockOwner> = lockOwner(path)): "broken" | "vanished" | false {
  if (seen === "vanished") return "vanished";
  if (seen === "unreadable" || liveness(seen) !== "exited") return false;
  const breaker = `${path}.break`;
  if (!createFileExclusive(breaker, JSON.stringify(me))) {
    const other = lockOwner(breaker);
    if (other !== "vanished" && other !== "unreadable" && liveness(other) === "exited") rmSync(breaker, { force: true });
    return false;
  }
  try {
    const now = lockOwner(path);
    if (now === "vanished") return "vanished";
    if (now === "unreadable" || now.pid !== seen.pid || now.started_at !== seen.started_at) return false;
    rmSync(path, { force: true });
    return "broken";
  } finally {
    rmSync(breaker, { force: true });
  }
}

/** Who holds a lock file: "vanished" when it is gone, "unreadable" when half-written by a live creator. */
export function lockOwner(path: string): ProcessIdentity | "vanished" | "unreadable" {
  try {
    const held = JSON.parse(readFileSync(path, "utf8")) as ProcessIdentity | null;
    return typeof held?.pid === "number" ? held : "unreadable";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "vanished" : "unreadable";
  }
}
