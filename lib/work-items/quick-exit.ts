/**
 * A worker that ended by itself within seconds of its start (a crash at start-up, a missing
 * prompt, a wrong flag, an agent that answered one turn and left) is never reported silently:
 * when its end is recorded (lib/ending/worker-ended.ts), its last output lines, from its
 * exit record (its holder read them from its log or its tmux pane), are kept in a
 * `session.quick_exit` audit record (redacted as every audit body is). Its session's files may be gone
 * by then (a session that ends by itself is reaped), so this is where `show`, `status`'s
 * "needs you" and the dashboard read them. Any other end keeps its last lines too, as
 * `session.last_lines`, for the facts an interrupted or failed item shows the owner
 * (lib/reports/decision.ts): how its worker ended, in its own words.
 */
import { appendAudit, queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import type { Exit } from "../sessions/spool.ts";

/** Within this many seconds of its start, a worker's own end is a quick exit. */
export const QUICK_EXIT_SECONDS = 10;

/** The audit kind that keeps a quick exit. */
export const QUICK_EXIT_KIND = "session.quick_exit";

/** The audit kind that keeps the last lines of any other end. */
export const LAST_LINES_KIND = "session.last_lines";

/** A quick exit as the reports show it. */
export interface QuickExit {
  session: string;
  /** How long the worker ran, in seconds, as its holder measured it. */
  ran_seconds: number;
  ended: string;
  code: number | null;
  signal: string | null;
  /** Its last output lines (at most 20), redacted; empty when it printed nothing, or its terminal keeps no copy (kitty). */
  last_lines: string[];
}

/** Whether an exit is a quick one: the worker's own end (not a stop from outside) within QUICK_EXIT_SECONDS of its start. */
export function isQuickExit(exit: Exit): boolean {
  return exit.ran_seconds !== undefined && exit.ran_seconds <= QUICK_EXIT_SECONDS && exit.ended !== "killed";
}

/** Records how the session's worker ended (inside the caller's transaction): a quick exit as one, any other end with its last lines. */
export function recordQuickExit(store: Store, session: { id: string; item: number; simulated?: boolean }, exit: Exit): void {
  const quick = isQuickExit(exit);
  if (!quick && !exit.last_lines?.length) return;
  appendAudit(store, {
    kind: quick ? QUICK_EXIT_KIND : LAST_LINES_KIND, item: session.item, sessionId: session.id, simulated: session.simulated ?? false,
    body: { ran_seconds: exit.ran_seconds, ended: exit.ended, code: exit.code, signal: exit.signal, last_lines: exit.last_lines ?? [] },
  });
}

/** The quick exit of each of these sessions that ended so, by session id (read along the item index, through the audit log's one reader). */
export function quickExitsOf(store: Store, sessions: ReadonlyArray<{ id: string; item: number }>): Map<string, QuickExit> {
  const found = new Map<string, QuickExit>();
  const wanted = new Set(sessions.map((s) => s.id));
  for (const item of new Set(sessions.map((s) => s.item))) {
    for (const record of queryAudit(store, { kind: QUICK_EXIT_KIND, item })) {
      if (!record.sessionId || !wanted.has(record.sessionId)) continue;
      const body = record.body as Partial<Omit<QuickExit, "session">>;
      found.set(record.sessionId, {
        session: record.sessionId, ran_seconds: body.ran_seconds ?? 0, ended: body.ended!, code: body.code ?? null, signal: body.signal ?? null,
        last_lines: Array.isArray(body.last_lines) ? body.last_lines : [],
      });
    }
  }
  return found;
}

/** How the session's worker ended, with its last lines, whether quickly or not; undefined when no exit of it kept any. */
export function endingOf(store: Store, session: { id: string; item: number }): QuickExit | undefined {
  const record = queryAudit(store, { kinds: [QUICK_EXIT_KIND, LAST_LINES_KIND], item: session.item }).filter((r) => r.sessionId === session.id).at(-1);
  if (!record) return undefined;
  const body = record.body as Partial<Omit<QuickExit, "session">>;
  return {
    session: session.id, ran_seconds: body.ran_seconds ?? 0, ended: body.ended ?? "exited", code: body.code ?? null, signal: body.signal ?? null,
    last_lines: Array.isArray(body.last_lines) ? body.last_lines : [],
  };
}

/**
 * How a quick exit reads in one line, before its last lines.
 * @example describeQuickExit({ session, ran_seconds: 0.4, ended: "exited", code: 1, signal: null, last_lines: ["boom"] }) // "its worker exited 1 0.4 s after it started; its last line:"
 */
export function describeQuickExit(quick: QuickExit): string {
  const how = quick.signal ? `ended by ${quick.signal}` : quick.ended === "failed-to-start" ? "failed to start" : `exited ${quick.code ?? "?"}`;
  const lines = quick.last_lines.length ? `; its last ${quick.last_lines.length === 1 ? "line" : `${quick.last_lines.length} lines`}:` : "; it printed nothing robot-army could keep";
  return `its worker ${how} ${quick.ran_seconds} s after it started${lines}`;
}
