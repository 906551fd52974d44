/**
 * What can be wrong with the store's file, found before SQLite opens it or told from what
 * SQLite answers: a folder or a dangling link where the file should be, a file robot-army
 * may not write, damaged pages, a write-ahead log gone while its index says it held
 * committed writes. Each becomes one `StoreError` naming the file and what to do.
 */
import { closeSync, lstatSync, openSync, readlinkSync, readSync, statSync } from "node:fs";
import type { Stats } from "node:fs";
import { PreconditionError, RobotArmyError } from "../errors.ts";

/** The store cannot be used as it is; the message names the file and what to do. */
export class StoreError extends PreconditionError {
  /** The database file. */
  path: string;
  constructor(path: string, message: string) {
    super(message);
    this.name = "StoreError";
    this.path = path;
  }
}

/** SQLite's primary result codes this module explains (an extended code's low byte is its primary). */
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/**
 * Refuses a store path that cannot be a database file: a folder, a link to nothing, or
 * (for a command that writes) a file robot-army may not write. A path with nothing there
 * passes: the store is made new.
 */
export function checkStoreFile(path: string, access: "read" | "write"): void {
  const entry = lstatOrUndefined(path);
  if (!entry) return;
  let target: Stats | undefined = entry;
  if (entry.isSymbolicLink()) {
    target = statOrUndefined(path);
    if (!target) {
      throw new StoreError(path, `Store "${path}" is a symbolic link to "${linkTarget(path)}", which does not exist: restore the file it points to, or remove the link to start a new store`);
    }
  }
  if (target.isDirectory()) {
    throw new StoreError(path, `Store "${path}" is a directory, not a database file: move it aside, or set RA_STATE_DIR to another state dir`);
  }
  if (!target.isFile()) {
    throw new StoreError(path, `Store "${path}" is not a regular file: move it aside, or set RA_STATE_DIR to another state dir`);
  }
  if (access === "write") refuseUnwritable(path);
  refuseLostWal(path);
}

/**
 * The store's own error for a SQLite failure (read-only, damaged, full, unreadable), or the
 * error itself when it is no such failure.
 */
export function storeError(path: string, error: unknown): unknown {
  if (error instanceof RobotArmyError) return error;
  const code = sqliteCode(error);
  if (code === undefined) return error;
  const said = (error as Error).message;
  switch (code) {
    case SQLITE_READONLY:
      return new StoreError(path, `Store "${path}" is read-only (${said}): robot-army writes to it; give its owner write access to it and its folder, or run as the user who owns it`);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return damaged(path, said);
    case SQLITE_FULL:
      return new StoreError(path, `Store "${path}" cannot be written: the disk is full (${said}); free some space and run again`);
    case SQLITE_CANTOPEN:
      return new StoreError(path, `Store "${path}" cannot be opened (${said}): SQLite needs to read it and to create "${path}-wal" and "${path}-shm" beside it; check that its folder is readable and writable`);
    case SQLITE_IOERR:
      return new StoreError(path, `Store "${path}" could not be read or written (${said}): check the disk and the file's permissions`);
    default:
      return error;
  }
}

/** The refusal for a store whose pages are damaged. */
export function damaged(path: string, problem: string): StoreError {
  return new StoreError(
    path,
    `Store "${path}" is damaged (${problem}): stop the daemon and restore it from a backup (sqlite3 "${path}" ".recover" may save its rows); nothing was written to it`,
  );
}

/** SQLite's own words for the codes above, for an error that carries no `errcode` (Deno's `exec` throws such). */
const CODE_OF_MESSAGE: Record<string, number> = {
  "attempt to write a readonly database": SQLITE_READONLY,
  "disk I/O error": SQLITE_IOERR,
  "database disk image is malformed": SQLITE_CORRUPT,
  "database or disk is full": SQLITE_FULL,
  "unable to open database file": SQLITE_CANTOPEN,
  "file is not a database": SQLITE_NOTADB,
};

/** SQLite's primary result code of an error thrown by node:sqlite, if it is one. */
function sqliteCode(error: unknown): number | undefined {
  const { errcode, code, message } = (error ?? {}) as { errcode?: unknown; code?: unknown; message?: unknown };
  if (typeof errcode === "number") return errcode & 0xff;
  if (code !== "ERR_SQLITE_ERROR" || typeof message !== "string") return undefined;
  return CODE_OF_MESSAGE[message];
}

function refuseUnwritable(path: string): void {
  // Opening for writing (and writing nothing) asks the system itself, so a read-only
  // mount, an immutable file and a mode without write access are all found, for root too.
  let fd: number;
  try {
    fd = openSync(path, "r+");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") {
      throw new StoreError(path, `Store "${path}" is read-only: robot-army writes to it; give its owner write access (chmod u+w "${path}"), or run as the user who owns it`);
    }
    throw new StoreError(path, `Store "${path}" cannot be opened (${(error as Error).message})`);
  }
  closeSync(fd);
}

/**
 * Refuses a store whose write-ahead log is gone while its index (`-shm`) says the log held
 * committed writes not yet copied into the database: SQLite would open the database
 * without them and say nothing. An index with every frame copied back loses nothing.
 */
function refuseLostWal(path: string): void {
  if (lstatOrUndefined(`${path}-wal`)) return;
  const index = readWalIndex(`${path}-shm`);
  if (!index || index.maxFrame <= index.backfilled) return;
  throw new StoreError(
    path,
    `Store "${path}" has lost its write-ahead log: "${path}-shm" says committed writes are in "${path}-wal", which is gone, ` +
      `and opening the store would drop them without a word: put "${path}-wal" back; or, to accept the loss, delete "${path}-shm" and run again`,
  );
}

/** The two counts of a WAL index header that tell whether the log held unsaved frames, or undefined when there is none. */
function readWalIndex(shm: string): { maxFrame: number; backfilled: number } | undefined {
  let fd: number;
  try {
    fd = openSync(shm, "r");
  } catch {
    return undefined;
  }
  try {
    // The wal-index header (sqlite.org/walformat.html): mxFrame at byte 16, and the
    // checkpoint info's nBackfill at byte 96, in the machine's own byte order.
    const header = Buffer.alloc(100);
    if (readSync(fd, header, 0, 100, 0) < 100) return undefined;
    const version = header.readUInt32LE(0) === 3007000 ? "LE" : header.readUInt32BE(0) === 3007000 ? "BE" : undefined;
    if (!version) return undefined;
    const read = (at: number) => (version === "LE" ? header.readUInt32LE(at) : header.readUInt32BE(at));
    return { maxFrame: read(16), backfilled: read(96) };
  } finally {
    closeSync(fd);
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function linkTarget(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "?";
  }
}
