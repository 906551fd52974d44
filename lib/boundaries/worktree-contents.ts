/**
 * What a worktree holds that `git status` does not weigh, asked before robot-army removes it
 * (lib/boundaries/worktrees.ts): `git worktree remove` refuses over uncommitted and untracked
 * work, but deletes ignored files by design, never looks into a nested repository in an
 * ignored folder, and takes a skip-worktree or assume-unchanged file for unchanged. "Provably
 * safe" means each of these was looked at:
 *
 * - **an open episode** in the worktree's journal (`.ai/local/state/sessions-open/`): the
 *   journal is the evidence `recover episodes` needs, and robot-army keeps it out of git, so
 *   git never sees it. Always keeps the worktree, forced or not, until the episode is ended or
 *   recovered.
 * - **a nested git repository** (a `.git` inside the worktree, in an ignored folder or a
 *   disposable one): its commits are nowhere else. Always keeps it.
 * - **an edit git is told not to look at**: a file marked skip-worktree or assume-unchanged
 *   whose content is not the index's. Always keeps it.
 * - **ignored files**: kept unless each is build output the owner declared disposable
 *   (`[cleanup] disposable`, folder names such as `node_modules/` or name patterns such as
 *   `*.pyc`), or robot-army's own (the journal `.ai/local/` with no episode open, the worker's
 *   `.claude/settings.local.json`). Only the owner's typed `--force` deletes the others.
 * - **a process working in it** (its working folder, or a file it has open, inside the
 *   worktree; Linux's /proc): kept, forced or not. Where processes cannot be listed, it is
 *   kept unless forced.
 *
 * The build output deleted with the worktree is listed for the report; robot-army's own
 * files, which go with it too, are not.
 */
import { existsSync, readdirSync, readlinkSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { runGit } from "./run-git.ts";

/** robot-army's own ignored paths in a worktree: its journal and the worker's local Claude Code settings. */
const OWN = [".ai/local/", ".claude/settings.local.json"];

/** Where open episodes are, below the worktree (lib/episodes/journal.ts). */
const OPEN_EPISODES = join(".ai", "local", "state", "sessions-open");

/** How deep a disposable folder is searched for a nested repository. */
const NESTED_DEPTH = 4;

/** One thing that keeps the worktree; `always` when even the owner's force does not remove it. */
export interface Keeper {
  what: string;
  always: boolean;
}

/** What the worktree holds beyond git's view. */
export interface WorktreeContents {
  keepers: Keeper[];
  /** Ignored build output deleted with the worktree (robot-army's own files, which go too, are not listed). */
  deleted: string[];
  /** Ignored paths that keep it unless the owner forces the removal (which deletes them). */
  ignored: string[];
}

/** The processes working in a folder: their descriptions, or why they cannot be listed here. */
export type InUse = { processes: string[] } | { unknown: string };

/** Looks at what `git worktree remove` would delete unseen; `disposable` is the owner's list of build output. */
export async function worktreeContents(path: string, options: { disposable: readonly string[]; inUse?: (path: string) => InUse }): Promise<WorktreeContents> {
  const keepers: Keeper[] = [];
  const deleted: string[] = [];
  const ignored: string[] = [];
  for (const key of openEpisodes(path)) {
    keepers.push({ what: `episode ${key} is still open in its journal (.ai/local/): end it, or have "robot-army recover episodes" record it (--older-than for one newer than [episodes] stranded_after), first`, always: true });
  }
  for (const entry of await ignoredPaths(path)) {
    const nested = nestedRepository(path, entry);
    if (nested) keepers.push({ what: `${nested} is a git repository of its own, inside an ignored folder: its commits are nowhere else`, always: true });
    else if (OWN.some((own) => entry === own || entry.startsWith(own))) continue;
    else if (isDisposable(entry, options.disposable)) deleted.push(entry);
    else {
      ignored.push(entry);
      keepers.push({ what: `${entry} is ignored by git and not declared disposable ([cleanup] disposable)`, always: false });
    }
  }
  for (const file of await hiddenEdits(path)) keepers.push({ what: `${file} is edited but marked skip-worktree or assume-unchanged, so git does not report it`, always: true });
  const use = (options.inUse ?? processesIn)(path);
  if ("unknown" in use) keepers.push({ what: `whether a process works in it cannot be told: ${use.unknown}`, always: false });
  else for (const process of use.processes) keepers.push({ what: `${process} works in it`, always: true });
  return { keepers, deleted, ignored };
}

/** The keys of the episodes open in the worktree's journal. */
function openEpisodes(path: string): string[] {
  const dir = join(path, OPEN_EPISODES);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith(".yaml")).map((name) => name.slice(0, -".yaml".length)).sort();
}

