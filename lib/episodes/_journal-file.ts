/**
 * Journal files are read and written without following a symbolic link: a link anywhere
 * below the repository's root (the file itself, or a folder such as `.ai/local/state`)
 * could point out of the journal, at `/etc/shadow` say, whose lines would then be echoed
 * or written to. Such a path is refused in one line naming it; its target is never opened.
 */
import { closeSync, constants, lstatSync, openSync, readFileSync, readlinkSync } from "node:fs";
import { join, relative, sep } from "node:path";
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
 * symbolic link. Parts that do not exist yet are no link.
 */
export function refuseLinks(journal: Journal, path: string): void {
  const below = relative(journal.root, path);
  if (below.startsWith("..")) throw new RangeError(`"${path}" is not inside the journal of "${journal.root}"`);
  let current = journal.root;
  for (const part of below.split(sep).filter(Boolean)) {
    current = join(current, part);
    let isLink: boolean;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch {
      return;
    }
    if (isLink) throw new JournalLinkError(journal, current);
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
