/**
 * The store: one SQLite database, `<state dir>/robot-army.db`, opened by `openStore()` in
 * WAL mode with a busy timeout and foreign keys on, migrated forward to the code's
 * schema, with one transaction helper and a cache of prepared statements.
 *
 * node:sqlite is imported on first open, so commands that never touch the store do not
 * pay for it.
 */
import { chmodSync, existsSync, lstatSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { PreconditionError, RobotArmyError } from "../errors.ts";
import { ITEM_TAG, STORE_TAG } from "../sessions/worker-tags.ts";
import { makePrivateDir } from "../state-dir.ts";
import { MIGRATIONS, migrate } from "./migrations.ts";
import { checkStoreFile, damaged, storeError } from "./store-file.ts";

/** The database file's name inside the state dir. */
export const STORE_FILE = "robot-army.db";

/** How long a write waits for another process's write to finish before failing. */
export const BUSY_TIMEOUT_MS = 5000;

/** An open store: the database, its prepared statements and its transaction helper. */
export interface Store {
  readonly db: DatabaseSync;
  /** The database file. */
  readonly path: string;
  /** The prepared statement for `sql`, prepared on first use and reused after. */
  statement(sql: string): StatementSync;
  /**
   * Runs `fn` in `BEGIN IMMEDIATE` ... `COMMIT`, or `ROLLBACK` and rethrows when it
   * throws. `fn` must be synchronous. Called inside another transaction, it joins it.
   * @example store.transaction(() => { setState(store, item, "ready"); appendAudit(store, record); })
   */
  transaction<T>(fn: () => T): T;
  /**
   * Runs `fn` (synchronous) with the commits it makes written to the write-ahead log but not
   * synced to the disk: they outlive this process's crash, not the machine's (see `openAt`).
   * Only for a write whose loss with the machine is what recovery already handles; inside a
   * transaction it joins it, and the transaction's commit is synced.
   */
  unsynced<T>(fn: () => T): T;
  /** Whether a `transaction()` is running now. */
  readonly inTransaction: boolean;
  close(): void;
}

/** Where openStore looks before it gives a store file with no schema one. */
export interface OpenOptions {
  /**
   * The session root whose live workers an existing store without a schema would forget
   * (default: `$RA_SESSION_ROOT`, else `<state dir>/sessions`).
   */
  sessionRoot?: string;
  /**
   * Reads every page with SQLite's quick check before anything is written, and refuses a
   * damaged file. It costs 0.3 to 1 s on a 50 MB store (`npm run bench store`), so only
   * the commands that write at length (the daemon at start, `poll`) and `doctor` ask for
   * it; any other command meets damage as a SQLite error on the pages it reads, which
   * storeError names as the store's.
   */
  checkPages?: boolean;
  /**
   * The store this one is a copy of (its database file), for `run --dry-run`: the copy answers
   * to that path, so the sessions and tabs tagged with the real store are known as its own.
   */
  standsFor?: string;
}

/** The database file of a state dir. */
export function storePath(stateDir: string): string {
  return join(stateDir, STORE_FILE);
}

/**
 * Opens the store in `stateDir`, creating the dir (0700) and the database (0600) when
 * missing and migrating it forward. A database file that exists but holds no schema of ours (0
 * bytes, say) is refused while workers tagged `ra_item` still run from the session root:
 * made afresh, it would forget every item those workers work on. A path that cannot be the
 * store (a folder, a link to nothing, a file robot-army may not write, damaged pages, a
 * write-ahead log lost with writes in it) is a `StoreError` naming the file and what to do.
 */
export async function openStore(stateDir: string, options: OpenOptions = {}): Promise<Store> {
  makePrivateDir(stateDir);
  const path = storePath(stateDir);
  checkStoreFile(path, "write");
  return await openAt(path, options.sessionRoot ?? defaultSessionRoot(stateDir), options.checkPages === true, options.standsFor);
}

/**
 * Opens the store only if its database exists; a read-only command uses this so that
 * reading leaves no state dir or database behind. Something there that is no database (a
 * folder, a link to nothing) is refused as openStore refuses it, never taken for "no store".
 */
export async function openExistingStore(stateDir: string, options: OpenOptions = {}): Promise<Store | undefined> {
  const path = storePath(stateDir);
  if (!entryExists(path)) return undefined;
  checkStoreFile(path, "read");
  return await openAt(path, options.sessionRoot ?? defaultSessionRoot(stateDir), options.checkPages === true, options.standsFor);
}

/**
 * Runs `fn` with the store of `stateDir` (opened as openStore does) and closes it afterwards,
 * whether `fn` returns or throws. A SQLite failure of the store's own (read-only, damaged,
 * full) that `fn` meets is rethrown as the store's error, naming the file.
 * @example return await withStore(ensureStateDir(), (store) => run(opts, { store, write: writeStdout }));
 */
export async function withStore<T>(stateDir: string, fn: (store: Store) => T | Promise<T>, options: OpenOptions = {}): Promise<T> {
  const store = await openStore(stateDir, options);
  try {
    return await fn(store);
  } catch (error) {
    throw storeError(store.path, error);
  } finally {
    store.close();
  }
}

/** Like withStore, with the store only if its database exists (undefined otherwise): for commands that only read. */
export async function withExistingStore<T>(stateDir: string, fn: (store: Store | undefined) => T | Promise<T>, options: OpenOptions = {}): Promise<T> {
  const store = await openExistingStore(stateDir, options);
  try {
    return await fn(store);
  } catch (error) {
    throw store ? storeError(store.path, error) : error;
  } finally {
    store?.close();
  }
}

async function openAt(path: string, sessionRoot: string, checkPages: boolean, standsFor?: string): Promise<Store> {
  const { DatabaseSync } = await loadSqlite();
  const existed = existsSync(path);
  const db = new DatabaseSync(path);
  try {
    // A new database is its owner's alone, whatever the umask or the state dir's mode; it is
    // still empty here, and SQLite gives the -wal and -shm files it makes next the database's mode.
    if (!existed) chmodSync(path, 0o600);
    // The busy timeout comes first: switching to WAL may itself wait for a lock.
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Before anything writes to it: a file that is there but empty may be a store that lost its contents.
    if (existed && holdsNoSchema(db)) await refuseWhileWorkersRun(path, sessionRoot);
    // Asked for: damaged pages are found now, before anything is written, not by whichever query meets them first.
    if (existed && checkPages) refuseDamaged(db, path);
    db.exec("PRAGMA journal_mode = WAL");
    // Every commit is synced to the disk before it returns (FULL), so it survives a power cut
    // or a crash of the machine: an audit intent must be on disk before its effect reaches the
    // world (DESIGN rule 3), and the owner's pause, holds and approvals must outlive a reboot.
    // WAL with NORMAL skips that sync: a commit is then in the system's cache, safe from a
    // crash of this process (the crash suite's SIGKILLs cannot tell the two apart) but not of
    // the machine. So NORMAL is used only for the writes `unsynced` names, whose loss with the
    // machine recovery already handles; and since the log is synced whole, every later synced
    // commit carries them to the disk too.
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
    migrate(db, path);
  } catch (error) {
    db.close();
    if (error instanceof RobotArmyError) throw error;
    const known = storeError(path, error);
    if (known instanceof RobotArmyError) throw known;
    // A file that is not a robot-army database (or not a database at all) is named, not dumped as a stack.
    throw new PreconditionError(`Cannot open the store "${path}": ${(error as Error).message}`);
  }
  return makeStore(db, standsFor ?? path);
}

/**
 * Copies the store of `stateDir` whole, as one consistent snapshot (`VACUUM INTO`), to a new
 * database file at `to`, while any daemon goes on writing to it; false when there is no store.
 * The store itself is only read.
 */
export async function copyStore(stateDir: string, to: string): Promise<boolean> {
  const path = storePath(stateDir);
  if (!entryExists(path)) return false;
  checkStoreFile(path, "read");
  const { DatabaseSync } = await loadSqlite();
  // Read-only: closing a read-write connection could fold a write-ahead log left there into the file.
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.prepare("VACUUM INTO ?").run(to);
  } catch (error) {
    throw storeError(path, error);
  } finally {
    db.close();
  }
  return true;
}

