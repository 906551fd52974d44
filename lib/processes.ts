/**
 * Knowing a process by its pid plus its start time (DESIGN rule 6), so a pid the system
 * has reused for another program is never taken for the one we recorded.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Whether a recorded process is still the one running under its pid. */
export type Liveness = "running" | "exited" | "unknown";

/** A process as recorded: its pid and, when it could be read, when it started. */
export interface ProcessIdentity {
  pid: number;
  /** When it started, as a time (for people; derived from the boot time, which moves when the clock is set). */
  started_at: string | null;
  /**
   * `<boot id>:<start ticks>`: when it started, counted from this boot, which no clock
   * change moves. Compared in place of `started_at` when recorded (older records lack it).
   */
  start_id?: string | null;
}

/** How Linux counts process start times in /proc (USER_HZ, 100 on every mainstream build). */
const TICKS_PER_SECOND = 100;

/** The start time of a running process as an ISO time, or undefined when it cannot be read. */
export function processStartTime(pid: number): string | undefined {
  const stat = readProcStat(pid);
  if (!stat || stat.state === "Z") return undefined;
  const bootTime = readBootTime();
  if (bootTime === undefined) return undefined;
  return new Date(bootTime * 1000 + (stat.startTicks * 1000) / TICKS_PER_SECOND).toISOString();
}

/** The identity of a running process, for recording now and checking later. */
export function identify(pid: number): ProcessIdentity {
  return { pid, started_at: processStartTime(pid) ?? null, start_id: processStartId(pid) ?? null };
}

/** Whether two records name one process: the same pid and start (by start id when both have one). */
export function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  if (a.pid !== b.pid) return false;
  return a.start_id && b.start_id ? a.start_id === b.start_id : a.started_at === b.started_at;
}

/** A running process's `<boot id>:<start ticks>`, or undefined when it cannot be read. */
export function processStartId(pid: number): string | undefined {
  const stat = readProcStat(pid);
  if (!stat || stat.state === "Z") return undefined;
  const boot = readBootId();
  return boot === undefined ? undefined : `${boot}:${stat.startTicks}`;
}

/**
 * Whether the recorded process still runs. `exited` only with proof: no such pid, a
 * zombie, or the pid now belongs to a process that started at another time. Without
 * /proc, or without a recorded start time for a pid that exists, the answer is `unknown`.
 */
export function liveness(recorded: ProcessIdentity): Liveness {
  if (!Number.isInteger(recorded.pid) || recorded.pid <= 1) return "unknown";
  if (!procAvailable()) return "unknown";
  const stat = readProcStat(recorded.pid);
  if (!stat || stat.state === "Z") return "exited";
  // Counted from boot, the start is immune to the wall clock being set since it was recorded.
  if (recorded.start_id) {
    const current = processStartId(recorded.pid);
    if (current === undefined) return "unknown";
    return current === recorded.start_id ? "running" : "exited";
  }
  if (!recorded.started_at) return "unknown";
  const current = processStartTime(recorded.pid);
  if (current === undefined) return "unknown";
  return current === recorded.started_at ? "running" : "exited";
}

function procAvailable(): boolean {
  return readBootTime() !== undefined;
}

interface ProcStat {
  state: string;
  /** The process group it belongs to. */
  pgid: number;
  startTicks: number;
}

function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const startTicks = Number(fields[19]);
  if (!Number.isFinite(startTicks)) return undefined;
  return { state: fields[0], pgid: Number(fields[2]), startTicks };
}

let bootIdCache: string | undefined | null = null;

/** This boot's id: start ticks of two boots are never taken for one another. */
function readBootId(): string | undefined {
  if (bootIdCache !== null) return bootIdCache;
  try {
    bootIdCache = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined;
  } catch {
    bootIdCache = undefined;
  }
  return bootIdCache;
}

let bootTimeCache: number | undefined | null = null;

function readBootTime(): number | undefined {
  if (bootTimeCache !== null) return bootTimeCache;
  try {
    const match = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"));
    bootTimeCache = match ? Number(match[1]) : undefined;
  } catch {
    bootTimeCache = undefined;
  }
  return bootTimeCache;
}

/**
 * The pids of live processes in a process group (zombies left out), read from /proc. A
 * group id stays reserved while any member lives, so members found here belong to the
 * group that was made under that id.
 */
export function groupMembers(pgid: number): number[] {
  if (!Number.isInteger(pgid) || pgid <= 1) return [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") members.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return members;
}

/**
 * Whether any process of the group a recorded leader made still runs: `running` while a
 * live member (its leader or any process it started in the group) started no earlier than
 * the leader did, in this boot; `exited` with proof that none does (no such member, or the
 * leader's pid now leads a group someone else made, which the kernel allows only once our
 * group was empty); `unknown` when /proc cannot be read or the leader's start was never
 * recorded. Members are known by their pid and start, never by name or command line.
 */
export function groupLiveness(leader: ProcessIdentity): Liveness {
  const pgid = leader.pid;
  if (!Number.isInteger(pgid) || pgid <= 1) return "unknown";
  if (!procAvailable()) return "unknown";
  const [boot, ticks] = (leader.start_id ?? "").split(":");
  if (!boot || !ticks) return "unknown";
  // Start ticks of another boot say nothing about this one's processes: that group ended with its boot.
  if (boot !== readBootId()) return "exited";
  const leaderTicks = Number(ticks);
  const current = readProcStat(pgid);
  if (current && current.startTicks !== leaderTicks) return "exited";
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return "unknown";
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    // A member started before the leader cannot be one it started (it ended meanwhile if undefined).
    if (stat && stat.pgid === pgid && stat.state !== "Z" && stat.startTicks >= leaderTicks) return "running";
  }
  return "exited";
}
