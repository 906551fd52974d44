import type { Store } from "../store/open.ts";

/** What `PRAGMA integrity_check` says is wrong with the store's file (nothing when it answers `ok`): the crash suite and the soak check it. */
export function integrityProblems(store: Store): string[] {
  const rows = store.db.prepare("PRAGMA integrity_check").all().map((row) => Object.values({ ...row })[0]);
  return rows.length === 1 && rows[0] === "ok" ? [] : [`PRAGMA integrity_check: ${rows.join("; ")}`];
}
