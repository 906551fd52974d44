/**
 * Which uncommitted files in an item's worktree are robot-army's own episode records, proven,
 * and which are anything else. A worker's agent that ends (Claude Code's SessionEnd hook runs
 * `episode end`) leaves the record robot-army wrote for it uncommitted; that file alone must
 * not keep the worktree for ever, and must not be lost either (lib/cleanup/record-archive.ts
 * archives it before the removal).
 *
 * A file is robot-army's own record only on evidence, never on its name or looks (DESIGN
 * rules 1 and 2):
 * - git lists it as untracked (a modified, staged or deleted record is the owner's work);
 * - it sits directly in `.ai/repo/sessions/`, named `<started>--<episode id>.md`, a regular
 *   file inside the worktree (no symbolic link on the way);
 * - the worktree's ledger (`.ai/local/state/ledger.jsonl`, excluded from git) has the line
 *   robot-army appended when it wrote the record (`episode.end`, or `session.recovered` by
 *   `recover episodes`): for that episode id, under one of the item's episode keys, naming
 *   that path and the SHA-256 of exactly the bytes now in the file.
 * Anything short of that (git or the ledger unreadable, a hash that differs, a key of another
 * item) is not proven, and the file counts with the rest of the uncommitted work.
 */
import { sha256Hex } from "../sha256.ts";
import { closeSync, constants, lstatSync, openSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { runGit, tail } from "../boundaries/run-git.ts";
import { journalAt } from "../episodes/journal.ts";
import { readLedger } from "../episodes/ledger.ts";
import { RobotArmyError } from "../errors.ts";

/** Where records sit, below a worktree's root, as git names paths. */
export const RECORDS_DIR = ".ai/repo/sessions/";

/** The ledger events robot-army appends as it writes a record. */
const WRITTEN_BY = new Set(["episode.end", "session.recovered"]);

const RECORD_NAME = /^[^/]+--([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.md$/;

/** An uncommitted record proven robot-army's own: its path below the worktree, its episode and key, and its hash. */
export interface OwnRecord {
  file: string;
  episode: string;
  key: string;
  sha256: string;
  /** True when git ignores it (the repository ignores `.ai/`): git's removal would delete it without a word. */
  ignored: boolean;
}

/** What a worktree holds beyond its commits: robot-army's own records, and everything else (each with why it counts). */
export interface Uncommitted {
  records: OwnRecord[];
  others: string[];
}

/**
 * The worktree's uncommitted work, robot-army's own records apart; throws when git cannot
 * say (the caller then proves nothing: unknown is never safe).
 * @example await uncommittedWork("/state/worktrees/demo/widgets/issue-3", ["item-3"]) // { records: [...], others: [] }
 */
export async function uncommittedWork(path: string, keys: readonly string[]): Promise<Uncommitted> {
  const status = await gitList(path, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
  const others: string[] = [];
  const untracked: string[] = [];
  for (let i = 0; i < status.length; i++) {
    const entry = status[i];
    const xy = entry.slice(0, 2);
    const file = entry.slice(3);
    // A rename or copy names its source in the next field.
    if (xy[0] === "R" || xy[0] === "C") i++;
    if (xy === "??" && file.startsWith(RECORDS_DIR)) untracked.push(file);
    else others.push(`${file} (${xy === "??" ? "untracked" : `git status ${xy.replace(/ /g, ".")}`})`);
  }
  const ignored = await gitList(path, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", RECORDS_DIR]);
  const candidates = [...untracked.map((file) => ({ file, ignored: false })), ...ignored.map((file) => ({ file, ignored: true }))];
  if (candidates.length === 0) return { records: [], others };
  const notes = await ledgerNotes(path, keys);
  const records: OwnRecord[] = [];
  for (const candidate of candidates) {
    const proven = prove(path, candidate.file, notes);
    if (typeof proven !== "string") records.push({ ...proven, ignored: candidate.ignored });
    // An ignored file that is not proven is git's to delete, as it always was; an untracked one keeps the worktree.
    else if (!candidate.ignored) others.push(`${candidate.file} (untracked: ${proven})`);
  }
  return { records, others };
}

/** The SHA-256 of a file's bytes (hex), read without following a symbolic link; throws for anything but a regular file. */
export function fileSha256(file: string): string {
  return sha256Hex(readRegularFile(file));
}

/** A regular file's bytes, opened without following a symbolic link. */
export function readRegularFile(file: string): Buffer {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

interface LedgerNote {
  episode: string;
  key: string;
  sha256: string;
}

/** What the ledger says robot-army wrote, by record path: only lines under the item's keys; none when the ledger cannot be read. */
async function ledgerNotes(path: string, keys: readonly string[]): Promise<Map<string, LedgerNote[]> | string> {
  let contents;
  try {
    contents = await readLedger(journalAt(path));
  } catch (error) {
    return `the ledger cannot be read (${(error as Error).message.split("\n")[0]})`;
  }
  const notes = new Map<string, LedgerNote[]>();
  for (const event of contents.events) {
    const { record, sha256 } = event.data;
    if (!WRITTEN_BY.has(event.kind) || !keys.includes(event.key) || typeof record !== "string" || typeof sha256 !== "string") continue;
    notes.set(record, [...(notes.get(record) ?? []), { episode: event.episode, key: event.key, sha256 }]);
  }
  return notes;
}

/** The record a candidate is, proven by the ledger's note of it, or why it is not proven. */
function prove(root: string, file: string, notes: Map<string, LedgerNote[]> | string): Omit<OwnRecord, "ignored"> | string {
  if (typeof notes === "string") return notes;
  const name = file.slice(RECORDS_DIR.length);
  const episode = RECORD_NAME.exec(name)?.[1];
  if (!episode) return `not named as a record directly in ${RECORDS_DIR}`;
  const full = join(root, file);
  let sha256: string;
  try {
    if (!lstatSync(full).isFile()) return "not a regular file";
    // A folder on the way that is a link would lead out of the worktree.
    if (realpathSync(full) !== join(realpathSync(root), file)) return "reached through a symbolic link";
    sha256 = fileSha256(full);
  } catch (error) {
    return `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  const noted = notes.get(file)?.filter((note) => note.episode === episode) ?? [];
  if (noted.length === 0) return "no ledger line of this item's episodes says robot-army wrote it";
  const same = noted.find((note) => note.sha256 === sha256);
  if (!same) return "its content is not what robot-army wrote (its hash differs from the ledger's)";
  return { file, episode, key: same.key, sha256 };
}

/** git's NUL-separated answer as a list; throws with git's words when it fails. */
async function gitList(path: string, args: string[]): Promise<string[]> {
  const result = await runGit(path, args);
  if (result.code !== 0) throw new RobotArmyError(`git ${args[0]} failed in "${path}": ${tail(result.stderr) || `exit ${result.code}`}`);
  return result.stdout.split("\0").filter((entry) => entry !== "");
}
