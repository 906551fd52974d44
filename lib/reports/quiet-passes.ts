/**
 * The daemon writes one `reconcile.pass` record per tick, every few seconds, whether or not
 * the pass changed anything: left as they are they bury everything else in `robot-army log`
 * and the dashboard's `/log`. A pass that changed nothing (no step failed, and every count of
 * a change is zero: only reads, such as a pull request list answered 304, and things left as
 * they were) is quiet; two or more quiet passes in a row read as one entry. A count added to
 * the pass later is taken for a change until it is named here as a read, so nothing that did
 * something is ever folded away. `--json` and `/api/log` keep every record.
 */
import type { AuditRecord } from "../store/audit.ts";

/** The counts of a pass that are reads or things left as they were, not changes. */
const READS = new Set([
  "tick", "pulls.repos", "pulls.requests", "pulls.not_modified", "pulls.slowed", "settled.unknown", "unfinished.waiting",
  "retire.left", "tabs.unknown", "cleanup.skipped", "dispatch.waiting", "spool.kept",
]);

/** Whether the record is a pass that changed nothing. */
export function quietPass(record: AuditRecord): boolean {
  if (record.kind !== "reconcile.pass") return false;
  const failed = record.body.failed;
  if (!Array.isArray(failed) || failed.length > 0) return false;
  return !changed(record.body, "");
}

function changed(value: unknown, path: string): boolean {
  if (typeof value === "number") return value !== 0 && !READS.has(path);
  if (Array.isArray(value)) return path !== "failed" && value.length > 0;
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).some(([key, inner]) => changed(inner, path ? `${path}.${key}` : key));
  }
  return false;
}

/** A record as it is, or a run of quiet passes read as one. */
export type LogEntry = { record: AuditRecord } | { quiet: AuditRecord[] };

/** The records in their order, each run of two or more quiet passes in a row as one entry. */
export function foldQuietPasses(records: readonly AuditRecord[]): LogEntry[] {
  const entries: LogEntry[] = [];
  let run: AuditRecord[] = [];
  const flush = () => {
    if (run.length > 1) entries.push({ quiet: run });
    else if (run.length === 1) entries.push({ record: run[0] });
    run = [];
  };
  for (const record of records) {
    if (quietPass(record)) {
      run.push(record);
      continue;
    }
    flush();
    entries.push({ record });
  }
  flush();
  return entries;
}

/**
 * `12 passes that changed nothing`: what a folded run says (its times beside it). Not by tick
 * numbers: each daemon counts its ticks from 1, so a run across a restart has no span of them.
 */
export function describeQuiet(run: readonly AuditRecord[]): string {
  return `${run.length} passes that changed nothing`;
}
