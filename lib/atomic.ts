/**
 * File writes that a crash cannot leave half-done: a whole file appears at once (temp
 * file + rename), an exclusive create fails when the name is taken, and a log line is one
 * append. With `{ private: true }` (everything in the state dir), a file this creates is
 * 0600 and a folder 0700, whatever the mode of the folder it lands in.
 */
import { appendFileSync, closeSync, fstatSync, linkSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** How a file is written: `private` makes what is created readable by its owner only. */
export interface WriteOptions {
  private?: boolean;
}

function modes(options: WriteOptions): { file?: number; dir?: number } {
  return options.private ? { file: 0o600, dir: 0o700 } : {};
}

/**
 * A fresh temp name in the file's folder, with at most the first 40 characters of the file's
 * name: a name the file system accepts for the file is never refused for its temp.
 */
function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path).slice(0, 40)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
}

/** Writes a whole file atomically, replacing what was there. */
export function writeFileAtomic(path: string, content: string, options: WriteOptions = {}): void {
  const mode = modes(options);
  mkdirSync(dirname(path), { recursive: true, mode: mode.dir });
  const temp = tempBeside(path);
  try {
    // Inside the try: a write cut short (a full disk) leaves no part-written temp behind.
    writeFileSync(temp, content, { mode: mode.file });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Creates a whole file atomically only if nothing has that name yet; returns false when
 * it exists. A hard link is atomic and refuses to replace, which rename does not.
 */
export function createFileExclusive(path: string, content: string, options: WriteOptions = {}): boolean {
  const mode = modes(options);
  mkdirSync(dirname(path), { recursive: true, mode: mode.dir });
  const temp = tempBeside(path);
  try {
    writeFileSync(temp, content, { mode: mode.file });
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Appends one line in a single write, so concurrent writers never interleave within it.
 * After a line cut short by a crash, the new line starts on a line of its own.
 */
export function appendLine(path: string, line: string, options: WriteOptions = {}): void {
  const mode = modes(options);
  mkdirSync(dirname(path), { recursive: true, mode: mode.dir });
  const separator = endsMidLine(path) ? "\n" : "";
  appendFileSync(path, separator + line.replace(/\n/g, " ") + "\n", { mode: mode.file });
}

function endsMidLine(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    closeSync(fd);
  }
}
