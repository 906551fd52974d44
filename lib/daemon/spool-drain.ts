/**
 * Draining the exit spool: each exit record a worker's holder left closes the worker's
 * session row (`exited`, `crashed`, `killed`) and moves its item from `active` to
 * `interrupted`. The file is deleted only after the store has it, so a crash in between
 * re-processes it, and the second time changes nothing. A record for a session the store
 * does not know is kept and reported once, never guessed at.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isoSeconds, now } from "../clock.ts";
import type { SessionRecord } from "../sessions/records.ts";
import type { ExitRecord } from "../sessions/spool.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import type { DaemonEvent } from "./events.ts";

/** A session row that is still open, with its item's state. */
interface OpenRow {
  id: string;
  item: number;
  ended_at: string | null;
}

/** What one drain did. */
export interface DrainResult {
  processed: number;
  kept: number;
  events: DaemonEvent[];
}

/** How a session's `ended` maps to the session row's end reason. */
const END_REASON: Record<string, "exited" | "crashed" | "killed"> = { exited: "exited", crashed: "crashed", killed: "killed", "failed-to-start": "crashed", abandoned: "exited" };

/**
 * Processes every spool file, oldest name first. `reported` remembers the files already
 * reported as kept, so each is reported once per daemon.
 */
export function drainSpool(store: Store, dir: string, reported: Set<string> = new Set()): DrainResult {
  const result: DrainResult = { processed: 0, kept: 0, events: [] };
  if (!existsSync(dir)) return result;
  const names = readdirSync(dir).filter((name) => name.endsWith(".json") && !name.startsWith(".")).sort();
  for (const name of names) {
    const path = join(dir, name);
    const exit = readExit(path);
    const row = exit ? findRow(store, exit.session_id) : undefined;
    if (!exit || !row) {
      result.kept++;
      if (!reported.has(name)) {
        reported.add(name);
        const why = exit ? `session ${exit.session_id} (${exit.name}) is not in the store` : "it cannot be read";
        result.events.push({ event: "spool_kept", line: `exit spool: kept ${name}: ${why}`, file: path, session: exit?.session_id ?? null });
      }
      continue;
    }
    const event = closeFromExit(store, row, exit);
    if (event) result.events.push(event);
    rmSync(path, { force: true });
    result.processed++;
  }
  return result;
}

/**
 * Closes a session row from how its worker ended, and interrupts the item when this was
 * its current session and it is still `active`. Idempotent: an already closed row changes
 * nothing. Returns what happened, or null when nothing did.
 */
export function closeFromExit(store: Store, row: OpenRow, exit: Pick<ExitRecord, "ended" | "code" | "signal" | "at">): DaemonEvent | null {
  if (row.ended_at !== null) return null;
  const endReason = END_REASON[exit.ended] ?? "exited";
  const why = exitReason(exit);
  return store.transaction(() => {
    store.statement("UPDATE sessions SET ended_at = ?, end_reason = ?, exit_code = ? WHERE id = ? AND ended_at IS NULL")
      .run(exit.at || isoSeconds(now()), endReason, exit.code, row.id);
    const item = getItem(store, row.item)!;
    const current = latestSession(store, row.item) === row.id;
    const interrupt = current && item.state === "active";
    if (interrupt) transition(store, item.id, "interrupted", { reason: why, details: { session: row.id } });
    const outcome = interrupt ? "item interrupted" : `item stays ${item.state}`;
    return {
      event: "worker_ended", line: `worker of item ${item.id} ${why.replace(/^worker /, "")}: ${outcome}`,
      item: item.id, session: row.id, end_reason: endReason, code: exit.code, signal: exit.signal, interrupted: interrupt,
    };
  });
}

/** How a session ended, from its own record: the same facts its spooled exit record holds. */
export function exitOfRecord(record: Pick<SessionRecord, "ended" | "exitCode" | "exitSignal" | "exitedAt">): Pick<ExitRecord, "ended" | "code" | "signal" | "at"> {
  return { ended: record.ended ?? "exited", code: record.exitCode, signal: record.exitSignal, at: record.exitedAt ?? "" };
}

/** `worker exited (code N)`, `worker crashed (SIGNAL)`, `worker was killed`: the item's reason. */
export function exitReason(exit: Pick<ExitRecord, "ended" | "code" | "signal">): string {
  if (exit.ended === "killed") return "worker was killed";
  if (exit.ended === "failed-to-start") return "worker failed to start";
  if (exit.ended === "crashed" || (exit.code === null && exit.signal)) return `worker crashed (${exit.signal ?? "unknown signal"})`;
  return `worker exited (code ${exit.code ?? "unknown"})`;
}

function readExit(path: string): ExitRecord | undefined {
  try {
    const exit = JSON.parse(readFileSync(path, "utf8")) as ExitRecord;
    return typeof exit.session_id === "string" && typeof exit.ended === "string" ? exit : undefined;
  } catch {
    return undefined;
  }
}

function findRow(store: Store, id: string): OpenRow | undefined {
  const row = store.statement("SELECT id, item, ended_at FROM sessions WHERE id = ?").get(id);
  return row ? { ...(row as unknown as OpenRow) } : undefined;
}

/** The id of the item's newest session: only its end interrupts the item. */
function latestSession(store: Store, item: number): string | undefined {
  const row = store.statement("SELECT id FROM sessions WHERE item = ? ORDER BY attempt DESC LIMIT 1").get(item) as { id: string } | undefined;
  return row?.id;
}
