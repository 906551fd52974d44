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
  return stat && stat.state !== "Z" ? startTimeOf(stat) : undefined;
}

/** The identity of a running process, for recording now and checking later (its /proc entry read once). */
export function identify(pid: number): ProcessIdentity {
  const stat = readProcStat(pid);
  const running = stat && stat.state !== "Z" ? stat : undefined;
  return { pid, started_at: (running && startTimeOf(running)) ?? null, start_id: (running && startIdOf(running)) ?? null };
}

/** Whether two records name one process: the same pid and start (by start id when both have one). */
export function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  if (a.pid !== b.pid) return false;
  return a.start_id && b.start_id ? a.start_id === b.start_id : a.started_at === b.started_at;
}

/**
 * Whether two records are proven to name one process: the same pid and a start both record
 * (their start ids when both have one, else their start times). Unlike `sameProcess`, two
 * records with no start on either side are never taken for one process: a pid alone may
 * have been reused. What it proves is what adoption takes a worker on (lib/daemon/adopt-worker.ts).
 */
export function provenSameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  if (a.pid !== b.pid) return false;
  if (a.start_id && b.start_id) return a.start_id === b.start_id;
  return !!a.started_at && !!b.started_at && a.started_at === b.started_at;
}

/**
 * A running process's `<boot id>:<start ticks>`, or undefined when it cannot be read; with
 * `ended`, a child that has exited but is not yet reaped (a zombie) gives its start too.
 */
export function processStartId(pid: number, options: { ended?: boolean } = {}): string | undefined {
  const stat = readProcStat(pid);
  if (!stat || (stat.state === "Z" && !options.ended)) return undefined;
  return startIdOf(stat);
}

/**
 * Whether the recorded process still runs. `exited` only with proof: no such pid, a
 * zombie, or the pid now belongs to a process that started at another time. Without
 * /proc, or without a recorded start time for a pid that exists, the answer is `unknown`.
 * Its /proc entry is read once: the state and the start it compares are of one process.
 */
export function liveness(recorded: ProcessIdentity): Liveness {
  if (!Number.isInteger(recorded.pid) || recorded.pid <= 1) return "unknown";
  if (!procAvailable()) return "unknown";
  const stat = readProcStat(recorded.pid);
  if (!stat || stat.state === "Z") return "exited";
  // Counted from boot, the start is immune to the wall clock being set since it was recorded.
  const current = recorded.start_id ? startIdOf(stat) : recorded.started_at ? startTimeOf(stat) : undefined;
  if (current === undefined) return "unknown";
  return current === (recorded.start_id || recorded.started_at) ? "running" : "exited";
}

/** A process's `<boot id>:<start ticks>` from its stat, or undefined when the boot id cannot be read. */
function startIdOf(stat: ProcStat): string | undefined {
  const boot = readBootId();
  return boot === undefined ? undefined : `${boot}:${stat.startTicks}`;
}

/** A process's start as an ISO time from its stat, or undefined when the boot time cannot be read. */
function startTimeOf(stat: ProcStat): string | undefined {
  const bootTime = readBootTime();
  if (bootTime === undefined) return undefined;
  return new Date(bootTime * 1000 + (stat.startTicks * 1000) / TICKS_PER_SECOND).toISOString();
}

function procAvailable(): boolean {
  return readBootTime() !== undefined;
}

interface ProcStat {
  state: string;
  ppid: number;
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
  return { state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]), startTicks };
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

/** A process group as recorded: its id and, when it could be read, its leader's `<boot id>:<start ticks>`. */
export interface ProcessGroup {
  pgid: number;
  leader_start_id: string | null;
  /**
   * The holder whose command (`child_pid`) the group's members are asked about, when the
   * holder shares the group with it (a foreground session): a member the holder's process
   * started beside its command is then told apart from one the command started. Without it,
   * or without the holder's start, every member started since counts.
   */
  holder?: { pid: number; start_id: string | null; child_pid: number };
}

