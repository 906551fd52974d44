import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PreconditionError } from "../errors.ts";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { runtimeArgv } from "../runtime.ts";
import { MIGRATIONS, migrate, schemaVersion } from "./migrations.ts";
import type { Migration } from "./migrations.ts";
import { openExistingStore, openStore, storePath, withExistingStore, withStore as withStoreOf } from "./open.ts";
import { StoreError } from "./store-file.ts";
import { makeReadOnly } from "../testing/read-only.ts";
import type { Store } from "./open.ts";
import { listRecords } from "../sessions/records.ts";
import { stopSession } from "../sessions/stop.ts";
import { inSessionDir, rejection, trackSessionProcesses } from "../testing/sessions.ts";

const processes = trackSessionProcesses(test, { childrenBy: "group" });

async function withStore(fn: (store: Store, dir: string) => void | Promise<void>): Promise<void> {
  const dir = makeTempDir();
  const store = await openStore(join(dir, "state"));
  try {
    await fn(store, join(dir, "state"));
  } finally {
    store.close();
    removeTempDir(dir);
  }
}

function pragma(store: Store, name: string): unknown {
  return Object.values({ ...store.db.prepare(`PRAGMA ${name}`).get() })[0];
}

test("opening creates the state dir (0700) and a WAL database with busy timeout and foreign keys", async () => {
  await withStore((store, stateDir) => {
    assert.is(store.path, storePath(stateDir));
    assert.ok(existsSync(store.path));
    assert.is(statSync(stateDir).mode & 0o777, 0o700);
    assert.is(pragma(store, "journal_mode"), "wal");
    assert.is(pragma(store, "busy_timeout"), 5000);
    assert.is(pragma(store, "foreign_keys"), 1);
    assert.is(schemaVersion(store.db), MIGRATIONS.length);
  });
});

test("every commit is synced to the disk (synchronous FULL), but those unsynced() makes: there it is NORMAL, and FULL again after, even when it throws", async () => {
  await withStore((store) => {
    assert.is(pragma(store, "synchronous"), 2);
    assert.is(store.unsynced(() => pragma(store, "synchronous")), 1);
    assert.is(pragma(store, "synchronous"), 2);
    assert.throws(() => store.unsynced(() => { throw new Error("boom"); }), /boom/);
    assert.is(pragma(store, "synchronous"), 2);
    assert.is(store.transaction(() => store.unsynced(() => pragma(store, "synchronous"))), 2, "inside a transaction it joins it, and the transaction's commit is synced");
  });
});

test("every table is STRICT", async () => {
  await withStore((store) => {
    const tables = store.db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table'").all();
    assert.ok(tables.length > 0);
    for (const table of tables) assert.match(String(table.sql), /\)\s*STRICT\s*$/, String(table.name));
  });
});

test("migrations are idempotent on reopen", async () => {
  const dir = makeTempDir();
  try {
    const first = await openStore(dir);
    first.db.exec("INSERT INTO audit (at, kind, phase) VALUES ('2026-01-15T10:00:00Z', 'test.kept', 'fact')");
    first.close();
    const second = await openStore(dir);
    assert.is(schemaVersion(second.db), MIGRATIONS.length);
    assert.equal({ ...second.db.prepare("SELECT count(*) AS n FROM audit").get() }, { n: 1 });
    second.close();
  } finally {
    removeTempDir(dir);
  }
});

test("migrations run forward from the database's version, each once", async () => {
  const dir = makeTempDir();
  try {
    const store = await openStore(dir);
    const steps: Migration[] = [
      ...MIGRATIONS,
      { name: "a", sql: "CREATE TABLE extra_a (id INTEGER PRIMARY KEY) STRICT" },
      { name: "b", sql: "CREATE TABLE extra_b (id INTEGER PRIMARY KEY) STRICT" },
    ];
    migrate(store.db, store.path, steps.slice(0, -1));
    assert.is(schemaVersion(store.db), MIGRATIONS.length + 1);
    migrate(store.db, store.path, steps);
    migrate(store.db, store.path, steps);
    assert.is(schemaVersion(store.db), MIGRATIONS.length + 2);
    store.close();
  } finally {
    removeTempDir(dir);
  }
});

test("a failing migration leaves the database at its old version", async () => {
  await withStore((store) => {
    const steps = [...MIGRATIONS, { name: "ok", sql: "CREATE TABLE fine (id INTEGER PRIMARY KEY) STRICT" }, { name: "bad", sql: "CREATE TABLE" }];
    assert.throws(() => migrate(store.db, store.path, steps));
    assert.is(schemaVersion(store.db), MIGRATIONS.length);
    assert.is(store.db.prepare("SELECT name FROM sqlite_schema WHERE name = 'fine'").get(), undefined);
  });
});

