/**
 * Journal files are read and written without following a symbolic link: a link anywhere
 * below the repository's root (the file itself, or a folder such as `.ai/local/state`)
 * could point out of the journal, at `/etc/shadow` say, whose lines would then be echoed
 * or written to. Such a path is refused in one line naming it; its target is never opened.
 */
import { closeSync, constants, lstatSync, openSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { relative, sep } from "node:path";
import { PreconditionError } from "../errors.ts";
import type { Journal } from "./journal.ts";

/** A journal path that is, or passes through, a symbolic link. */
export class JournalLinkError extends PreconditionError {
  /** The path below the repository root that is a link. */
  link: string;
  constructor(journal: Journal, link: string) {
    const shown = relative(journal.root, link);
    super(`Journal file "${shown}" is a symbolic link (to "${targetOf(link)}"); robot-army never follows a link out of the journal: remove the link ("rm ${shown}") and run again`);
    this.name = "JournalLinkError";
    this.link = link;
  }
}

/**
 * Throws JournalLinkError when `path` or a folder between the repository root and it is a
 * symbolic link. Parts that do not exist yet are no link. Returns whether `path` exists: a
 * reader asked about a missing file (a worker whose episode is not written yet) is told so
 * without an open that fails. Asked of every worker on every pass and every dashboard page,
 * so the walk throws nothing and builds each path by appending one part.
 */
export function refuseLinks(journal: Journal, path: string): boolean {
  // The usual answer in one call: a path below the root that resolves to itself passes
  // through no link at all. Anything else (a link on the way, a root reached through one, a
  // missing part) is walked part by part, which says which part is a link.
  if (path.startsWith(journal.root.endsWith(sep) ? journal.root : journal.root + sep) && realOrUndefined(path) === path) return true;
  const below = relative(journal.root, path);
  if (below.startsWith("..")) throw new RangeError(`"${path}" is not inside the journal of "${journal.root}"`);
  let current = journal.root;
  for (const part of below.split(sep)) {
    if (!part) continue;
    current = current.endsWith(sep) ? current + part : current + sep + part;
    let stat;
    try {
      stat = lstatSync(current, { throwIfNoEntry: false });
    } catch {
      return true; // not known to be missing (a part that is a file, a folder not searchable): the open that follows says what is wrong
    }
    if (!stat) return false;
    if (stat.isSymbolicLink()) throw new JournalLinkError(journal, current);
  }
  return true;
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/**
 * Refuses a journal whose ledger, open folder or records folder is (or passes through) a
 * symbolic link: checked before a change writes any of them, so it never stops half made.
 */
export function refuseJournalLinks(journal: Journal): void {
  for (const path of [journal.ledgerFile, journal.openDir, journal.recordsDir]) refuseLinks(journal, path);
}

/** A journal file's text, read only when no part of its path is a symbolic link. */
export function readJournalFile(journal: Journal, file: string): string {
  refuseLinks(journal, file);
  return readWithoutFollowing(journal, file);
}

/** As `readJournalFile`, but undefined for a file that does not exist, at no exception's cost. */
export function readJournalFileIfPresent(journal: Journal, file: string): string | undefined {
  if (!refuseLinks(journal, file)) return undefined;
  try {
    return readWithoutFollowing(journal, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined; // removed since the walk
    throw error;
  }
}

function readWithoutFollowing(journal: Journal, file: string): string {
  let fd: number;
  try {
    // O_NOFOLLOW closes the gap between the check and the open: a link put there since is not opened either.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new JournalLinkError(journal, file);
    throw error;
  }
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

function targetOf(link: string): string {
  try {
    return readlinkSync(link);
  } catch {
    return "?";
  }
}
