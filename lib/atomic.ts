/**
 * File writes that a crash cannot leave half-done: a whole file appears at once (temp
 * file + rename), an exclusive create fails when the name is taken, and a log line is one
 * append.
 */
import { appendFileSync, closeSync, fstatSync, linkSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomUUID } from "node:crypto";

function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomUUID().slice(0, 8)}.tmp`);
}

/** Writes a whole file atomically, replacing what was there. */
export function writeFileAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = tempBeside(path);
  writeFileSync(temp, content);
  try {
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
export function createFileExclusive(path: string, content: string): boolean {
  mkdirSync(dirname(path), { recursive: true });
  const temp = tempBeside(path);
  writeFileSync(temp, content);
  try {
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
export function appendLine(path: string, line: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const separator = endsMidLine(path) ? "\n" : "";
  appendFileSync(path, separator + line.replace(/\n/g, " ") + "\n");
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