/** Every ignored path git lists (a folder ignored whole as `name/`), from every ignore source: the repository's, its exclude file, the user's global one. */
async function ignoredPaths(path: string): Promise<string[]> {
  const listed = await runGit(path, ["status", "--porcelain", "-z", "--ignored=matching", "--untracked-files=all"]);
  if (listed.code !== 0) throw new Error(`git status cannot list what is ignored in "${path}": ${listed.stderr.trim()}`);
  return listed.stdout.split("\0").filter((line) => line.startsWith("!! ")).map((line) => line.slice(3)).sort();
}

/** Whether an ignored path is build output the owner declared disposable: a folder name anywhere on its path, or a name pattern. */
export function isDisposable(entry: string, patterns: readonly string[]): boolean {
  const parts = entry.split("/").filter(Boolean);
  const folders = entry.endsWith("/") ? parts : parts.slice(0, -1);
  const name = parts.at(-1) ?? "";
  return patterns.some((pattern) => {
    if (pattern.endsWith("/")) return folders.includes(pattern.slice(0, -1));
    return globToRegExp(pattern).test(name);
  });
}

/** A `*` and `?` pattern on a name, as a regular expression. */
function globToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}

/** The first nested repository (`.git`) at or below an ignored path, as a path below the worktree; undefined when none. */
function nestedRepository(root: string, entry: string): string | undefined {
  const start = join(root, entry);
  const walk = (dir: string, depth: number): string | undefined => {
    let names: string[];
    try {
      if (!statSync(dir).isDirectory()) return undefined;
      names = readdirSync(dir);
    } catch {
      return undefined;
    }
    if (names.includes(".git")) return relative(root, dir) + sep;
    if (depth === 0) return undefined;
    for (const name of names) {
      const found = walk(join(dir, name), depth - 1);
      if (found) return found;
    }
    return undefined;
  };
  return entry.endsWith("/") ? walk(start, NESTED_DEPTH) : undefined;
}

/** Files marked skip-worktree or assume-unchanged whose content on disk is not the index's. */
async function hiddenEdits(path: string): Promise<string[]> {
  const listed = await runGit(path, ["ls-files", "-v", "-s", "-z"]);
  if (listed.code !== 0) throw new Error(`git ls-files cannot list the index of "${path}": ${listed.stderr.trim()}`);
  const edited: string[] = [];
  for (const line of listed.stdout.split("\0").filter(Boolean)) {
    // "<tag> <mode> <blob> <stage>\t<path>": S is skip-worktree, a lower-case tag assume-unchanged.
    const match = /^(\S) \d+ ([0-9a-f]+) \d\t(.*)$/s.exec(line);
    if (!match) continue;
    const [, tag, blob, file] = match;
    if (tag !== "S" && tag === tag.toUpperCase()) continue;
    if (!existsSync(join(path, file))) continue;
    const hashed = await runGit(path, ["hash-object", "--", file]);
    if (hashed.code !== 0 || hashed.stdout.trim() !== blob) edited.push(file);
  }
  return edited;
}

/**
 * The processes whose working folder, or an open file, is inside `path`, read from /proc: each
 * as `process <pid> (<name>)`. Processes of other users cannot be read and are passed over
 * (they cannot work in the owner's private worktree either); without /proc, unknown.
 */
export function processesIn(path: string): InUse {
  if (!existsSync("/proc/self/cwd")) return { unknown: "this system has no /proc to list processes from" };
  // /proc names real paths.
  const real = realpathSync(path);
  const inside = (target: string) => target === real || target.startsWith(real.endsWith(sep) ? real : real + sep);
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    if (Number(pid) === process.pid) continue;
    let uses = false;
    try {
      uses = inside(readlinkSync(`/proc/${pid}/cwd`));
      if (!uses) uses = readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return inside(readlinkSync(`/proc/${pid}/fd/${fd}`));
        } catch {
          return false;
        }
      });
    } catch {
      continue;
    }
    if (uses) found.push(`process ${pid} (${commandName(pid)})`);
  }
  return { processes: found };
}

function commandName(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim() || "?";
  } catch {
    return "?";
  }
}
