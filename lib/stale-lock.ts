/**
 * Breaking a lock file whose owner is proven gone (DESIGN rule 6), shared by the session
 * locks and the daemon lock. A lock file holds JSON naming its owner by pid and start time.
 */
import { linkSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createFileExclusive } from "./atomic.ts";
import { identify, liveness, sameProcess } from "./processes.ts";
import type { ProcessIdentity } from "./processes.ts";

const me: ProcessIdentity = identify(process.pid);

/**
 * Removes the lock when its owner is proven gone: "broken" when this call removed it,
 * "vanished" when it was gone already, false when it stands (or another process is breaking it).
 * Breaking is done holding `<path>.break`, and the owner is read again under it: two
 * waiters that both saw the same dead owner would otherwise both delete, the second one
 * deleting the lock the first had just taken. `seen` is the owner as first read.
 *
 * A `.break` left by a breaker that died is cleared by renaming it aside and checking that
 * what was moved is that dead breaker's; a live breaker's file moved by mistake in that
 * moment is put back. Only a breaker dying in the middle of a break, while two others
 * wait, leaves any window at all, and it is that narrow.
 */
export function breakIfStale(path: string, seen: ReturnType<typeof lockOwner> = lockOwner(path)): "broken" | "vanished" | false {
  if (seen === "vanished") return "vanished";
  if (seen === "unreadable" || liveness(seen) !== "exited") return false;
  const breaker = `${path}.break`;
  if (!createFileExclusive(breaker, JSON.stringify(me), { private: true })) {
    clearDeadBreaker(breaker);
    return false;
  }
  try {
    const now = lockOwner(path);
    if (now === "vanished") return "vanished";
    if (now === "unreadable" || !sameProcess(now, seen)) return false;
    rmSync(path, { force: true });
    return "broken";
  } finally {
    const still = lockOwner(breaker);
    if (still !== "vanished" && still !== "unreadable" && sameProcess(still, me)) rmSync(breaker, { force: true });
  }
}

/** Removes a `.break` whose owner is proven gone, without ever removing a live breaker's. */
function clearDeadBreaker(breaker: string): void {
  const other = lockOwner(breaker);
  if (other === "vanished" || other === "unreadable" || liveness(other) !== "exited") return;
  const aside = `${breaker}.${process.pid}.${Date.now()}`;
  try {
    renameSync(breaker, aside);
  } catch {
    return; // gone meanwhile: someone else cleared it
  }
  const moved = lockOwner(aside);
  if (moved !== "vanished" && moved !== "unreadable" && !sameProcess(moved, other)) {
    // A live breaker took the name between the read and the rename: give it back.
    try {
      linkSync(aside, breaker);
    } catch {
      // Another breaker holds the name by now; the moved one is done within moments anyway.
    }
  }
  rmSync(aside, { force: true });
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
