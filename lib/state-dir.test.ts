import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { acquireDaemonLock } from "./daemon/lock.ts";
import { writeHeartbeat } from "./daemon/heartbeat.ts";
import { appendSessionEvent, ensureSessionRoot, readRecord } from "./sessions/records.ts";
import { spoolDir, spoolFiles } from "./sessions/spool.ts";
import { createSession, startDetached } from "./sessions/start.ts";
import { appendAudit } from "./store/audit.ts";
import { openStore } from "./store/open.ts";
import { makeTempDir, removeTempDir } from "./testing/fixtures.ts";
import { waitFor } from "./testing/wait.ts";
import { ensureStateDir, stateDirPath } from "./state-dir.ts";

test("RA_STATE_DIR wins, then XDG_STATE_HOME, then ~/.local/state", () => {
  const env = { RA_STATE_DIR: "/a/state", XDG_STATE_HOME: "/xdg", HOME: "/home/owner" };
  assert.is(stateDirPath(env), "/a/state");
  assert.is(stateDirPath({ ...env, RA_STATE_DIR: undefined }), "/xdg/robot-army");
  assert.is(stateDirPath({ HOME: "/home/owner" }), "/home/owner/.local/state/robot-army");
  assert.is(stateDirPath({ RA_STATE_DIR: "", XDG_STATE_HOME: "", HOME: "/h" }), "/h/.local/state/robot-army");
});

test("a missing state dir is created private to its owner", () => {
  const tmp = makeTempDir();
  try {
    const dir = ensureStateDir({ XDG_STATE_HOME: join(tmp, "xdg") });
    assert.is(dir, join(tmp, "xdg", "robot-army"));
    assert.is(statSync(dir).mode & 0o777, 0o700);
  } finally {
    removeTempDir(tmp);
  }
});

test("an existing state dir keeps the mode its owner gave it", () => {
  const tmp = makeTempDir();
  try {
    const dir = join(tmp, "state");
    mkdirSync(dir);
    chmodSync(dir, 0o750);
    assert.is(ensureStateDir({ RA_STATE_DIR: dir }), dir);
    assert.is(statSync(dir).mode & 0o777, 0o750);
  } finally {
    removeTempDir(tmp);
  }
});

test("working out the path creates nothing", () => {
  const tmp = makeTempDir();
  try {
    stateDirPath({ RA_STATE_DIR: join(tmp, "nope") });
    assert.not.ok(existsSync(join(tmp, "nope")));
  } finally {
    removeTempDir(tmp);
  }
});

test("in a state dir of mode 0755 under umask 022, every file robot-army creates is 0600 and every folder 0700", async () => {
  const tmp = makeTempDir();
  const umask = process.umask(0o022);
  const before = process.env.RA_STATE_DIR;
  try {
    const state = join(tmp, "state");
    mkdirSync(state);
    chmodSync(state, 0o755);
    // The holder is a process of its own: it finds the spool through RA_STATE_DIR, and inherits the umask.
    process.env.RA_STATE_DIR = state;
    const env = { RA_STATE_DIR: state };
    const store = await openStore(state);
    try {
      appendAudit(store, { kind: "test.private", body: { note: "written" } });
      const lock = acquireDaemonLock(state, store);
      writeHeartbeat(state, { pid: process.pid, at: "2026-01-15T10:00:00Z", tick: 1, next_at: null, last_poll_at: null });
      const root = ensureSessionRoot(env);
      const record = await createSession(root, {
        command: "sh", args: ["-c", "echo some output; exit 3"], cwd: tmp, name: "ra-demo-9", tags: { ra_item: "9", keep: "true" },
      });
      await startDetached(root, record.id);
      await waitFor("the worker's exit, spooled", () => readRecord(root, record.id)?.exitedAt && spoolFiles(spoolDir(env)).length === 1);
      appendSessionEvent(root, record.id, "tag", { key: "seen" });
      // While the store is open, its -wal and -shm files are there too.
      const modes = modesUnder(state);
      lock.release();
      for (const name of ["robot-army.db", "robot-army.db-wal", "robot-army.db-shm", "daemon.lock", "heartbeat.json", "sessions/", "spool/"]) {
        assert.ok(name in modes || `${name.replace(/\/$/, "")}/` in modes, `${name} was made (${Object.keys(modes).join(", ")})`);
      }
      for (const suffix of [".json", ".events.jsonl", ".log"]) assert.ok(`sessions/${record.id}${suffix}` in modes, `the session's ${suffix}`);
      const spooled = `spool/${spoolFiles(spoolDir(env))[0]}`;
      assert.ok(spooled in modes, "the spooled exit");
      const wrong = Object.entries(modes).filter(([name, mode]) => mode !== (name.endsWith("/") ? 0o700 : 0o600));
      assert.equal(wrong.map(([name, mode]) => `${name} ${mode.toString(8)}`), []);
      assert.is(statSync(state).mode & 0o777, 0o755, "the state dir itself keeps its owner's mode (doctor flags it)");
    } finally {
      store.close();
    }
  } finally {
    process.umask(umask);
    if (before === undefined) delete process.env.RA_STATE_DIR;
    else process.env.RA_STATE_DIR = before;
    removeTempDir(tmp);
  }
});

/** Every file and folder (name ending in `/`) under `dir`, by relative path, with its mode. */
function modesUnder(dir: string): Record<string, number> {
  const found: Record<string, number> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const info = lstatSync(path);
      const key = relative(dir, path) + (info.isDirectory() ? "/" : "");
      found[key] = info.mode & 0o777;
      if (info.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return found;
}

test.run();
