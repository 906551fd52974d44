/**
 * Whether two paths name one place: equal once resolved, symbolic links followed where the
 * path exists. The one way robot-army compares a session's folder with a worktree, or a store
 * tag or window marker with this store's file.
 * @example samePath("/home/o/state/robot-army.db", "/home/o/link-to-state/robot-army.db") // true
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";

export function samePath(a: string, b: string): boolean {
  if (a === b) return true;
  const real = (p: string) => {
    try {
      return existsSync(p) ? realpathSync(p) : resolve(p);
    } catch {
      return resolve(p);
    }
  };
  return real(a) === real(b);
}
