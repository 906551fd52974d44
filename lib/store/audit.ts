/**
 * The audit log: append-only records of what robot-army observed and did. A record is a
 * `fact` (a state change, a recovery), or one half of an outward effect: an `intent`
 * written before the effect and an `outcome` written after it, sharing one `action_id`
 * (DESIGN rule 3). An intent without an outcome is how a crash in the middle is found.
 *
 * Every intent names the process that wrote it (`writer`: pid plus start time, as
 * lib/processes.ts knows processes): an intent whose writer is proven gone was cut short.
 *
 * A record written on someone's behalf other than the command's caller at the terminal (the
 * dashboard's web session that pressed a button) names them as `actor` in its body: every
 * record written inside `asActor`, the verb's state changes and effects alike.
 *
 * The table's triggers refuse UPDATE and DELETE, so nothing here can rewrite history.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
import { isoSeconds, now, parseTimestamp } from "../clock.ts";
import { faultAfter } from "./fault.ts";
import { identify, sameProcess } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { redactAll } from "../redact.ts";
import type { AuditPhase, EffectKindName } from "./effect-kinds.ts";
import type { Store } from "./open.ts";

/** Who a record is about; every subject is optional. */
export interface AuditSubjects {
  /** `owner/name` */
  repo?: string;
  /** The work item's id (`robot-army show <id>`); `repo` names its repository. */
  item?: number;
  sessionId?: string;
  episodeId?: string;
}

/** A record to append. */
export interface AuditInput extends AuditSubjects {
  /** Dotted, e.g. `state.work_item`, `session.recovered`, `github.comment`. */
  kind: string;
  /** Defaults to `fact`. */
  phase?: AuditPhase;
  /** Required for `intent` and `outcome`. */
  actionId?: string;
  /** True when the effect was simulated (effect level below `live`). */
  simulated?: boolean;
  body?: Record<string, unknown>;
  /** ISO time; defaults to the clock's now. */
  at?: string;
}

/** A stored record, as read back. */
export interface AuditRecord {
  id: number;
  at: string;
  kind: string;
  phase: AuditPhase;
  repo: string | null;
  item: number | null;
  sessionId: string | null;
  episodeId: string | null;
  actionId: string | null;
  simulated: boolean;
  body: Record<string, unknown>;
}

/** Which records `queryAudit` returns; every filter is optional. */
export interface AuditQuery {
  /** Records at or after this time. */
  since?: string | Date;
  /** An exact kind, or a prefix: `state` and `state.` both match `state.work_item`. */
  kind?: string;
  /** Exact kinds only, read through the kind index (with `afterId` or `cursor`, only the records after it): what a reader that comes back every pass asks. */
  kinds?: readonly string[];
  phase?: AuditPhase;
  /** Only what this cursor has not read yet, and what it must read again (`LogCursor`). */
  cursor?: LogCursor;
  /** Kinds left out, each exact or a prefix as `kind` reads one. */
  excludeKinds?: readonly string[];
  item?: number;
  /** The newest N matching records. */
  limit?: number;
  /** Records with an id above this one (for following the log). */
  afterId?: number;
  /** Records with an id below this one (a page further back, as the dashboard's log pages). */
  beforeId?: number;
  /** Only simulated records (true), only real ones (false), or both (left out). */
  simulated?: boolean;
}

/** The intent of an outward effect: what is about to be done, to whom. */
export interface AuditEffectInput extends AuditSubjects {
  /** One of lib/store/effect-kinds.ts, where every effect is listed with its timeout and evidence. */
  kind: EffectKindName;
  /** True when the effect only says what it would do (below `live`), touching nothing outside: its intent needs no sync to the disk. */
  simulated?: boolean;
  body?: Record<string, unknown>;
}

const COLUMNS = "id, at, kind, phase, repo, item, session_id, episode_id, action_id, simulated, body";

const INSERT = `INSERT INTO audit (at, kind, phase, repo, item, session_id, episode_id, action_id, simulated, body)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`;

/**
 * Appends one record and returns it as stored, every string in its body redacted (lib/redact.ts).
 * @example appendAudit(store, { kind: "state.work_item", repo: "o/r", item: 12, body: { from: "ready", to: "dispatching" } })
 */
