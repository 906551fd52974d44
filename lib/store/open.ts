/**
 * The store: one SQLite database, `<state dir>/robot-army.db`, opened by `openStore()` in
 * WAL mode with a busy timeout and foreign keys on, migrated forward to the code's
 * schema, with one transaction helper and a cache of prepared statements.
 *
 * node:sqlite is imported on first open, so commands that never touch the store do not
 * pay for it.
 */
import { chmodSync, existsSync } from "node:fs";
import { join } from "node:path";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { PreconditionError, RobotArmyError } from "../errors.ts";
import { makePrivateDir } from "../state-dir.ts";
import { migrate } from "./migrations.ts";

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
  /** Whether a `transaction()` is running now. */
  readonly inTransaction: boolean;
  close(): void;
}

/** The database file of a state dir. */
export function storePath(stateDir: string): string {
  return join(stateDir, STORE_FILE);
}

/**
 * Opens the store in `stateDir`, creating the dir (0700) and the database (0600) when
 * missing and migrating it forward.
 */
export async function openStore(stateDir: string): Promise<Store> {
  makePrivateDir(stateDir);
  const path = storePath(stateDir);
  return await openAt(path, { fresh: !existsSync(path) });
}

/**
 * Opens the store only if its database exists; a read-only command uses this so that
 * reading leaves no state dir or database behind.
 */
export async function openExistingStore(stateDir: string): Promise<Store | undefined> {
  const path = storePath(stateDir);
  if (!existsSync(path)) return undefined;
  return await openAt(path);
}

/**
 * Runs `fn` with the store of `stateDir` (opened as openStore does) and closes it afterwards,
 * whether `fn` returns or throws.
 * @example return await withStore(ensureStateDir(), (store) => run(opts, { store, write: writeStdout }));
 */
export async function withStore<T>(stateDir: string, fn: (store: Store) => T | Promise<T>): Promise<T> {
  const store = await openStore(stateDir);
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}

/** Like withStore, with the store only if its database exists (undefined otherwise): for commands that only read. */
export async function withExistingStore<T>(stateDir: string, fn: (store: Store | undefined) => T | Promise<T>): Promise<T> {
  const store = await openExistingStore(stateDir);
  try {
    return await fn(store);
  } finally {
    store?.close();
  }
}

async function openAt(path: string, options: { fresh?: boolean } = {}): Promise<Store> {
  const { DatabaseSync } = await loadSqlite();
  const db = new DatabaseSync(path);
  try {
    // A new database is its owner's alone, whatever the umask or the state dir's mode; it is
    // still empty here, and SQLite gives the -wal and -shm files it makes next the database's mode.
    if (options.fresh) chmodSync(path, 0o600);
    // The busy timeout comes first: switching to WAL may itself wait for a lock.
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA foreign_keys = ON");
    migrate(db, path);
  } catch (error) {
    db.close();
    if (error instanceof RobotArmyError) throw error;
    // A file that is not a robot-army database (or not a database at all) is named, not dumped as a stack.
    throw new PreconditionError(`Cannot open the store "${path}": ${(error as Error).message}`);
  }
  return makeStore(db, path);
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
