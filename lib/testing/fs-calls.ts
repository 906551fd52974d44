/**
 * The paths code hands one node:fs function while it runs, for a test that counts how often a
 * file is read or a path resolved. Node's named exports of node:fs follow the module object once
 * synced (`syncBuiltinESMExports`); where a runtime's do not, nothing can be counted and
 * `fsCallsCountable()` says so, for the test to skip. Test support only.
 *
 * @example
 * const reads = fsCalls("readFileSync", () => liveness(me))!.filter((path) => path === `/proc/${me.pid}/stat`);
 */
import { createRequire, syncBuiltinESMExports } from "node:module";
import { realpathSync } from "node:fs";

type Counted = "readFileSync" | "realpathSync";

/** The first argument of every call of `fs[name]` (or a variant of it, such as `realpathSync.native`) while `fn` runs, as a string; undefined where calls cannot be seen. */
export function fsCalls(name: Counted, fn: () => void): string[] | undefined {
  // node:fs's own object, whose functions its ES exports are synced from.
  const fs = createRequire(import.meta.url)("node:fs") as Record<Counted, (...args: unknown[]) => unknown>;
  const original = fs[name];
  const calls: string[] = [];
  const counted = (fn: (...args: unknown[]) => unknown) => (path: unknown, ...rest: unknown[]) => {
    calls.push(String(path));
    return fn(path, ...rest);
  };
  // Its variants too (realpathSync.native).
  const variants = Object.entries(original).map(([key, value]) => [key, typeof value === "function" ? counted(value as (...args: unknown[]) => unknown) : value]);
  fs[name] = Object.assign(counted(original), Object.fromEntries(variants));
  syncBuiltinESMExports();
  try {
    fn();
    return calls;
  } finally {
    fs[name] = original;
    syncBuiltinESMExports();
  }
}

/** Whether `fsCalls` sees the calls made through an ES import of node:fs on this runtime. */
export function fsCallsCountable(): boolean {
  return (fsCalls("realpathSync", () => void realpathSync(".")) ?? []).length > 0;
}