export function appendAudit(store: Store, record: AuditInput): AuditRecord {
  const phase = record.phase ?? "fact";
  const actor = actors.getStore();
  if (!record.kind) throw new TypeError("An audit record needs a kind");
  if (phase !== "fact" && !record.actionId) throw new TypeError(`An audit ${phase} needs an action id`);
  const row = store.statement(INSERT).get(
    recordTime(record.at),
    record.kind,
    phase,
    record.repo ?? null,
    record.item ?? null,
    record.sessionId ?? null,
    record.episodeId ?? null,
    record.actionId ?? null,
    record.simulated ? 1 : 0,
    // The log can never be purged: a secret in outside text (an error, a step's output) is redacted before it lands.
    JSON.stringify(redactAll(actor === undefined ? record.body ?? {} : { ...record.body, actor })),
  );
  // The crash suite's fault point (RA_FAULT): inert unless set.
  faultAfter({ kind: record.kind, phase });
  return fromRow(row);
}

/** Who the records being written are written for, where it is not the terminal's caller (asActor). */
const actors = new AsyncLocalStorage<string>();

/**
 * Runs `fn` with every audit record it writes, through every await, naming `actor` (`web session
 * 1a2b3c4d from 127.0.0.1`) in its body: the dashboard runs each button's verb inside it.
 * @example await asActor("web session 1a2b3c4d from 127.0.0.1", () => retrySaid(deps, 12));
 */
export function asActor<T>(actor: string, fn: () => T): T {
  return actors.run(actor, fn);
}

/** The newest record's id (0 for an empty log): where "what happened since" starts. */
export function lastAuditId(store: Store): number {
  return (store.statement("SELECT max(id) AS id FROM audit").get() as { id: number | null } | undefined)?.id ?? 0;
}

/**
 * The newest record of these kinds whose body holds a number at `field`, and that number
 * (a cursor kept in the log, such as a notification's `through`), of simulated records or real
 * ones when `simulated` says; undefined when there is none.
 * Read backwards along the kind index, so it costs the records after it, not the log.
 */
export function latestBodyNumber(store: Store, kinds: readonly string[], field: string, options: { simulated?: boolean } = {}): number | undefined {
  if (!/^[a-z_]+$/.test(field)) throw new TypeError(`Not a body field name: ${field}`);
  const level = options.simulated === undefined ? "" : " AND simulated = ?";
  const params: Array<string | number> = [...kinds, ...(options.simulated === undefined ? [] : [options.simulated ? 1 : 0])];
  const row = store.statement(
    `SELECT json_extract(body, '$.${field}') AS value FROM audit WHERE kind IN (${kinds.map(() => "?").join(", ")})${level}
      AND json_type(body, '$.${field}') IN ('integer', 'real') ORDER BY id DESC LIMIT 1`,
  ).get(...params) as { value: number } | undefined;
  return row?.value;
}

/** Records matching the query, oldest first (newest last). */
export function queryAudit(store: Store, query: AuditQuery = {}): AuditRecord[] {
  const { where, params } = conditions(query);
  const select = `SELECT ${COLUMNS} FROM audit WHERE ${where}`;
  if (query.cursor) {
    if (query.limit !== undefined) throw new TypeError("An audit query reads either a cursor's records or the newest N, not both");
    return readPast(store, query.cursor, select, params).map(fromRow);
  }
  let sql = `${select} ORDER BY id`;
  if (query.limit !== undefined) {
    sql = `SELECT * FROM (${sql} DESC LIMIT ?) ORDER BY id`;
    params.push(query.limit);
  }
  return store.statement(sql).all(...params).map(fromRow);
}

/** The intent and the outcome of one action, by the action index (each found once); empty for an action not in the log. */
export function actionRecords(store: Store, actionId: string): AuditRecord[] {
  return store.statement(`SELECT ${COLUMNS} FROM audit WHERE action_id = ? AND phase IN ('intent', 'outcome') ORDER BY id`).all(actionId).map(fromRow);
}

