/**
 * Test scaffolding for the launcher tests: a temp dir per test with its own state dir and
 * session root, handed to the launchers as an explicit environment (process.env is never
 * changed), and a sweep after each test that waits for every session process the test
 * started to end, ends what is left and reports it as a leak.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "./fixtures.ts";
import { groupMembers, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { childIdentity, holderIdentity, listRecords } from "../sessions/records.ts";
import type { SessionRecord } from "../sessions/records.ts";
import type { Env } from "../boundaries/launchers/session-run.ts";
import { sleep, waitFor } from "./wait.ts";

export { sleep, waitFor };
export { rejection } from "./rejects.ts";

/** What a launcher test works in. */
export interface LauncherDirs {
  dir: string;
  /** The session root (`sessions/`). */
  root: string;
  /** The state dir (`state/`), holding the exit spool. */
  state: string;
  /** The worker's working directory (`work/`). */
  work: string;
  /** The environment to give the launchers: RA_STATE_DIR, RA_SESSION_ROOT and TMUX_TMPDIR point into `dir`. */
  env: Env;
}

/** The one record named `name`, or undefined. */
export function recordNamed(root: string, name: string): SessionRecord | undefined {
  return listRecords(root).find((record) => record.name === name);
}

/** A session's output log as written so far ("" before it exists). */
export function logOf(record: SessionRecord): string {
  try {
    return readFileSync(record.log, "utf8");
  } catch {
    return "";
  }
}

/** Runs launcher tests in temp dirs and makes sure none leaves a session process behind. */
export class LauncherTests {
  /** What a test left running, as `<test>: pid N`; the file's last test asserts it is empty. */
  readonly leaked: string[] = [];
  #processes: ProcessIdentity[] = [];
  #groups: number[] = [];

  /** Remembers the holders, children and process groups of the sessions now on record. */
  note(root: string): void {
    for (const record of listRecords(root)) {
      if (record.holderPid) this.#processes.push({ ...holderIdentity(record), pid: record.holderPid });
      if (record.childPid) this.#processes.push({ ...childIdentity(record), pid: record.childPid });
      if (record.childPgid && record.childPgid === record.childPid) this.#groups.push(record.childPgid);
    }
  }

  /**
   * A test body run in a fresh temp dir. `cleanup` runs first when the body is done (a
   * private tmux server is killed there); then every noted process must end within a few
   * seconds, and whatever still runs is SIGKILLed and reported in `leaked`.
   */
  in(name: string, fn: (dirs: LauncherDirs) => Promise<void>, cleanup?: (dirs: LauncherDirs) => Promise<void>): () => Promise<void> {
    return () => withTempDir(async (dir) => {
      const dirs: LauncherDirs = { dir, root: join(dir, "sessions"), state: join(dir, "state"), work: join(dir, "work"), env: {} };
      mkdirSync(dirs.work);
      const env: Env = { ...process.env, RA_STATE_DIR: dirs.state, RA_SESSION_ROOT: dirs.root, TMUX_TMPDIR: dir };
      // Not inside anyone's tmux, nor at a fixed time, whatever the shell running the tests says.
      delete env.TMUX;
      delete env.RA_NOW;
      dirs.env = env;
      try {
        await fn(dirs);
      } finally {
        this.note(dirs.root);
        if (cleanup) await cleanup(dirs);
        await this.#sweep(name);
      }
    });
  }

  async #sweep(name: string): Promise<void> {
    const processes = this.#processes.splice(0);
    const groups = this.#groups.splice(0);
    const running = () => processes.filter((p) => liveness(p) === "running");
    const groupsLeft = () => groups.filter((g) => groupMembers(g).length > 0);
    const deadline = Date.now() + 5_000;
    while ((running().length || groupsLeft().length) && Date.now() < deadline) await sleep(25);
    for (const pgid of groupsLeft()) {
      this.leaked.push(`${name}: process group ${pgid}`);
      kill(-pgid);
    }
    for (const identity of running()) {
      this.leaked.push(`${name}: pid ${identity.pid}`);
      kill(identity.pid);
    }
  }
}

/** SIGKILLs a pid (or, negative, a group) a test's session started, which may have ended meanwhile. */
function kill(pid: number): void {
  if (pid === 0 || pid === 1 || pid === -1) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone meanwhile.
  }
}
