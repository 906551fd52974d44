/**
 * Anomalies: conditions the owner should see, such as an effect a crash cut short that no
 * evidence settles (`effect_unfinished`), a spool file set aside as damaged
 * (`spool_damaged`), a live worker under a done item that is not kept
 * (`orphan_session`), or disk robot-army made that nothing accounts for (`orphan_worktree`,
 * `prunable_worktree`). The owner acknowledges one; the pass resolves one whose condition
 * ended: `retracted` when it no longer holds (the item was kept, the worker retired),
 * `gone` when the worker died. Open means neither acknowledged nor resolved.
 *
 * One is raised once per kind and action id among the unresolved ones, however many passes
 * find it; after a resolution the same condition is raised anew. Raising, acknowledging,
 * retracting and resolving are audited facts (`anomaly.raised`, `anomaly.acknowledged`,
 * `anomaly.retracted`, `anomaly.resolved`), each in the same transaction as the row it writes.
 *
 * @example
 * raiseAnomaly(store, { kind: "orphan_session", actionId: session.id, repo: "demo/widgets", item: 1, detail: "..." });
 * listAnomalies(store, { open: true }); // what `status` and `robot-army anomalies` show
 * const orphan = openAnomalyFor(store, "orphan_session", session.id);
 * if (orphan) retractAnomaly(store, orphan.id); // the worker was retired
 */
import { isoSeconds, now } from "../clock.ts";
import { PreconditionError } from "../errors.ts";
import { redact } from "../redact.ts";
import { appendAudit } from "./audit.ts";
import type { Store } from "./open.ts";

/**
 * The kinds of anomaly raised today; `orphan_worktree` (a directory in the worktree root no
 * item claims) and `prunable_worktree` (a finished item's worktree deleted by hand) are
 * about disk, each with its path as action id (lib/cleanup/disk-anomalies.ts);
 * `agent_files_changed` (a repository's agent files on its base branch differ from what the
 * owner approved, so nothing is dispatched to it) has the repository as action id, and names
 * the files (lib/repos/onboard.ts); `worker_silent` (a worker whose agent has not reported
 * starting in time) has the session's id as action id (lib/work-items/silent-workers.ts);
 * `config_refused` (a changed config.toml the running daemon did not apply) has the file's
 * path as action id (lib/daemon/config-reload.ts); `claim_lost` (a claim on GitHub this host
 * held, moved or deleted by someone else) has the claim's reference and commit, and
 * `host_name_shared` (this host's heartbeat advanced by another writer) the repository and
 * host, as action id (lib/daemon/host-heartbeats.ts); `dependency_cycle` (ready items whose
 * issues block each other, not waited on) the issues of the cycle (lib/intake/dependencies.ts).
 */
export type AnomalyKind =
  | "effect_unfinished" | "spool_damaged" | "orphan_session" | "orphan_worktree" | "prunable_worktree" | "agent_files_changed" | "worker_silent"
  | "config_refused" | "claim_lost" | "host_name_shared" | "dependency_cycle";

/** How the pass resolved an anomaly: its condition no longer holds, or its worker died. */
export type Resolution = "retracted" | "gone";

/** One anomaly, as stored. */
export interface Anomaly {
  id: number;
  kind: string;
  action_id: string | null;
  repo: string | null;
  item: number | null;
  detail: string;
  raised_at: string;
  acknowledged_at: string | null;
  resolved_at: string | null;
  resolution: Resolution | null;
}

/** What raises an anomaly: its kind, what it is about, and what the owner is told. */
export interface NewAnomaly {
  kind: AnomalyKind;
  /** What it is about (the audited effect; for `orphan_session`, the session id); one unresolved anomaly per kind and action id. */
  actionId?: string;
  repo?: string;
  /** The work item's id. */
  item?: number;
  /** One line for the owner: what was found and what to check. */
  detail: string;
  /** The files it is about (repository paths), which its notification names. */
  files?: string[];
}

const COLUMNS = "id, kind, action_id, repo, item, detail, raised_at, acknowledged_at, resolved_at, resolution";

/**
 * Raises an anomaly, once per kind and action id among the unresolved: when one is on
 * record and not resolved (open or acknowledged) it is returned as it is, with `raised`
 * false, and nothing is written. One resolved does not stop the condition being raised again.
 */
export function raiseAnomaly(store: Store, anomaly: NewAnomaly): { anomaly: Anomaly; raised: boolean } {
  return store.transaction(() => {
    if (anomaly.actionId !== undefined) {
      const known = store.statement(`SELECT ${COLUMNS} FROM anomalies WHERE kind = ? AND action_id = ? AND resolved_at IS NULL`).get(anomaly.kind, anomaly.actionId);
      if (known) return { anomaly: fromRow(known), raised: false };
    }
    const row = store.statement(`INSERT INTO anomalies (kind, action_id, repo, item, detail, raised_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`)
      // The detail carries outside text (a git error, a file's problem): a secret in it is never stored.
      .get(anomaly.kind, anomaly.actionId ?? null, anomaly.repo ?? null, anomaly.item ?? null, redact(anomaly.detail), isoSeconds(now()));
    const raised = fromRow(row);
    appendAudit(store, {
      kind: "anomaly.raised", repo: anomaly.repo, item: anomaly.item,
      body: { anomaly: raised.id, kind: anomaly.kind, action_id: anomaly.actionId ?? null, detail: anomaly.detail, ...(anomaly.files ? { files: anomaly.files } : {}) },
    });
    return { anomaly: raised, raised: true };
  });
}