/** A query's WHERE conditions (all of them, joined) and their parameters. */
function conditions(query: AuditQuery): { where: string; params: Array<string | number> } {
  const where: string[] = [];
  const params: Array<string | number> = [];
  if (query.afterId !== undefined) {
    where.push("id > ?");
    params.push(query.afterId);
  }
  if (query.beforeId !== undefined) {
    where.push("id < ?");
    params.push(query.beforeId);
  }
  if (query.since !== undefined) {
    where.push("at >= ?");
    params.push(recordTime(query.since));
  }
  if (query.kind !== undefined) {
    const kind = query.kind.replace(/\.$/, "");
    where.push("(kind = ? OR substr(kind, 1, ?) = ?)");
    params.push(kind, kind.length + 1, `${kind}.`);
  }
  if (query.kinds !== undefined) {
    where.push(`kind IN (${query.kinds.map(() => "?").join(", ") || "NULL"})`);
    params.push(...query.kinds);
  }
  if (query.phase !== undefined) {
    where.push("phase = ?");
    params.push(query.phase);
  }
  for (const excluded of query.excludeKinds ?? []) {
    const kind = excluded.replace(/\.$/, "");
    where.push("NOT (kind = ? OR substr(kind, 1, ?) = ?)");
    params.push(kind, kind.length + 1, `${kind}.`);
  }
  if (query.item !== undefined) {
    where.push("item = ?");
    params.push(query.item);
  }
  if (query.simulated !== undefined) {
    where.push("simulated = ?");
    params.push(query.simulated ? 1 : 0);
  }
  return { where: where.length ? where.join(" AND ") : "1", params };
}

/**
 * Where a reader that comes back every pass (the daemon's steps that follow the log) has got
 * to: it has read every record up to `after`, and of those it must read `again` once more
 * (what it left waiting). A new cursor has read nothing, so a daemon that starts again reads
 * the whole log once and misses nothing; after that a pass reads what is new since the last.
 */
export interface LogCursor {
  after: number;
  again: number[];
}

/** A cursor that has read nothing yet. */
export function newLogCursor(): LogCursor {
  return { after: 0, again: [] };
}

/**
 * Moves a cursor on once a reader is done with a pass: it has read everything up to `top`
 * (the newest record's id, `lastAuditId`, taken before it read), and must read `again` once more.
 * Left as it was when the reader failed, so the next pass reads it all again.
 */
export function advanceCursor(cursor: LogCursor, top: number, again: readonly number[]): void {
  cursor.after = Math.max(cursor.after, top);
  cursor.again = [...new Set(again)].filter((id) => id <= cursor.after).sort((a, b) => a - b);
}

/**
 * The rows of `select` (a SELECT over `audit`, up to its WHERE conditions, naming the record's
 * id `id`) that the cursor has not read and those it must read again, by id: two reads, each by
 * an index (the ids after it, then its few `again` by id), where an OR of both read them all.
 */
export function readPast(store: Store, cursor: LogCursor, select: string, params: readonly SQLInputValue[]): Record<string, SQLOutputValue>[] {
  const fresh = store.statement(`${select} AND id > ? ORDER BY id`).all(...params, cursor.after);
  if (!cursor.again.length) return fresh;
  const again = store.statement(`${select} AND id IN (SELECT value FROM json_each(?)) AND id <= ? ORDER BY id`).all(...params, JSON.stringify(cursor.again), cursor.after);
  return [...again, ...fresh];
}

/**
 * Runs an outward effect between an intent and an outcome that share one new action id:
 * the intent is on disk (synced, unless the effect is simulated) before the effect starts,
 * naming its writer (this process, pid plus start time, as `writer`), the outcome records
 * `ok` (with what `summarize` makes of the result) or the error, which is rethrown. Refused
 * inside a transaction, whose rollback could take the intent with it.
 * @example
 * await auditEffect(store, { kind: "github.comment", repo, item, body: { comment: "claimed" } },
 *   () => github.comment(repo, item, text), (c) => ({ comment_id: c.id }));
 */