/** Refuses a database whose pages SQLite's quick check finds damaged. */
function refuseDamaged(db: DatabaseSync, path: string): void {
  const rows = db.prepare("PRAGMA quick_check(1)").all().map((row) => String(Object.values(row)[0]));
  if (rows.length === 1 && rows[0] === "ok") return;
  // SQLite's report spans lines; the refusal is one.
  const report = rows.join("; ").replace(/\*\*\* in database main \*\*\*\s*/g, "").replace(/\s*\n\s*/g, "; ");
  throw damaged(path, report.length > 160 ? `${report.slice(0, 157)}...` : report);
}

/** Whether anything (a dangling link too) is at `path`. */
function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function defaultSessionRoot(stateDir: string): string {
  return process.env.RA_SESSION_ROOT ? resolve(process.env.RA_SESSION_ROOT) : join(stateDir, "sessions");
}

/** The tables our migrations create. */
const OUR_TABLES = MIGRATIONS.flatMap((m) => [...m.sql.matchAll(/CREATE TABLE (\w+)/g)].map((match) => match[1]));

/** Whether a database has none of our migrations applied and none of our tables. */
function holdsNoSchema(db: DatabaseSync): boolean {
  const version = (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (version !== 0) return false;
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => String(row.name));
  return !tables.some((name) => OUR_TABLES.includes(name));
}

