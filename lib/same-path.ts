/**
 * Whether two paths name one place: equal once resolved, symbolic links followed where the
 * path exists. The one way robot-army compares a session's folder with a worktree, or a store
 * tag or window marker with this store's file.
 * @example samePath("/home/o/state/robot-army.db", "/home/o/link-to-state/robot-army.db") // true
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";

export function samePath(a: string, b: string): boolean {
  if (a === b) return true;
  return placeOf(a) === placeOf(b);
}

/**
 * The place a path names, as `samePath` compares them: its real path (symbolic links
 * followed) when it exists, else the path resolved. Asked once per path by code that compares
 * many paths with many (the worktree root's scan), instead of once per comparison.
 * @example placeOf("/home/o/link-to-state/worktrees") // "/home/o/state/worktrees"
 */
export function placeOf(path: string): string {
  try {
    // The system's realpath(3): one call, where Node's own walks the path a folder at a time.
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}
