/**
 * The item's archive: robot-army's own episode records (proven by lib/cleanup/own-records.ts)
 * kept under the state dir, `<state dir>/archive/item-<id>/<record>.md` (files 0600, folders
 * 0700), so that removing the worktree they were left in loses none of them.
 *
 * One audited effect, `records.archive`, in this order: every record copied, synced and read
 * back by its hash; only then each original, found unchanged, taken out of the worktree. A
 * copy is never overwritten: one already there with the same hash is the copy (an archive cut
 * short and done again), one with other bytes refuses. A crash anywhere leaves every record in
 * the archive, in the worktree, or both: `archiveEvidence` reads which.
 */
import { closeSync, existsSync, fsyncSync, linkSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomUUID } from "node:crypto";
import { sha256Hex } from "../sha256.ts";
import type { Finding } from "../store/findings.ts";
import { makePrivateDir } from "../state-dir.ts";
import { auditEffect, queryAudit } from "../store/audit.ts";
import type { AuditRecord } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { fileSha256, readRegularFile } from "./own-records.ts";
import type { OwnRecord } from "./own-records.ts";

/** One record in the archive: where it was in the worktree (below its root), its hash, and its copy. */
export interface ArchivedRecord {
  file: string;
  sha256: string;
  archive: string;
}

/** The folder an item's records are archived in. */
export function archiveDir(stateDir: string, item: number): string {
  return join(stateDir, "archive", `item-${item}`);
}

/** Copies the records to the item's archive, verifies each copy, then takes the originals out of `worktree`; audited as `records.archive`. */
export async function archiveRecords(
  store: Store,
  about: { repo: string; item: number },
  spec: { stateDir: string; worktree: string; records: readonly OwnRecord[] },
): Promise<ArchivedRecord[]> {
  const dir = archiveDir(spec.stateDir, about.item);
  const planned: ArchivedRecord[] = spec.records.map((r) => ({ file: r.file, sha256: r.sha256, archive: join(dir, basename(r.file)) }));
  return await auditEffect(
    store,
    { kind: "records.archive", ...about, body: { path: spec.worktree, records: planned } },
    () => {
      makePrivateDir(join(spec.stateDir, "archive"));
      makePrivateDir(dir);
      for (const record of planned) copyVerified(join(spec.worktree, record.file), record);
      // Only once every copy is proven whole is any original taken out.
      for (const record of planned) {
        const original = join(spec.worktree, record.file);
        if (fileSha256(original) !== record.sha256) throw new Error(`"${record.file}" changed while it was archived; it stays in the worktree`);
        unlinkSync(original);
      }
      return planned;
    },
    (archived) => ({ archived: archived.length, dir }),
  );
}

/** Writes the original's bytes to the record's archive path (never over other bytes) and reads the copy back by its hash. */
function copyVerified(original: string, record: ArchivedRecord): void {
  const bytes = readRegularFile(original);
  if (sha256Hex(bytes) !== record.sha256) throw new Error(`"${record.file}" is no longer what was proven robot-army's record; nothing of it was archived`);
  if (existsSync(record.archive)) {
    if (fileSha256(record.archive) === record.sha256) return;
    throw new Error(`"${record.archive}" is already in the archive with other content and is never overwritten`);
  }
  const temp = join(dirname(record.archive), `.${basename(record.archive)}.${randomUUID().slice(0, 8)}.tmp`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    // A link refuses a name already taken, which a rename would replace.
    linkSync(temp, record.archive);
  } finally {
    rmSync(temp, { force: true });
  }
  syncFolder(dirname(record.archive));
  if (fileSha256(record.archive) !== record.sha256) throw new Error(`the copy "${record.archive}" does not read back as "${record.file}"`);
}

function syncFolder(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * An archive cut short: every record's copy whole in the archive (archived), or every record
 * not archived still in the worktree as proven (not archived, cleanup can do it again);
 * a record in neither place is the owner's to look for.
 */
export function archiveEvidence(intent: AuditRecord): Finding {
  const { path, records } = intent.body;
  if (typeof path !== "string" || !Array.isArray(records)) return { settled: false, check: "its intent names no worktree and records" };
  let archived = 0;
  for (const record of records as ArchivedRecord[]) {
    if (sameBytes(record.archive, record.sha256)) {
      archived++;
      continue;
    }
    if (!sameBytes(join(path, record.file), record.sha256)) {
      return { settled: false, check: `the record "${record.file}" is neither whole in the archive at "${record.archive}" nor in the worktree "${path}": look for it` };
    }
  }
  const facts = { path, archived, records: records.length };
  if (archived === records.length) return { settled: true, ok: true, found: "archived", facts };
  return { settled: true, ok: false, found: archived === 0 ? "not archived" : `partly archived (${archived} of ${records.length}; the rest are still in the worktree)`, facts };
}

/** The records archived for an item, oldest first, each with whether its copy is still on disk. */
export function archivedRecords(store: Store, item: number): Array<ArchivedRecord & { at: string; kept: boolean }> {
  const audit = queryAudit(store, { kind: "records.archive", item });
  const done = new Set(audit.filter((r) => r.phase === "outcome" && r.body.ok === true).map((r) => r.actionId));
  const seen = new Map<string, ArchivedRecord & { at: string; kept: boolean }>();
  for (const intent of audit.filter((r) => r.phase === "intent" && done.has(r.actionId))) {
    for (const record of (intent.body.records ?? []) as ArchivedRecord[]) {
      if (!seen.has(record.archive)) seen.set(record.archive, { ...record, at: intent.at, kept: existsSync(record.archive) });
    }
  }
  return [...seen.values()];
}

function sameBytes(file: string, sha256: string): boolean {
  try {
    return fileSha256(file) === sha256;
  } catch {
    return false;
  }
}
