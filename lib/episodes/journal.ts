/**
 * Where a repository keeps its work journal. Paths are relative to the root of the
 * repository (or worktree) the command runs in:
 *
 * - `.ai/local/state/sessions-open/<key>.yaml`: open episodes (never committed)
 * - `.ai/local/state/ledger.jsonl`: the ledger (never committed)
 * - `.ai/repo/sessions/<started>--<id>.md`: records of closed episodes (meant to be committed)
 *
 * `.ai/local/` is added to the repository's git exclude file on first write, so journal
 * files never make a worktree dirty.
 */
import { existsSync, readFileSync } from "node:fs";
import { normalize, relative, sep } from "node:path";
import { appendLine } from "../atomic.ts";
import { repositoryAt } from "../boundaries/git.ts";
import { UsageError } from "../errors.ts";

/** The journal of one repository: its root and the paths below it. */
export interface Journal {
  root: string;
  excludeFile: string;
  openDir: string;
  ledgerFile: string;
  recordsDir: string;
}

const EXCLUDE_LINE = "/.ai/local/";

/** The journal of the repository `cwd` is in; with `forWrite`, `.ai/local/` is excluded from git first. */
export async function openJournal(cwd: string, options: { forWrite?: boolean } = {}): Promise<Journal> {
  const { root, excludeFile } = await repositoryAt(cwd);
  const journal = { ...journalAt(root), excludeFile };
  if (options.forWrite) excludeLocalState(journal);
  return journal;
}

/**
 * The journal of a worktree whose root is known (a session row's worktree), for reading only:
 * no git call, so reading many worktrees' journals in one pass costs no process each. Its
 * `excludeFile` is unknown (empty); anything that writes opens the journal with `openJournal`.
 */
export function journalAt(root: string): Journal {
  // The root made clean once and the rest appended: the daemon and the dashboard ask this of every worker, every time.
  const clean = normalize(root);
  const base = clean.endsWith(sep) ? clean : clean + sep;
  const below = (rest: string) => base + rest;
  return {
    root,
    excludeFile: "",
    openDir: below(".ai/local/state/sessions-open"),
    ledgerFile: below(".ai/local/state/ledger.jsonl"),
    recordsDir: below(".ai/repo/sessions"),
  };
}

/** Adds `/.ai/local/` to the exclude file unless a line already says so. */
export function excludeLocalState(journal: Journal): void {
  const current = existsSync(journal.excludeFile) ? readFileSync(journal.excludeFile, "utf8") : "";
  const lines = current.split("\n").map((line) => line.trim());
  if (lines.includes(EXCLUDE_LINE) || lines.includes(".ai/local/") || lines.includes(".ai/local")) return;
  appendLine(journal.excludeFile, "# robot-army: the work journal's local state is never committed");
  appendLine(journal.excludeFile, EXCLUDE_LINE);
}

/** A path inside the journal as shown to people: relative to the repository root. */
export function shown(journal: Journal, path: string): string {
  return relative(journal.root, path);
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The episode key from `--key`, else `$RA_EPISODE_KEY`; undefined when neither is set. */
export function resolveKey(explicit: string | undefined, env: Record<string, string | undefined> = process.env): string | undefined {
  const key = explicit ?? (env.RA_EPISODE_KEY || undefined);
  if (key !== undefined && !KEY.test(key)) {
    throw new UsageError(`Episode key "${key}" must be letters, digits, ".", "_" or "-" (at most 128), starting with a letter or digit`);
  }
  return key;
}
