/**
 * The holder: the small process that runs a session's command, records its start and its
 * exit, and at exit reaps the session's files unless the session is kept, permanent or
 * was killed. Killed means stopped from outside: by `session kill`, or by SIGTERM or
 * SIGINT delivered to the holder itself (someone stopping it, nearly always to go look at
 * it). Only the child's own exit, clean or crashed, is reaped. A worker's exit (tag
 * `ra_item`) goes to the exit spool first, so the supervisor learns it even while it is down.
 * A child that exits leaving processes it started running in its group (a background job)
 * has not ended the session: the holder records the exit once the last of them is gone.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { constants } from "node:os";
import { delimiter } from "node:path";
import { writeStderr, writeStdoutVerbatim } from "../cli.ts";
import { isoSeconds, now } from "../clock.ts";
import { groupLiveness, identify, processGroupOf, processStartId } from "../processes.ts";
import type { ProcessGroup } from "../processes.ts";
import { withLock } from "./lock.ts";
import { appendSessionEvent, isKept, readRecord, removeSessionFiles, sessionFiles, writeRecord } from "./records.ts";
import { terminalLines, terminalOf } from "./terminal-output.ts";
import type { SessionRecord } from "./records.ts";
import { spoolExit } from "./spool.ts";

/** How the child's output is shown: to the log only (detached), through this process too, or straight to the terminal. */
export type OutputMode = "log" | "tee" | "terminal";

/** How the child ended, as the foreground `session run` reports it. */
export interface HolderResult {
  /** The record as the exit left it; undefined when `session rm` removed it meanwhile. */
  record: SessionRecord | undefined;
  code: number | null;
  signal: string | null;
  reaped: boolean;
}

const LAST_LINES = 20;

/**
 * Runs session `id` from its record: claims it for this process, starts the child, waits
 * for it, records the exit and reaps. A detached session's child gets a process group of
 * its own (so a kill reaches what it started); a foreground one stays in the terminal's.
 */
export async function holdSession(
  root: string,
  id: string,
  output: OutputMode,
  onStarted: (outcome: { pid: number } | { error: string }) => void = () => {},
  /** The environment the command starts from, when not this process's own (a launch's: lib/sessions/launch-env.ts). */
  base: Record<string, string | undefined> = process.env,
): Promise<HolderResult> {
  const files = sessionFiles(root, id);
  const holder = identify(process.pid);
  const terminal = output === "terminal" ? await terminalOf(process.env) : undefined;
  let record = await update(root, id, (r) => ({
    ...r, holderPid: holder.pid, holderStartedAt: holder.started_at, holderStartId: holder.start_id ?? null,
    ...(terminal ? { terminal } : {}),
  }));
  // The output log holds whatever the command printed: its owner's eyes only.
  const log = openSync(files.log, "a", 0o600);
  const detached = output === "log";
  const child = spawn(record.command, record.args, {
    cwd: record.cwd,
    env: childEnv(record, base),
    detached,
    stdio: output === "terminal" ? "inherit" : ["ignore", output === "log" ? log : "pipe", output === "log" ? log : "pipe"],
  });
  // Read at once, before this process can reap it: a command that exits at once (leaving a
  // background job) still has the start its group's members are measured from.
  const earlyStartId = child.pid === undefined ? undefined : processStartId(child.pid, { ended: true });
  // Installed before anyone can learn of the start, so a stop sent at once is passed on too.
  let stop: Stop | null = null;
  const stopForwarding = forwardSignals(child.pid, detached, (signal) => {
    if (stop) return;
    stop = { signal, at: isoSeconds(now()) };
    try {
      appendSessionEvent(root, id, "kill", { generation: record.generation, signal, by: "a signal to its holder" });
    } catch {
      // The files may be gone (session rm): the exit below records nothing then either.
    }
  });
  if (output === "tee") {
    child.stdout!.on("data", (chunk: Buffer) => { writeStdoutVerbatim(chunk); writeSync(log, chunk); });
    child.stderr!.on("data", (chunk: Buffer) => { writeStderr(chunk); writeSync(log, chunk); });
  }
  const started = await new Promise<{ error?: Error }>((resolve) => {
    child.once("spawn", () => resolve({}));
    child.once("error", (error) => resolve({ error }));
  });
  // Measured on this process's own clock, not robot-army's (RA_NOW fixes that one): how long the command really ran.
  const spawnedAt = performance.now();
  if (started.error) {
    stopForwarding();
    closeSync(log);
    record = await update(root, id, (r) => ({
      ...r, ended: "failed-to-start", startError: started.error!.message, exitedAt: isoSeconds(now()),
    }));
    appendSessionEvent(root, id, "exit", { ended: "failed-to-start", error: started.error.message, generation: record.generation });
    onStarted({ error: started.error.message });
    return { record, code: 127, signal: null, reaped: false };
  }
  const identity = identify(child.pid!);
  const childIdentity = { ...identity, start_id: identity.start_id ?? earlyStartId ?? null };
  const pgid = detached ? undefined : processGroupOf(process.pid);
  const sharedGroup = pgid !== undefined && pgid > 1 ? pgid : undefined;
  record = await update(root, id, (r) => ({
    ...r, childPid: child.pid!, childStartedAt: childIdentity.started_at, childStartId: childIdentity.start_id ?? null, childPgid: detached ? child.pid! : null,
    ...(sharedGroup === undefined ? {} : { sharedPgid: sharedGroup, sharedPgidLeaderStartId: processStartId(sharedGroup) ?? null }),
  }));
  appendSessionEvent(root, id, "start", { generation: record.generation, childPid: child.pid, holderPid: holder.pid });
  onStarted({ pid: child.pid! });

  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once("close", (c, s) => resolve([c, s])));
  const ranSeconds = Math.round((performance.now() - spawnedAt) / 100) / 10;
  // A pane's output never reaches the log: its last lines are read from the pane while it still shows them.
  const paneLines = terminal?.kind === "tmux" ? await terminalLines(terminal, LAST_LINES).catch(() => undefined) : undefined;
  const group: ProcessGroup | undefined = detached
    ? { pgid: child.pid!, leader_start_id: childIdentity.start_id ?? null }
    : sharedGroup === undefined ? undefined : {
      pgid: sharedGroup, leader_start_id: record.sharedPgidLeaderStartId ?? null,
      // What this process started there beside the child (another session it holds) is not the child's to wait for.
      holder: { pid: holder.pid, start_id: holder.start_id ?? null, child_pid: child.pid! },
    };
  // A stop to a holder whose group is not its own cannot reach what runs there: it ends the wait instead.
  const stopped = () => stop !== null || (!detached && Boolean(readRecordQuietly(root, id)?.killRequestedAt));
  // Whoever watches a foreground session is told why it has not ended (a detached one has no one to tell).
  const tell = detached ? undefined : (line: string) => writeStderr(`robot-army: ${line}\n`);
  const members = group ? await waitForGroup(root, id, group, childIdentity.start_id, { code, signal }, stopped, tell) : undefined;
  stopForwarding();
  closeSync(log);
  const lines = paneLines && "lines" in paneLines ? paneLines.lines : lastLines(files.log);
  return await finish(root, id, { code, signal, ranSeconds, lines }, stop, members);
}

