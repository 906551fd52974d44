/**
 * The crash suite's fault point: `RA_FAULT=<audit kind>:<intent|outcome|fact>[:<nth>]` makes
 * this process SIGKILL itself right after it writes the nth (default first) audit record of
 * that kind and phase, so a test can cut any effect short exactly at its boundary. Read
 * once, when this module loads, and taken out of the environment, so it cuts short only the
 * process it was given to, never a holder or worker that process starts; inert unless set. A value that cannot be read is an error
 * at the first record, never ignored: a crash test that crashes nothing would pass.
 *
 * @example RA_FAULT=github.comment:intent robot-army run --once   # killed after the comment's intent
 */
import type { AuditPhase } from "./effect-kinds.ts";

/** Where the process is to crash. */
export interface FaultPoint {
  kind: string;
  phase: AuditPhase;
  nth: number;
}

const PHASES: readonly AuditPhase[] = ["intent", "outcome", "fact"];

/** Reads an RA_FAULT value; null when unset or empty. */
export function parseFault(value: string | undefined): FaultPoint | null {
  if (value === undefined || value === "") return null;
  const [kind, phase, nth, ...rest] = value.split(":");
  const count = nth === undefined ? 1 : Number(nth);
  if (!kind || !PHASES.includes(phase as AuditPhase) || rest.length || !Number.isSafeInteger(count) || count < 1) {
    throw new Error(`RA_FAULT="${value}" is not <audit kind>:<intent|outcome|fact>[:<nth>], e.g. github.comment:intent:2`);
  }
  return { kind, phase: phase as AuditPhase, nth: count };
}

let point: FaultPoint | null = null;
let unreadable: Error | null = null;
try {
  point = parseFault(process.env.RA_FAULT);
} catch (error) {
  unreadable = error as Error;
}
delete process.env.RA_FAULT;
let seen = 0;

/** Called right after an audit record is written: SIGKILLs this process when it is the fault point. */
export function faultAfter(record: { kind: string; phase: AuditPhase }): void {
  if (unreadable) throw unreadable;
  if (point === null || record.kind !== point.kind || record.phase !== point.phase) return;
  seen += 1;
  if (seen === point.nth) process.kill(process.pid, "SIGKILL");
}