export async function auditEffect<T>(
  store: Store,
  intent: AuditEffectInput,
  effect: (actionId: string) => T | Promise<T>,
  summarize: (result: T) => Record<string, unknown> = () => ({}),
): Promise<T> {
  if (store.inTransaction) {
    throw new TypeError(`Effect "${intent.kind}" cannot run inside a store transaction: its intent must be on disk first`);
  }
  const { body, ...about } = intent;
  // The Web Crypto global: importing node:crypto would cost every reader ~20 ms of start-up.
  const actionId = globalThis.crypto.randomUUID();
  // A real intent is synced to the disk before its effect starts: a crash of the machine
  // can lose only what came after it. A simulated effect touches nothing outside, and an
  // outcome lost with the machine leaves its intent without one, which is how a crash is
  // found and settled from the effect's evidence (lib/daemon/unfinished.ts): neither needs
  // the sync, and every later synced commit carries them to the disk anyway.
  const record = (input: AuditInput, synced: boolean) => (synced ? appendAudit(store, input) : store.unsynced(() => appendAudit(store, input)));
  record({ ...about, body: { ...body, writer: thisProcess() }, phase: "intent", actionId }, !about.simulated);
  inFlight.add(actionId);
  let result: T;
  try {
    result = await effect(actionId);
  } catch (error) {
    record({ ...about, phase: "outcome", actionId, body: { ok: false, error: errorText(error) } }, false);
    throw error;
  } finally {
    inFlight.delete(actionId);
  }
  record({ ...about, phase: "outcome", actionId, body: { ok: true, ...summarizeSafely(summarize, result) } }, false);
  return result;
}

/** The action ids of the effects this process is running now. */
const inFlight = new Set<string>();

/**
 * Whether this process wrote the intent and is no longer running its effect: its outcome
 * could not be written (the store failed), so no outcome will ever come from here.
 */
export function abandonedHere(intent: AuditRecord): boolean {
  const writer = writerOf(intent);
  return writer !== undefined && sameProcess(writer, thisProcess()) && !inFlight.has(intent.actionId ?? "");
}

/** The process that wrote an intent (its `writer`), or undefined when the record names none that can be read. */
export function writerOf(record: AuditRecord): ProcessIdentity | undefined {
  const writer = record.body.writer as Partial<ProcessIdentity> | undefined;
  if (typeof writer !== "object" || writer === null || !Number.isSafeInteger(writer.pid)) return undefined;
  return {
    pid: writer.pid!,
    started_at: typeof writer.started_at === "string" ? writer.started_at : null,
    start_id: typeof writer.start_id === "string" ? writer.start_id : null,
  };
}

let self: ProcessIdentity | undefined;

/** This process, read once: its pid and start time do not change while it runs. */
function thisProcess(): ProcessIdentity {
  self ??= identify(process.pid);
  return self;
}

/**
 * Intents with no outcome: effects that were started and never reported back. Every one in the
 * log, or, `since` a cursor, those it has not read and those it must read again.
 */
export function intentsWithoutOutcome(store: Store, since?: LogCursor): AuditRecord[] {
  // The IN lets SQLite use the partial index audit_by_action; without it every intent scanned the whole log.
  const sql = `SELECT ${COLUMNS} FROM audit AS i WHERE phase = 'intent' AND NOT EXISTS
    (SELECT 1 FROM audit AS o WHERE o.action_id = i.action_id AND o.phase IN ('intent', 'outcome') AND o.phase = 'outcome')`;
  const rows = since ? readPast(store, since, sql, []) : store.statement(`${sql} ORDER BY id`).all();
  return rows.map(fromRow);
}

interface AuditRow {
  id: number;
  at: string;
  kind: string;
  phase: AuditPhase;
  repo: string | null;
  item: number | null;
  session_id: string | null;
  episode_id: string | null;
  action_id: string | null;
  simulated: number;
  body: string;
}

function fromRow(row: unknown): AuditRecord {
  // node:sqlite rows have a null prototype; the record is a plain object.
  const { session_id, episode_id, action_id, simulated, body, ...rest } = { ...(row as AuditRow) };
  return {
    ...rest,
    sessionId: session_id,
    episodeId: episode_id,
    actionId: action_id,
    simulated: simulated === 1,
    body: JSON.parse(body),
  };
}

function recordTime(at: string | Date | undefined): string {
  if (at === undefined) return isoSeconds(now());
  const date = parseTimestamp(at);
  if (!date) throw new TypeError(`Audit time "${String(at)}" is not an ISO time such as 2026-01-15T10:00:00Z`);
  return isoSeconds(date);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function summarizeSafely<T>(summarize: (result: T) => Record<string, unknown>, result: T): Record<string, unknown> {
  // The effect happened: a summary that fails must not leave its intent looking unfinished.
  try {
    return summarize(result);
  } catch (error) {
    return { summary_error: errorText(error) };
  }
}