/** The process group a running process belongs to, or undefined when it cannot be read. */
export function processGroupOf(pid: number): number | undefined {
  const stat = readProcStat(pid);
  return stat && stat.state !== "Z" ? stat.pgid : undefined;
}

/**
 * Whether a process group still holds a process that started at or after `since` (a
 * `<boot id>:<start ticks>`, in this boot): what a command started in that group, once
 * `since` is the command's own start. `exited` with proof that none does (no such member,
 * or the group's id now names a process other than its recorded leader, which the kernel
 * allows only once the group was empty); `unknown` when /proc cannot be read or `since`
 * was never recorded. Members are known by pid and start, never by name or command line.
 */
export function groupLiveness(group: ProcessGroup, since: string | null | undefined): Liveness {
  const members = groupMembersSince(group, since);
  if (members === "unknown") return "unknown";
  return members.length ? "running" : "exited";
}

/**
 * The pids of the live processes of a process group that started at or after `since`, as
 * `groupLiveness` finds them (it is their count): none with proof that none runs, "unknown"
 * when that cannot be told. What a report names when a command left processes running.
 */
export function groupMembersSince(group: ProcessGroup, since: string | null | undefined): number[] | "unknown" {
  const { pgid } = group;
  if (!Number.isInteger(pgid) || pgid <= 1) return "unknown";
  if (!procAvailable()) return "unknown";
  const [boot, ticks] = (since ?? "").split(":");
  if (!boot || !ticks) return "unknown";
  // Start ticks of another boot say nothing about this one's processes: that group ended with its boot.
  if (boot !== readBootId()) return [];
  const sinceTicks = Number(ticks);
  if (group.leader_start_id) {
    const leader = readProcStat(pgid);
    if (leader && `${boot}:${leader.startTicks}` !== group.leader_start_id) return [];
  }
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return "unknown";
  }
  // In a group shared with a terminal, the process asking (and what started it) may be a member too.
  const asking = ancestry(process.pid);
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || asking.has(Number(entry))) continue;
    const stat = readProcStat(Number(entry));
    // One that started before the command did is not one it started (undefined: it ended while we looked).
    if (!stat || stat.pgid !== pgid || stat.state === "Z" || stat.startTicks < sinceTicks) continue;
    // Nor is one its holder's process started beside it: in a group they share, it may start in the same tick, or later.
    if (group.holder && startedBesideCommand(Number(entry), group.holder, boot)) continue;
    members.push(Number(entry));
  }
  return members;
}

/**
 * Whether a process is the holder (known by pid and start) or descends from it through a
 * child of the holder other than its command: then the holder's process started it, and the
 * command did not. An orphan of the command is never handed to the holder (the kernel hands
 * orphans to init or a subreaper above it; a holder is a runtime robot-army started, which
 * makes itself neither), so what the command started reaches the holder only through the
 * command, or not at all. false whenever the line cannot be followed to the holder.
 */
function startedBesideCommand(pid: number, holder: NonNullable<ProcessGroup["holder"]>, boot: string): boolean {
  if (!holder.start_id || !Number.isInteger(holder.pid) || holder.pid <= 1) return false;
  let below: number | undefined;
  const seen = new Set<number>();
  for (let at = pid; at > 1 && !seen.has(at);) {
    seen.add(at);
    const stat = readProcStat(at);
    if (!stat) return false;
    if (at === holder.pid) return `${boot}:${stat.startTicks}` === holder.start_id && below !== holder.child_pid;
    below = at;
    at = stat.ppid;
  }
  return false;
}

/** A process and its ancestors, by pid. */
function ancestry(pid: number): Set<number> {
  const pids = new Set<number>();
  for (let at = pid; at > 1 && !pids.has(at);) {
    pids.add(at);
    const stat = readProcStat(at);
    if (!stat) break;
    at = stat.ppid;
  }
  return pids;
}