test("a database newer than the code is refused, naming both versions", async () => {
  const dir = makeTempDir();
  try {
    const store = await openStore(dir);
    store.db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 5}`);
    store.close();
    try {
      await openStore(dir);
      assert.unreachable("opened a newer database");
    } catch (error) {
      assert.instance(error, PreconditionError);
      assert.match((error as Error).message, `has schema version ${MIGRATIONS.length + 5}, newer than this robot-army knows (${MIGRATIONS.length})`);
    }
  } finally {
    removeTempDir(dir);
  }
});

test("openExistingStore creates nothing when there is no database", async () => {
  const dir = makeTempDir();
  try {
    assert.is(await openExistingStore(join(dir, "state")), undefined);
    assert.not.ok(existsSync(join(dir, "state")));
    (await openStore(join(dir, "state"))).close();
    const store = await openExistingStore(join(dir, "state"));
    assert.ok(store);
    store.close();
  } finally {
    removeTempDir(dir);
  }
});

test("a statement is prepared once and reused", async () => {
  await withStore((store) => {
    const sql = "SELECT count(*) AS n FROM audit";
    assert.is(store.statement(sql), store.statement(sql));
  });
});

test("a transaction commits what its function wrote", async () => {
  await withStore((store) => {
    const id = store.transaction(() => {
      assert.ok(store.inTransaction);
      return store.statement("INSERT INTO audit (at, kind, phase) VALUES ('2026-01-15T10:00:00Z', 'test.one', 'fact') RETURNING id").get()?.id;
    });
    assert.is(id, 1);
    assert.not.ok(store.inTransaction);
    assert.is(store.db.isTransaction, false);
  });
});

test("a transaction rolls back everything when its function throws, and rethrows", async () => {
  await withStore((store) => {
    const insert = "INSERT INTO audit (at, kind, phase) VALUES ('2026-01-15T10:00:00Z', 'test.gone', 'fact')";
    assert.throws(
      () =>
        store.transaction(() => {
          store.statement(insert).run();
          store.transaction(() => store.statement(insert).run()); // nested: joins the outer one
          throw new Error("half way");
        }),
      /half way/,
    );
    assert.equal({ ...store.db.prepare("SELECT count(*) AS n FROM audit").get() }, { n: 0 });
    assert.is(store.db.isTransaction, false);
  });
});

test("a transaction refuses an async function and rolls back what it began", async () => {
  await withStore((store) => {
    assert.throws(() => store.transaction(async () => {}), /must be synchronous/);
    assert.is(store.db.isTransaction, false);
  });
});

test("opening the store prints no warning on this runtime", async () => {
  const dir = makeTempDir();
  try {
    const script = join(dir, "open.mjs");
    writeFileSync(script, `
      const { openStore } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, "open.ts")).href)});
      (await openStore(process.argv[2])).close();
      console.log("opened");
    `);
    const result = spawnSync(runtimeArgv(script)[0], [...runtimeArgv(script).slice(1), join(dir, "state")], { encoding: "utf8" });
    assert.is(result.stderr, "");
    assert.is(result.stdout.trim(), "opened");
  } finally {
    removeTempDir(dir);
  }
});

test("a state dir whose database file is not a database is a precondition error naming it, not a stack trace", async () => {
  const dir = makeTempDir();
  try {
    writeFileSync(join(dir, "robot-army.db"), "this is not a database, it is a note someone left here\n".repeat(20));
    try {
      await openStore(dir);
      assert.unreachable("opened");
    } catch (error) {
      assert.instance(error, PreconditionError);
      assert.match((error as Error).message, `Store "${join(dir, "robot-army.db")}" is damaged (file is not a database)`);
    }
  } finally {
    removeTempDir(dir);
  }
});

test("a 0-byte store is not started afresh while a worker tagged ra_item runs: the file is named with what to do, and left as it was", inSessionDir(async ({ root, state, work }) => {
  mkdirSync(state, { mode: 0o700 });
  const path = storePath(state);
  writeFileSync(path, "");
  const { record } = await processes.start(root, { command: "sh", args: ["-c", "sleep 30"], cwd: work, name: "ra-widgets-1", tags: { ra_item: "1" } });
  const error = await rejection(openStore(state, { sessionRoot: root }));
  assert.instance(error, PreconditionError);
  assert.match(error.message, `Store "${path}" exists but holds no schema (0 bytes)`);
  assert.match(error.message, '"ra-widgets-1" (ra_item=1)');
  assert.match(error.message, `Restore "${path}" from a backup`);
  assert.match(error.message, "to start afresh, stop the daemon, move the file aside, then stop those workers");
  assert.is(statSync(path).size, 0, "nothing was written into it");
  // A reader would give it a schema just the same, and the next poll would find it empty: readers refuse too.
  assert.instance(await rejection(openExistingStore(state, { sessionRoot: root })), PreconditionError);
  // The commands name no session root: they find it as the session commands do.
  const before = process.env.RA_SESSION_ROOT;
  process.env.RA_SESSION_ROOT = root;
  try {
    assert.instance(await rejection(openStore(state)), PreconditionError);
  } finally {
    if (before === undefined) delete process.env.RA_SESSION_ROOT;
    else process.env.RA_SESSION_ROOT = before;
  }
  // Once the worker is stopped, the empty file may become a new store.
  assert.is(await stopSession(root, record, { graceMs: 2_000 }), "stopped");
  const store = await openStore(state, { sessionRoot: root });
  assert.is(schemaVersion(store.db), MIGRATIONS.length);
  store.close();
}));

test("a SQLite file with no table of ours is refused like an empty one; a worker of another store, or one that is not a worker, does not hold it back", inSessionDir(async ({ root, state, work }) => {
  mkdirSync(state, { mode: 0o700 });
  const path = storePath(state);
  const { DatabaseSync } = await import("node:sqlite");
  const foreign = new DatabaseSync(path);
  foreign.exec("CREATE TABLE notes (text TEXT)");
  foreign.close();
  const { record } = await processes.start(root, { command: "sh", args: ["-c", "sleep 30"], cwd: work, tags: { ra_item: "1" } });
  const error = await rejection(openStore(state, { sessionRoot: root }));
  assert.instance(error, PreconditionError);
  assert.match(error.message, "exists but holds no schema, while 1 worker session(s)");
  await stopSession(root, record, { graceMs: 2_000 });
  // Tagged with this store by another path to it: still this store's worker.
  const link = join(work, "state-link");
  symlinkSync(state, link);
  const linked = await processes.start(root, { command: "sh", args: ["-c", "sleep 30"], cwd: work, tags: { ra_item: "2", ra_store: join(link, "robot-army.db") } });
  assert.match((await rejection(openStore(state, { sessionRoot: root }))).message, "(ra_item=2)");
  await stopSession(root, linked.record, { graceMs: 2_000 });
  await processes.start(root, { command: "sh", args: ["-c", "sleep 30"], cwd: work, tags: { ra_item: "1", ra_store: join(state, "other.db") } });
  await processes.start(root, { command: "sh", args: ["-c", "sleep 30"], cwd: work });
  const store = await openStore(state, { sessionRoot: root });
  assert.is(schemaVersion(store.db), MIGRATIONS.length);
  store.close();
  for (const left of listRecords(root)) await stopSession(root, left, { graceMs: 2_000 });
}));

/** A state dir in a fresh temp dir, given to `fn` and removed afterwards. */
async function inStateDir(fn: (state: string, dir: string) => void | Promise<void>): Promise<void> {
  const dir = makeTempDir();
  try {
    await fn(join(dir, "state"), dir);
  } finally {
    removeTempDir(dir);
  }
}

/** A store in `state` with `rows` audit records written and closed. */
async function storeWithRows(state: string, rows: number): Promise<string> {
  const store = await openStore(state);
  store.transaction(() => {
    const insert = store.statement("INSERT INTO audit (at, kind, phase, body) VALUES ('2026-01-15T10:00:00Z', 'test.row', 'fact', ?)");
    for (let i = 0; i < rows; i++) insert.run(JSON.stringify({ text: "x".repeat(200), i }));
  });
  store.close();
  return storePath(state);
}

async function storeRefusal(open: Promise<unknown>, fragment: string): Promise<StoreError> {
  const error = await rejection(open);
  assert.instance(error, StoreError);
  assert.match(error.message, fragment);
  return error as StoreError;
}

test("a store path that is a directory is refused in one line naming it, by writers and readers alike", () => inStateDir(async (state) => {
  mkdirSync(storePath(state), { recursive: true });
  for (const open of [() => openStore(state), () => openExistingStore(state)]) {
    await storeRefusal(open(), `Store "${storePath(state)}" is a directory, not a database file: move it aside`);
  }
}));

test("a store that is a dangling symbolic link is refused, never taken for no store, and its target is not created", () => inStateDir(async (state, dir) => {
  mkdirSync(state, { recursive: true });
  symlinkSync(join(dir, "gone.db"), storePath(state));
  for (const open of [() => openExistingStore(state), () => openStore(state)]) {
    await storeRefusal(open(), `Store "${storePath(state)}" is a symbolic link to "${join(dir, "gone.db")}", which does not exist`);
  }
  assert.not.ok(existsSync(join(dir, "gone.db")));
}));

test("a store with a damaged page is refused at an open that checks pages, naming the file, before anything is written", () => inStateDir(async (state) => {
  const path = await storeWithRows(state, 500);
  const before = statSync(path).mtimeMs;
  const fd = openSync(path, "r+");
  writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 4096 * 4);
  closeSync(fd);
  for (const open of [() => openStore(state, { checkPages: true }), () => openExistingStore(state, { checkPages: true })]) {
    await storeRefusal(open(), `Store "${path}" is damaged (`);
  }
  assert.ok(statSync(path).mtimeMs >= before);
  // Without the check (every command but the daemon and doctor), the open does not read every page.
  (await openExistingStore(state))!.close();
}));

test("a read-only store is refused by a command that writes, in one line, and still read by one that only reads", () => inStateDir(async (state) => {
  const path = await storeWithRows(state, 3);
  const undo = makeReadOnly(path);
  try {
    await storeRefusal(openStore(state), `Store "${path}" is read-only: robot-army writes to it`);
    const store = await openExistingStore(state);
    assert.equal({ ...store!.db.prepare("SELECT count(*) AS n FROM audit").get() }, { n: 3 });
    store!.close();
  } finally {
    undo();
  }
}));

test("a store in a read-only folder, its write-ahead log not there to open, is one line naming the file", () => inStateDir(async (state) => {
  await storeWithRows(state, 1);
  const undo = makeReadOnly(state);
  try {
    // SQLite says "unable to open database file" (an immutable folder) or "attempt to write a readonly database" (a mode without w).
    const error = await storeRefusal(openExistingStore(state), `Store "${storePath(state)}" `);
    assert.match(error.message, /^Store "[^"]+" (cannot be opened \(unable to open database file\)|is read-only \(attempt to write a readonly database\))/);
    assert.not.match(error.message, "\n");
  } finally {
    undo();
  }
}));

test("a SQLite failure of the store met inside withStore is the store's error, naming the file", () => inStateDir(async (state) => {
  (await openStore(state)).close();
  for (const withIt of [withStoreOf, withExistingStore]) {
    const error = await rejection(withIt(state, (store) => {
      store!.db.exec("PRAGMA query_only = ON");
      store!.db.exec("INSERT INTO audit (at, kind, phase) VALUES ('2026-01-15T10:00:00Z', 'test.row', 'fact')");
    }));
    assert.instance(error, StoreError);
    assert.match(error.message, `Store "${storePath(state)}" is read-only (attempt to write a readonly database)`);
  }
}));

test("a write-ahead log deleted after a crash, with writes in it, is refused instead of dropping them; put back, they are there", () => inStateDir(async (state, dir) => {
  (await openStore(state)).close();
  const script = join(dir, "crash.mjs");
  writeFileSync(script, `
    const { openStore } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, "open.ts")).href)});
    const store = await openStore(process.argv[2]);
    store.db.exec("INSERT INTO audit (at, kind, phase) VALUES ('2026-01-15T10:00:00Z', 'test.kept', 'fact')");
    process.kill(process.pid, "SIGKILL");
  `);
  const [bin, ...args] = runtimeArgv(script);
  const crashed = spawnSync(bin, [...args, state], { encoding: "utf8" });
  assert.is(crashed.signal, "SIGKILL", crashed.stderr);
  const path = storePath(state);
  const wal = `${dir}/kept-wal`;
  spawnSync("mv", [`${path}-wal`, wal]);
  for (const open of [() => openStore(state), () => openExistingStore(state)]) {
    await storeRefusal(open(), `Store "${path}" has lost its write-ahead log: "${path}-shm" says `);
  }
  assert.ok(existsSync(`${path}-shm`), "the index that tells of the loss is left as it was");
  spawnSync("mv", [wal, `${path}-wal`]);
  const store = await openStore(state);
  assert.equal({ ...store.db.prepare("SELECT count(*) AS n FROM audit WHERE kind = 'test.kept'").get() }, { n: 1 });
  store.close();
}));

test("a write-ahead log gone after a clean close loses nothing and opens", () => inStateDir(async (state) => {
  const path = await storeWithRows(state, 2);
  rmSync(`${path}-wal`, { force: true });
  const store = await openStore(state);
  assert.equal({ ...store.db.prepare("SELECT count(*) AS n FROM audit").get() }, { n: 2 });
  store.close();
}));

test("no test left a session process running", () => {
  assert.equal(processes.leaked, []);
});

test.run();