/**
 * Refuses to start a store afresh while the session root holds workers of it that run, or
 * may run (one that cannot be checked counts: unknown is never dead). Loaded only on this
 * rare path, so opening a store does not pay for the session modules.
 */
async function refuseWhileWorkersRun(path: string, sessionRoot: string): Promise<void> {
  const { scanRecords } = await import("../sessions/records.ts");
  const { workerRuns } = await import("../sessions/state.ts");
  let scanned: ReturnType<typeof scanRecords>;
  try {
    scanned = scanRecords(sessionRoot);
  } catch (error) {
    throw new PreconditionError(`Store "${path}" holds no schema and the session root "${sessionRoot}" cannot be read (${(error as Error).message}), so whether workers of a lost store still run is unknown: it is not started afresh`);
  }
  const workers = scanned.records.filter((record) => {
    const tags = record.tags ?? {};
    if (tags[ITEM_TAG] === undefined) return false;
    if (tags[STORE_TAG] !== undefined && !maybeSameFile(tags[STORE_TAG], path)) return false;
    return workerRuns(sessionRoot, record) !== false;
  });
  const why = [
    ...workers.map((record) => `"${record.name}" (${ITEM_TAG}=${record.tags[ITEM_TAG]})`),
    ...scanned.unreadable.map((entry) => `the unreadable record "${entry.file}"`),
  ];
  if (why.length === 0) return;
  const size = sizeOf(path);
  throw new PreconditionError(
    `Store "${path}" exists but holds no schema${size === 0 ? " (0 bytes)" : ""}, while ${why.length} worker session(s) of it may still run: ${why.slice(0, 5).join(", ")}${why.length > 5 ? `, and ${why.length - 5} more` : ""}. ` +
      `Starting afresh would forget the items they work on. Restore "${path}" from a backup; or, to start afresh, stop the daemon, move the file aside, ` +
      `then stop those workers ("robot-army session ls", "robot-army session kill <name>") before anything polls again`,
  );
}

/** Whether two paths may name one file: false only when they name two files, or one names none. */
function maybeSameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function makeStore(db: DatabaseSync, path: string): Store {
  const statements = new Map<string, StatementSync>();
  let depth = 0;
  return {
    db,
    path,
    statement(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    transaction(fn) {
      if (depth > 0) return fn();
      db.exec("BEGIN IMMEDIATE");
      depth++;
      try {
        const result = fn();
        if (result instanceof Promise) {
          // An await inside would let other writes interleave with this transaction.
          throw new TypeError("A store transaction must be synchronous, got a function returning a promise");
        }
        db.exec("COMMIT");
        return result;
      } catch (error) {
        // SQLite may already have rolled back (a full disk, say); the first error is the story.
        if (db.isOpen && db.isTransaction) db.exec("ROLLBACK");
        throw error;
      } finally {
        depth--;
      }
    },
    unsynced(fn) {
      if (depth > 0) return fn();
      db.exec("PRAGMA synchronous = NORMAL");
      try {
        return fn();
      } finally {
        if (db.isOpen) db.exec("PRAGMA synchronous = FULL");
      }
    },
    get inTransaction() {
      return depth > 0;
    },
    close() {
      statements.clear();
      if (db.isOpen) db.close();
    },
  };
}

let sqlite: Promise<typeof import("node:sqlite")> | undefined;

/** node:sqlite, imported once, without the ExperimentalWarning some Node versions print. */
function loadSqlite(): Promise<typeof import("node:sqlite")> {
  sqlite ??= importWithoutSqliteWarning();
  return sqlite;
}

async function importWithoutSqliteWarning(): Promise<typeof import("node:sqlite")> {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning: string | Error, ...rest: unknown[]): void {
    const text = typeof warning === "string" ? warning : warning.message;
    if (/sqlite/i.test(text)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return await import("node:sqlite");
  } finally {
    process.emitWarning = emitWarning;
  }
}