/**
 * The variable naming a folder the holder puts first on the child's PATH: the folder of
 * robot-army's own launcher (`<state dir>/bin`), so a worker can run `robot-army` whatever
 * PATH its terminal has. Only the holder knows that PATH (it runs in the terminal), so the
 * folder travels as a variable and is prepended here.
 */
export const PATH_FIRST_VARIABLE = "RA_PATH_FIRST";

/** The child's environment: the base (the holder's, or its launch's), the session's variables, its id and name, and `RA_PATH_FIRST` first on PATH. */
function childEnv(record: SessionRecord, base: Record<string, string | undefined>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...base, ...record.env, RA_SESSION_ID: record.id, RA_SESSION_NAME: record.name };
  const first = record.env[PATH_FIRST_VARIABLE];
  if (first) env.PATH = base.PATH ? `${first}${delimiter}${base.PATH}` : first;
  return env;
}

/**
 * How long the holder gives members to die with the child before it notes the child's exit
 * as leaving them running, and how often it looks at the group again while they run: soon
 * at first, then every 5 s.
 */
const GROUP_POLL_MS = { settle: 50, first: 100, longest: 5_000 };

/**
 * Waits, once the child has exited, while a process it started still runs in its group
 * (by pid and start, read from /proc): until then the session has not ended, so neither the
 * record nor the spool says so. The child's exit is noted (`childExitedAt`, a `child-exit`
 * event) while it waits. Returns what the exit record says of the group: nothing when it
 * emptied, `remained` when `stopped` ended the wait first, `unknown` when it cannot be read.
 */
async function waitForGroup(
  root: string,
  id: string,
  group: ProcessGroup,
  since: string | null | undefined,
  exit: { code: number | null; signal: string | null },
  stopped: () => boolean,
  tell?: (line: string) => void,
): Promise<"remained" | "unknown" | undefined> {
  let members = groupLiveness(group, since);
  // Members that got the same signal as the child are gone a moment after it: only one still there then was left running.
  if (members === "running") {
    await new Promise((resolve) => setTimeout(resolve, GROUP_POLL_MS.settle));
    members = groupLiveness(group, since);
  }
  if (members !== "running") return members === "unknown" ? "unknown" : undefined;
  let name: string;
  try {
    const record = await update(root, id, (r) => ({ ...r, childExitedAt: isoSeconds(now()) }));
    appendSessionEvent(root, id, "child-exit", { ...exit, generation: record.generation, members: "running" });
    name = record.name;
  } catch {
    // Removed meanwhile (session rm): there is nothing left to record the exit in either.
    return undefined;
  }
  const how = exit.signal ? `ended by ${exit.signal}` : `exited ${exit.code}`;
  tell?.(`session ${name}: its command ${how}, but what it started still runs in this terminal's process group; the session ends when that does`);
  for (let delay = GROUP_POLL_MS.first; ; delay = Math.min(delay * 2, GROUP_POLL_MS.longest)) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    members = groupLiveness(group, since);
    if (members === "exited") return undefined;
    if (members === "unknown") return "unknown";
    if (stopped()) return "remained";
  }
}

