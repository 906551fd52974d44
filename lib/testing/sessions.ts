/**
 * Test scaffolding for the managed-session tests: a temp session root per test, detached
 * sessions whose processes are ended after each test and reported when they leaked, and
 * the waits those tests need.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Test } from "uvu";
import { withTempDir } from "./fixtures.ts";
import { groupMembers as groupPids, identify, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { childIdentity, holderIdentity, listRecords, readRecord } from "../sessions/records.ts";
import { PROJECT_ROOT, runtimeArgv } from "../runtime.ts";
import type { SessionRecord } from "../sessions/records.ts";
import { createSession, startDetached } from "../sessions/start.ts";
import type { SessionSpec } from "../sessions/start.ts";
import { sleep, waitFor } from "./wait.ts";

export { sleep, waitFor };
export { rejection } from "./rejects.ts";

/** The folders `inSessionDir` gives a test. */
export interface SessionDirs {
  /** The session root (`sessions/`, mode 0700). */
  root: string;
  /** The state dir (`state/`), where holders find the exit spool through RA_STATE_DIR. */
  state: string;
  /** A working directory for the sessions' commands (`work/`). */
  work: string;
}

/**
 * A test body run in a fresh temp dir holding a session root, a state dir (set as
 * RA_STATE_DIR for the test, then restored) and a working directory.
 */
export function inSessionDir(fn: (dirs: SessionDirs) => Promise<void>): () => Promise<void> {
  return () => withTempDir(async (dir) => {
    const dirs = { root: join(dir, "sessions"), state: join(dir, "state"), work: join(dir, "work") };
    mkdirSync(dirs.root, { mode: 0o700 });
    mkdirSync(dirs.work);
    const before = process.env.RA_STATE_DIR;
    process.env.RA_STATE_DIR = dirs.state;
    try {
      await fn(dirs);
    } finally {
      if (before === undefined) delete process.env.RA_STATE_DIR;
      else process.env.RA_STATE_DIR = before;
    }
  });
}

/** The live members of process group `pgid`, as identities (read from /proc, never by name). */
export function groupMembers(pgid: number): ProcessIdentity[] {
  return groupPids(pgid).map(identify);
}

/**
 * Starts `session run --name=<name>` in the foreground, as a terminal tab runs it: in a
 * process group made for it here (so only the test may end it: its `pgid`), the holder
 * leading it and its child, `sh -c <script>`, sharing it. Returns once the child is on record.
 */
export async function startInTerminalGroup(root: string, work: string, script: string, name = "fg"): Promise<{ record: SessionRecord; pgid: number }> {
  const [runtime, ...entry] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  const argv = [...entry, "session", "run", `--name=${name}`, `--cwd=${work}`, "--", "sh", "-c", script];
  const holder = spawn(runtime, argv, { env: { ...process.env, RA_SESSION_ROOT: root }, detached: true, stdio: "ignore" });
  const record = await waitFor("the child on record", () => listRecords(root).find((r) => r.name === name && r.childPid !== null), 15_000);
  return { record, pgid: holder.pid! };
}

/** Waits until the holder of a session has exited, so nothing writes into the temp dir after the test. */
export async function holderGone(record: SessionRecord): Promise<void> {
  if (record.holderPid === null) return;
  const holder = { ...holderIdentity(record), pid: record.holderPid };
  await waitFor(`holder ${record.holderPid} to exit`, () => liveness(holder) === "exited");
}

/** The processes a test file started, ended after each test; see `trackSessionProcesses`. */
export interface SessionProcesses {
  /** Processes (holders, children) to end after each test if they still run. */
  started: ProcessIdentity[];
  /** Process groups to end after each test if any member still runs. */
  groups: number[];
  /** What a test left running, as `<test>: pid N`; the file's last test asserts it is empty. */
  leaked: string[];
  /** Starts a detached session and remembers its holder and its child (by pid or by group). */
  start(root: string, spec: SessionSpec): Promise<{ record: SessionRecord; pid: number }>;
}

/**
 * Remembers the processes a test file's sessions start and, after each test of `suite`,
 * SIGKILLs what still runs and notes it in `leaked`. Call it once per test file, at the
 * top: uvu drops a suite's hooks when the file's `test.run()` queues it.
 * `childrenBy: "group"` follows each child's process group, for commands that start
 * processes of their own; `"pid"` follows the child alone.
 */
export function trackSessionProcesses(suite: Test, options: { childrenBy: "pid" | "group" }): SessionProcesses {
  const started: ProcessIdentity[] = [];
  const groups: number[] = [];
  const leaked: string[] = [];
  suite.after.each(async (context) => {
    const testName = context.__test__ || "a test";
    const ending = { groups: groups.splice(0), started: started.splice(0) };
    // A holder whose command was stopped still writes its exit record before it ends: a moment's grace, under load.
    const deadline = Date.now() + LEAK_GRACE_MS;
    const running = () => ending.groups.some((pgid) => groupPids(pgid).length > 0) || ending.started.some((identity) => liveness(identity) === "running");
    while (running() && Date.now() < deadline) await sleep(25);
    for (const pgid of ending.groups) {
      if (groupPids(pgid).length === 0) continue;
      leaked.push(`${testName}: process group ${pgid}`);
      kill(-pgid);
    }
    for (const identity of ending.started) {
      if (liveness(identity) !== "running") continue;
      leaked.push(`${testName}: pid ${identity.pid}`);
      kill(identity.pid);
    }
  });
  async function start(root: string, spec: SessionSpec): Promise<{ record: SessionRecord; pid: number }> {
    const created = await createSession(root, spec);
    const { pid } = await startDetached(root, created.id);
    const record = readRecord(root, created.id) ?? created;
    if (record.holderPid) started.push({ ...holderIdentity(record), pid: record.holderPid });
    if (options.childrenBy === "group" && record.childPgid) groups.push(record.childPgid);
    if (options.childrenBy === "pid" && record.childPid) started.push({ ...childIdentity(record), pid: record.childPid });
    return { record, pid };
  }
  return { started, groups, leaked, start };
}

/** How long a test's processes may take to end after it before they count as leaked. */
const LEAK_GRACE_MS = 3_000;

/** SIGKILLs a pid (or, negative, a process group) that may have ended meanwhile. */
function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone meanwhile.
  }
}
