/**
 * Anomalies: conditions the owner should see and acknowledge, such as an effect a crash cut
 * short that no evidence settles (`effect_unfinished`) or a spool file set aside as damaged
 * (`spool_damaged`). One is raised once per kind and action id, however many passes find
 * it; raising and acknowledging are audited facts (`anomaly.raised`, `anomaly.acknowledged`),
 * each in the same transaction as the row it writes.
 *
 * @example
 * raiseAnomaly(store, { kind: "effect_unfinished", actionId, repo: "demo/widgets", item: 1, detail: "..." });
 * listAnomalies(store, { open: true }); // what `status` and `robot-army anomalies` show
 */
import { isoSeconds, now } from "../clock.ts";
import { PreconditionError } from "../errors.ts";
import { redact } from "../redact.ts";
import { appendAudit } from "./audit.ts";
import type { Store } from "./open.ts";

/** The kinds of anomaly raised today. */
export type AnomalyKind = "effect_unfinished" | "spool_damaged";

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
}

/** What raises an anomaly: its kind, what it is about, and what the owner is told. */
export interface NewAnomaly {
  kind: AnomalyKind;
  /** The audited effect it is about; one anomaly per kind and action id. */
  actionId?: string;
  repo?: string;
  /** The work item's id. */
  item?: number;
  /** One line for the owner: what was found and what to check. */
  detail: string;
}

const COLUMNS = "id, kind, action_id, repo, item, detail, raised_at, acknowledged_at";

/**
 * Raises an anomaly, once per kind and action id: when one is already on record (open or
 * acknowledged) it is returned as it is, with `raised` false, and nothing is written.
 */
export function raiseAnomaly(store: Store, anomaly: NewAnomaly): { anomaly: Anomaly; raised: boolean } {
  return store.transaction(() => {
    if (anomaly.actionId !== undefined) {
      const known = store.statement(`SELECT ${COLUMNS} FROM anomalies WHERE kind = ? AND action_id = ?`).get(anomaly.kind, anomaly.actionId);
      if (known) return { anomaly: { ...(known as unknown as Anomaly) }, raised: false };
    }
    const row = store.statement(`INSERT INTO anomalies (kind, action_id, repo, item, detail, raised_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`)
      // The detail carries outside text (a git error, a file's problem): a secret in it is never stored.
      .get(anomaly.kind, anomaly.actionId ?? null, anomaly.repo ?? null, anomaly.item ?? null, redact(anomaly.detail), isoSeconds(now()));
    const raised = { ...(row as unknown as Anomaly) };
    appendAudit(store, {
      kind: "anomaly.raised", repo: anomaly.repo, item: anomaly.item,
      body: { anomaly: raised.id, kind: anomaly.kind, action_id: anomaly.actionId ?? null, detail: anomaly.detail },
    });
    return { anomaly: raised, raised: true };
  });
}

/** Anomalies oldest first; `open: true` only those not acknowledged, `open: false` only acknowledged ones. */
export function listAnomalies(store: Store, options: { open?: boolean } = {}): Anomaly[] {
  const where = options.open === undefined ? "" : ` WHERE acknowledged_at IS ${options.open ? "" : "NOT "}NULL`;
  return store.statement(`SELECT ${COLUMNS} FROM anomalies${where} ORDER BY id`).all().map((row) => ({ ...(row as unknown as Anomaly) }));
}

/**
 * Acknowledges one anomaly (audited `anomaly.acknowledged`) and returns it; one already
 * acknowledged is returned as it is. An id that names none is a PreconditionError.
 */
export function acknowledgeAnomaly(store: Store, id: number): Anomaly {
  return store.transaction(() => {
    const found = store.statement(`SELECT ${COLUMNS} FROM anomalies WHERE id = ?`).get(id) as unknown as Anomaly | undefined;
    if (!found) throw new PreconditionError(`No anomaly ${id} is on record; "robot-army anomalies --all" lists them`);
    if (found.acknowledged_at !== null) return { ...found };
    const row = store.statement(`UPDATE anomalies SET acknowledged_at = ? WHERE id = ? RETURNING ${COLUMNS}`).get(isoSeconds(now()), id);
    const acknowledged = { ...(row as unknown as Anomaly) };
    appendAudit(store, {
      kind: "anomaly.acknowledged", repo: found.repo ?? undefined, item: found.item ?? undefined,
      body: { anomaly: id, kind: found.kind, action_id: found.action_id },
    });
    return acknowledged;
  });
}