function readRecordQuietly(root: string, id: string): SessionRecord | undefined {
  try {
    return readRecord(root, id);
  } catch {
    return undefined;
  }
}

/** A stop delivered to the holder from outside: which signal, and when. */
interface Stop {
  signal: NodeJS.Signals;
  at: string;
}

/**
 * Records the exit, spools a worker's exit record, and reaps unless the session is to be
 * retained. A session stopped from outside (`session kill`, or `stop` delivered to the
 * holder) ended `killed`, whatever way its child then went.
 */
async function finish(
  root: string,
  id: string,
  ran: { code: number | null; signal: string | null; ranSeconds: number; lines: string[] },
  stop: Stop | null,
  membersAtExit: "remained" | "unknown" | undefined,
): Promise<HolderResult> {
  const files = sessionFiles(root, id);
  const { code, signal } = ran;
  return await withLock(files.lock, () => {
    const current = readRecord(root, id);
    if (!current) return { record: undefined, code, signal, reaped: true };
    const killRequestedAt = current.killRequestedAt ?? stop?.at ?? null;
    const record: SessionRecord = {
      ...current,
      killRequestedAt,
      exitedAt: isoSeconds(now()),
      exitCode: code,
      exitSignal: signal,
      ended: killRequestedAt ? "killed" : signal ? "crashed" : "exited",
      lastLines: ran.lines,
      ranSeconds: ran.ranSeconds,
      ...(membersAtExit ? { membersAtExit } : {}),
    };
    writeRecord(root, record);
    appendSessionEvent(root, id, "exit", { ended: record.ended, code, signal, generation: record.generation, ...(membersAtExit ? { members: membersAtExit } : {}) });
    if (record.tags.ra_item !== undefined) spoolExit(record);
    const reaped = !retained(record);
    if (reaped) removeSessionFiles(root, id);
    return { record, code, signal, reaped };
  });
}

/**
 * Whether a session's files stay after its exit: `keep` beats everything but `rm`; one
 * whose exit left what its command started running (or unread) stays, for its record is
 * what tells that they may still work in its directory; a permanent session stays for gc to
 * respawn; a killed one stays to be looked at, unless it was started `--ephemeral`.
 */
export function retained(record: SessionRecord): boolean {
  if (isKept(record)) return true;
  if (record.membersAtExit) return true;
  if (record.permanent) return true;
  if (record.ended === "killed" && !record.ephemeral) return true;
  return false;
}

/** The exit code a foreground `session run` passes on: the child's, or 128 + the signal's number. */
export function exitCodeOf(result: { code: number | null; signal: string | null }): number {
  if (result.code !== null) return result.code;
  const number = result.signal ? (constants.signals as Record<string, number>)[result.signal] : undefined;
  return number ? 128 + number : 1;
}

/** Changes a record under its lock and returns what was written. */
export async function update(root: string, id: string, change: (record: SessionRecord) => SessionRecord): Promise<SessionRecord> {
  return await withLock(sessionFiles(root, id).lock, () => {
    const current = readRecord(root, id);
    if (!current) throw new Error(`Session ${id} was removed while it was being changed`);
    const next = change(current);
    writeRecord(root, next);
    return next;
  });
}

function lastLines(log: string): string[] {
  try {
    const text = readFileSync(log, "utf8");
    return text.split("\n").filter((line, index, all) => line !== "" || index < all.length - 1).slice(-LAST_LINES);
  } catch {
    return [];
  }
}

/**
 * A holder told to stop (its window closed, a service manager's TERM, a `kill -INT`)
 * passes the signal to the child, so the child ends and its exit is recorded. SIGTERM,
 * and SIGINT to a detached holder, are someone stopping the session: `onStop` hears of
 * them. A terminal's Ctrl-C already reaches a foreground child directly, and is the
 * child's to answer (an agent takes it as "stop this tool call"), so a foreground holder
 * neither forwards nor counts it; SIGHUP (the window went away) is passed on, not counted.
 */
function forwardSignals(pid: number | undefined, ownGroup: boolean, onStop: (signal: NodeJS.Signals) => void): () => void {
  if (pid === undefined || pid <= 1) return () => {};
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as NodeJS.Signals[]) {
    const handler = () => {
      if (signal === "SIGINT" && !ownGroup) return;
      if (signal !== "SIGHUP") onStop(signal);
      try {
        // The group only when this holder made it (a detached session).
        process.kill(ownGroup ? -pid : pid, signal);
      } catch {
        // Already gone: its exit is on its way.
      }
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  return () => { for (const [signal, handler] of handlers) process.off(signal, handler); };
}
