/**
 * The `repos` table: which repositories the owner onboarded, the fingerprint they
 * approved, and (when a later read saw different settings) the fingerprint seen since.
 * Every change of a row writes its audit record in the same transaction.
 */
import { isoSeconds, now } from "../clock.ts";
import { openAnomalyFor, retractAnomaly } from "../store/anomalies.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { fingerprintChanges } from "./fingerprint.ts";
import type { Fingerprint, SettingChange } from "./fingerprint.ts";

/** A repository's onboarding state; a repository with no row is not onboarded. */
export type OnboardingState = "onboarded" | "needs_reapproval";

/** One row of the `repos` table. */
export interface RepoRecord {
  name: string;
  path: string;
  state: OnboardingState;
  /** What the owner approved. */
  fingerprint: Fingerprint;
  /** The differing fingerprint last seen, while the state is `needs_reapproval`. */
  seen: Fingerprint | null;
  /** The base branch's commit whose agent files the owner approved; null when approved before they were read. */
  agent_commit: string | null;
  onboarded_at: string;
  updated_at: string;
}

const COLUMNS = "name, path, state, fingerprint, seen, agent_commit, onboarded_at, updated_at";

/** The row of one repository, or undefined when it was never onboarded. */
export function getRepoRecord(store: Store, name: string): RepoRecord | undefined {
  const row = store.statement(`SELECT ${COLUMNS} FROM repos WHERE name = ?`).get(name);
  return row ? fromRow(row) : undefined;
}

/** Every onboarded repository, by name. */
export function listRepoRecords(store: Store): RepoRecord[] {
  return store.statement(`SELECT ${COLUMNS} FROM repos ORDER BY name`).all().map(fromRow);
}

/** What changed between the approved fingerprint and the one seen since (none while onboarded). */
export function pendingChanges(record: RepoRecord): SettingChange[] {
  return record.seen ? fingerprintChanges(record.fingerprint, record.seen) : [];
}

/**
 * Records the owner's approval of `fingerprint` (with `agentCommit`, the base branch's commit
 * its agent files were read from): a new row, or an approval again that replaces the old
 * fingerprint. Writes `repo.onboarded` or `repo.reapproved`, and retracts the
 * `agent_files_changed` anomaly the approval answers.
 */
export function recordApproval(store: Store, name: string, path: string, fingerprint: Fingerprint, agentCommit: string | null = null): RepoRecord {
  return store.transaction(() => {
    const at = isoSeconds(now());
    const before = getRepoRecord(store, name);
    if (!before) {
      store.statement(`INSERT INTO repos (${COLUMNS}) VALUES (?, ?, 'onboarded', ?, NULL, ?, ?, ?)`)
        .run(name, path, JSON.stringify(fingerprint), agentCommit, at, at);
      appendAudit(store, { kind: "repo.onboarded", repo: name, at, body: { path, agent_commit: agentCommit, fingerprint } });
    } else {
      store.statement("UPDATE repos SET path = ?, state = 'onboarded', fingerprint = ?, seen = NULL, agent_commit = ?, onboarded_at = ?, updated_at = ? WHERE name = ?")
        .run(path, JSON.stringify(fingerprint), agentCommit, at, at, name);
      const changes = fingerprintChanges(before.fingerprint, fingerprint);
      appendAudit(store, { kind: "repo.reapproved", repo: name, at, body: { path, was: before.state, changes, agent_commit: agentCommit, fingerprint } });
    }
    const raised = openAnomalyFor(store, "agent_files_changed", name);
    if (raised) retractAnomaly(store, raised.id);
    return getRepoRecord(store, name)!;
  });
}

/**
 * Records that GitHub now describes the repository differently from what was approved
 * (or that its agent files on the base branch differ, read at `commit`):
 * the state becomes `needs_reapproval` (written with `repo.needs_reapproval` naming the
 * changed settings). Seeing yet another fingerprint while waiting records it as well,
 * even the approved one come back: only the owner's `onboard --reapprove` ends the wait.
 * Seeing the same one again writes nothing. Returns the row as it now is.
 */
export function recordChangedSettings(store: Store, name: string, seen: Fingerprint, commit: string | null = null): RepoRecord {
  return store.transaction(() => {
    const before = getRepoRecord(store, name);
    if (!before) throw new TypeError(`Repository "${name}" is not onboarded: there is no approved fingerprint to differ from`);
    if (before.state === "onboarded" && fingerprintChanges(before.fingerprint, seen).length === 0) return before;
    if (before.seen && fingerprintChanges(before.seen, seen).length === 0) return before;
    const at = isoSeconds(now());
    store.statement("UPDATE repos SET state = 'needs_reapproval', seen = ?, updated_at = ? WHERE name = ?").run(JSON.stringify(seen), at, name);
    const changes = fingerprintChanges(before.fingerprint, seen);
    // `commit`: the base branch's commit the agent files were read from, when they were.
    appendAudit(store, { kind: "repo.needs_reapproval", repo: name, at, body: { was: before.state, changes, ...(commit ? { commit } : {}) } });
    return getRepoRecord(store, name)!;
  });
}

function fromRow(row: unknown): RepoRecord {
  const r = { ...(row as Record<string, unknown>) };
  return {
    ...r,
    fingerprint: JSON.parse(r.fingerprint as string),
    seen: r.seen === null ? null : JSON.parse(r.seen as string),
  } as RepoRecord;
}
