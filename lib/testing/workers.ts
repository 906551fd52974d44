/**
 * Test scaffolding for capacity: a temp dir with a state dir, a store and a session root
 * (RA_STATE_DIR and RA_SESSION_ROOT set for the test, then restored), real detached
 * worker sessions, and an ending that stops every session still running, by its
 * recorded pid and start time, before the temp dir goes.
 */
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { withTempDir } from "./fixtures.ts";
import { liveness } from "../processes.ts";
import { holderGone, waitFor } from "./sessions.ts";
import type { SessionProcesses } from "./sessions.ts";
import { readRecord } from "../sessions/records.ts";
import type { SessionRecord } from "../sessions/records.ts";
import { childRunning, sessionState } from "../sessions/state.ts";
import { stopSession } from "../sessions/stop.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";

/** What `inWorkerDir` gives a test. */
export interface WorkerDirs {
  /** The session root (`sessions/`, also RA_SESSION_ROOT). */
  root: string;
  /** The state dir (`state/`, also RA_STATE_DIR), holding the store. */
  state: string;
  /** Where the sessions' commands run. */
  work: string;
  store: Store;
}

/** A test body run in a fresh temp dir; every session still running in its root is stopped afterwards. */
export function inWorkerDir(fn: (dirs: WorkerDirs) => Promise<void>): () => Promise<void> {
  return () => withTempDir(async (dir) => {
    const root = join(dir, "sessions");
    const state = join(dir, "state");
    const work = join(dir, "work");
    mkdirSync(root, { mode: 0o700 });
    mkdirSync(work);
    const before = { state: process.env.RA_STATE_DIR, root: process.env.RA_SESSION_ROOT };
    process.env.RA_STATE_DIR = state;
    process.env.RA_SESSION_ROOT = root;
    const store = await openStore(state);
    try {
      await fn({ root, state, work, store });
    } finally {
      store.close();
      await endSessions(root);
      restore("RA_STATE_DIR", before.state);
      restore("RA_SESSION_ROOT", before.root);
    }
  });
}

/** Starts a detached `sleep 30` session with these tags, tracked so a leak is reported. */
export async function startWorker(sessions: SessionProcesses, dirs: WorkerDirs, tags: Record<string, string>): Promise<SessionRecord> {
  const { record } = await sessions.start(dirs.root, { command: "sleep", args: ["30"], cwd: dirs.work, tags });
  return record;
}

/** A config from TOML text, as a file at `/x/config.toml` would give it. */
export async function configFrom(text: string): Promise<Config> {
  return await parseConfig(text, "/x/config.toml", {});
}

/** Stops every session in the root that still runs (holder or, for a vanished one, its command) and waits for the holders to go. */
export async function endSessions(root: string): Promise<void> {
  for (const record of readableRecords(root)) {
    const state = sessionState(root, record);
    if (state === "running" || state === "starting") {
      if (state === "starting") await waitFor(`session ${record.name} to start`, () => readRecord(root, record.id)?.holderPid);
      await stopSession(root, readRecord(root, record.id) ?? record, { graceMs: 2_000 });
    } else if (childRunning(record) && record.childPid !== null && record.childPid > 1) {
      // A vanished session's command, proven the recorded one by pid and start time.
      process.kill(record.childPid, "SIGKILL");
      const child = { pid: record.childPid, started_at: record.childStartedAt };
      await waitFor(`pid ${record.childPid} to exit`, () => liveness(child) === "exited");
    }
    await holderGone(readRecord(root, record.id) ?? record);
  }
}

/** The records that can be read; a test may have left one that cannot. */
function readableRecords(root: string): SessionRecord[] {
  return readdirSync(root).filter((name) => name.endsWith(".json") && !name.startsWith(".")).flatMap((name) => {
    try {
      return [readRecord(root, name.slice(0, -5))].filter((r): r is SessionRecord => r !== undefined && typeof r.tags === "object");
    } catch {
      return [];
    }
  });
}

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