/** Which anomalies `listAnomalies` returns; each option narrows the list, and none lists them all. */
export interface AnomalyFilter {
  /** True: only open ones (neither acknowledged nor resolved); false: only acknowledged or resolved ones. */
  open?: boolean;
  /** True: only those not resolved (open or acknowledged), what a pass may still retract or resolve. */
  unresolved?: boolean;
  kind?: AnomalyKind;
}

const OPEN = "acknowledged_at IS NULL AND resolved_at IS NULL";

/** Anomalies oldest first, narrowed by the filter. */
export function listAnomalies(store: Store, filter: AnomalyFilter = {}): Anomaly[] {
  const where: string[] = [];
  if (filter.open !== undefined) where.push(filter.open ? OPEN : `NOT (${OPEN})`);
  if (filter.unresolved) where.push("resolved_at IS NULL");
  if (filter.kind !== undefined) where.push("kind = ?");
  const sql = `SELECT ${COLUMNS} FROM anomalies${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY id`;
  return store.statement(sql).all(...(filter.kind === undefined ? [] : [filter.kind])).map(fromRow);
}

/**
 * The anomaly of this kind and action id that is not resolved (open, or acknowledged and
 * still in force), or undefined: what a pass retracts or resolves when its condition ends.
 */
export function openAnomalyFor(store: Store, kind: AnomalyKind, actionId: string): Anomaly | undefined {
  const row = store.statement(`SELECT ${COLUMNS} FROM anomalies WHERE kind = ? AND action_id = ? AND resolved_at IS NULL`).get(kind, actionId);
  return row ? fromRow(row) : undefined;
}

/**
 * Retracts an anomaly whose condition no longer holds (audited `anomaly.retracted`) and
 * returns it; one already resolved is returned as it is. An id that names none is a PreconditionError.
 */
export function retractAnomaly(store: Store, id: number): Anomaly {
  return resolve(store, id, "retracted");
}

/**
 * Resolves an anomaly as `gone`, its worker having died (audited `anomaly.resolved`), and
 * returns it; one already resolved is returned as it is. An id that names none is a PreconditionError.
 */
export function resolveAnomaly(store: Store, id: number, resolution: "gone"): Anomaly {
  return resolve(store, id, resolution);
}

/**
 * Acknowledges one anomaly (audited `anomaly.acknowledged`) and returns it; one already
 * acknowledged is returned as it is. An id that names none is a PreconditionError.
 */
export function acknowledgeAnomaly(store: Store, id: number): Anomaly {
  return store.transaction(() => {
    const found = requireAnomaly(store, id);
    if (found.acknowledged_at !== null) return found;
    const acknowledged = fromRow(store.statement(`UPDATE anomalies SET acknowledged_at = ? WHERE id = ? RETURNING ${COLUMNS}`).get(isoSeconds(now()), id));
    appendAudit(store, {
      kind: "anomaly.acknowledged", repo: found.repo ?? undefined, item: found.item ?? undefined,
      body: { anomaly: id, kind: found.kind, action_id: found.action_id },
    });
    return acknowledged;
  });
}

function resolve(store: Store, id: number, resolution: Resolution): Anomaly {
  return store.transaction(() => {
    const found = requireAnomaly(store, id);
    if (found.resolved_at !== null) return found;
    const resolved = fromRow(store.statement(`UPDATE anomalies SET resolved_at = ?, resolution = ? WHERE id = ? RETURNING ${COLUMNS}`)
      .get(isoSeconds(now()), resolution, id));
    appendAudit(store, {
      kind: resolution === "retracted" ? "anomaly.retracted" : "anomaly.resolved",
      repo: found.repo ?? undefined, item: found.item ?? undefined,
      body: { anomaly: id, kind: found.kind, action_id: found.action_id, resolution },
    });
    return resolved;
  });
}

function requireAnomaly(store: Store, id: number): Anomaly {
  const row = store.statement(`SELECT ${COLUMNS} FROM anomalies WHERE id = ?`).get(id);
  if (!row) throw new PreconditionError(`No anomaly ${id} is on record; "robot-army anomalies --all" lists them`);
  return fromRow(row);
}

function fromRow(row: unknown): Anomaly {
  // node:sqlite rows have a null prototype.
  return { ...(row as Anomaly) };
}

/** The item an anomaly is about, as its one-line forms name it: `, item 3 of demo/widgets`, or "" when it names none. */
export function anomalyItemText(anomaly: Pick<Anomaly, "item" | "repo">): string {
  return anomaly.item === null ? "" : `, item ${anomaly.item}${anomaly.repo ? ` of ${anomaly.repo}` : ""}`;
}
