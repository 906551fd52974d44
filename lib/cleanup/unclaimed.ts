/**
 * Which worktrees items claim, which directories in the worktree root none does, and the
 * guards of `worktree remove <path>`: a worktree no item claims is removed (worktree and
 * branch) only when it is inside the worktree root, an onboarded clone lists it as a
 * worktree, and no live worker is in it. With no session rows to ask, that last guard asks
 * the session root's records, each checked by pid and start time (`workerRuns`); a record
 * that cannot be read makes it unknown, and unknown refuses. A claimed path is refused with
 * the item's id, so the path form is never a way round the session guard of `worktree remove <id>`.
 *
 * @example
 * const target = await unclaimedTarget(deps, "/state/worktrees/demo/widgets/issue-9");
 * const removal = await removeUnclaimed(deps, target, { force: false });
 */
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { Config } from "../config.ts";
import { worktreeRoot } from "../work-items/worktree-root.ts";
import type { Effects } from "../effects.ts";
import { PreconditionError } from "../errors.ts";
import { placeOf, samePath } from "../same-path.ts";
import { getRepoRecord } from "../repos/records.ts";
import { scanRecords } from "../sessions/records.ts";
import { workerRuns } from "../sessions/state.ts";
import type { Store } from "../store/open.ts";
import type { WorkItemState } from "../work-items/queries.ts";
import { newestCheckouts, settledCheckoutsNear, unfinishedItemsWithoutSessions } from "../work-items/sessions.ts";
import { listWorktrees, worktreePath } from "../boundaries/worktrees.ts";
import { listWorktreesRemembered } from "../boundaries/worktree-list-memo.ts";
import type { WorktreeListMemo } from "../boundaries/worktree-list-memo.ts";
import { branchName } from "../work-items/branch-name.ts";
import { removeCheckout } from "./checkout.ts";
import type { CheckoutRemoval, SessionGuard } from "./checkout.ts";
import { baseBranchOf } from "../repos/base-branch.ts";

/** A worktree an item claims: the path its newest session row records. */
export interface Claim {
  path: string;
  item: number;
  repo: string;
  issue: number;
  state: WorkItemState;
  branch: string;
  /**
   * Whether the item's disk is settled: its latest cleanup record is a real one saying the worktree
   * is gone (`work_items.disk_settled_at`). Such a path is taken for gone without looking again.
   */
  settled: boolean;
}

/**
 * The worktree each item claims: its newest session row's, one per item, by item id; and an
 * unfinished item with no session yet claims the worktree dispatch makes for it at its path
 * in `root` once that is on disk (a worktree being made, or one a failed start left), so no
 * directory dispatch is working in is ever taken for unclaimed. With `unsettled`, only the claims
 * of items whose disk is not settled, which a pass reads without reading the finished items'.
 */
export function worktreeClaims(store: Store, root: string, options: { unsettled?: boolean } = {}): Claim[] {
  const fromSessions = newestCheckouts(store, options).map(({ settled_at, ...row }) => ({ ...row, state: row.state as WorkItemState, settled: settled_at !== null }));
  const unstarted = unfinishedItemsWithoutSessions(store)
    .map((row) => ({
      path: worktreePath(root, row.repo, row.issue), item: row.item, repo: row.repo, issue: row.issue, state: row.state as WorkItemState,
      branch: branchName(row.issue, row.title), settled: false,
    }))
    .filter((claim) => existsSync(claim.path));
  return [...fromSessions, ...unstarted].sort((a, b) => a.item - b.item);
}

/** The claim on `path`, if an item has one: its worktree, or a folder inside it. */
export function claimOn(claims: readonly Claim[], path: string): Claim | undefined {
  return claims.find((claim) => samePath(claim.path, path) || isInside(path, claim.path));
}

/** One worktree an onboarded clone lists (`git worktree list`). */
export interface CloneWorktree {
  repo: string;
  repoPath: string;
  path: string;
  /** The branch's short name; undefined on a detached HEAD. */
  branch?: string;
  main: boolean;
  /** Git's own word: its directory is gone, so `git worktree prune` would clear it. */
  prunable: boolean;
}

/** The onboarded clones: repositories in the config that the owner onboarded, with their paths and base branches. */
export function onboardedClones(store: Store, config: Pick<Config, "repos">): Array<{ repo: string; path: string; base: string }> {
  return Object.entries(config.repos)
    .filter(([repo]) => getRepoRecord(store, repo) !== undefined)
    .map(([repo, settings]) => ({ repo, path: settings.path, base: baseBranchOf(store, config, repo) }));
}

/**
 * Every worktree the onboarded clones list, and the clones whose list cannot be read (with
 * git's words). With `memo` (the daemon's, kept between passes), a clone's list is asked of
 * git again only once git's record of its worktrees changed (lib/boundaries/worktree-list-memo.ts).
 */
export async function cloneWorktrees(store: Store, config: Pick<Config, "repos">, memo?: WorktreeListMemo): Promise<{ worktrees: CloneWorktree[]; unreadable: Array<{ repo: string; problem: string }> }> {
  const worktrees: CloneWorktree[] = [];
  const unreadable: Array<{ repo: string; problem: string }> = [];
  for (const clone of onboardedClones(store, config)) {
    try {
      for (const listed of await (memo ? listWorktreesRemembered(clone.path, memo) : listWorktrees(clone.path))) {
        worktrees.push({ repo: clone.repo, repoPath: clone.path, path: listed.path, branch: listed.branch?.replace(/^refs\/heads\//, ""), main: listed.main, prunable: listed.prunable });
      }
    } catch (error) {
      unreadable.push({ repo: clone.repo, problem: (error as Error).message });
    }
  }
  return { worktrees, unreadable };
}

/** A directory in the worktree root that no item claims, with what the clone listing it says of it. */
export interface UnclaimedDirectory {
  path: string;
  /** The onboarded clone that lists it as a worktree, if one does. */
  repo: string | null;
  branch: string | null;
}

/** What finding and removing unclaimed worktrees reads. */
export interface UnclaimedDeps {
  store: Store;
  config: Pick<Config, "repos" | "worktrees">;
  stateDir: string;
}

/**
 * Every directory in the worktree root no item claims: each `<root>/<owner>/<name>/<dir>`
 * (where robot-army makes worktrees), and any worktree an onboarded clone lists inside it,
 * however deep. Links are not followed; a root that does not exist holds none.
 *
 * The claims of items whose disk is not settled are compared by place (`placeOf`), each path
 * resolved once for the whole scan, not once per comparison. The items whose disk is settled
 * (their worktree's removal on record: the thousands of finished ones) are asked of the store
 * only for the folders nothing else claims, by the paths they recorded, with no look at the disk:
 * should a settled item's folder come back, it is still its item's and never taken for unclaimed.
 */
export async function unclaimedDirectories(deps: UnclaimedDeps, known?: { claims: Claim[]; worktrees: CloneWorktree[] }): Promise<UnclaimedDirectory[]> {
  const root = worktreeRoot(deps.config, deps.stateDir);
  const claims = (known?.claims ?? worktreeClaims(deps.store, root, { unsettled: true })).filter((claim) => !claim.settled);
  const worktrees = known?.worktrees ?? (await cloneWorktrees(deps.store, deps.config)).worktrees;
  const place = placesOnce();
  const rootPlace = place(root);
  const found = new Map<string, UnclaimedDirectory>();
  for (const path of directoriesAtDepth(root, 3)) found.set(place(path), { path, repo: null, branch: null });
  for (const listed of worktrees) {
    if (listed.main || !existsSync(listed.path)) continue;
    const at = place(listed.path);
    if (!placeInside(at, rootPlace)) continue;
    const already = found.get(at)?.path ?? listed.path;
    found.set(at, { path: already, repo: listed.repo, branch: listed.branch ?? null });
  }
  // A folder in a claimed worktree is its item's too; a folder that only holds a worktree further down is not one itself.
  const claimed = new Set(claims.map((claim) => place(claim.path)));
  const above = foldersAbove([...claimed, ...worktrees.filter((w) => !w.main).map((w) => place(w.path))]);
  const left = [...found.entries()].filter(([at]) => !placeOrAbove(at, (p) => claimed.has(p)) && !above.has(at));
  return withoutSettledClaims(deps.store, left).sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * The folders (by place) no settled item claims, asked of the store by the paths settled items
 * recorded: one at the folder or above it claims it, one below it holds it. A folder is looked
 * up by its place and by its path as found, so a root reached through a link still finds them.
 */
function withoutSettledClaims(store: Store, folders: Array<[string, UnclaimedDirectory]>): UnclaimedDirectory[] {
  if (!folders.length) return [];
  const forms = ([at, dir]: [string, UnclaimedDirectory]) => [...new Set([at, resolve(dir.path)])];
  const settled = settledCheckoutsNear(store, folders.flatMap((folder) => forms(folder).flatMap(folderAndAbove)), folders.flatMap(forms));
  const claimed = new Set(settled.map((checkout) => resolve(checkout.path)));
  const above = foldersAbove([...claimed]);
  return folders
    .filter((folder) => !forms(folder).some((form) => placeOrAbove(form, (p) => claimed.has(p)) || above.has(form)))
    .map(([, dir]) => dir);
}

/** What `worktree remove <path>` removes once its guards passed: the worktree, its clone and branch, and what the session root says of it. */
export interface UnclaimedTarget {
  path: string;
  repo: string;
  repoPath: string;
  base: string;
  branch: string;
  session: SessionGuard;
}

/**
 * The guards of `worktree remove <path>` that need no git refusal to answer, in order: no
 * item claims it (else the id to use), it is inside the worktree root, an onboarded clone
 * lists it on a branch. Each refusal is a PreconditionError naming the path. What the
 * session root says of it is returned, not thrown: the removal records that refusal.
 */
export async function unclaimedTarget(deps: UnclaimedDeps & { sessionRoot: string }, path: string): Promise<UnclaimedTarget> {
  const wanted = resolve(path);
  const claim = claimOn(worktreeClaims(deps.store, worktreeRoot(deps.config, deps.stateDir)), wanted);
  if (claim) {
    throw new PreconditionError(
      `"${wanted}" is the worktree of work item ${claim.item} (${claim.repo}#${claim.issue}, ${claim.state}): remove it with "robot-army worktree remove ${claim.item}", which asks that item's sessions first`,
    );
  }
  const root = worktreeRoot(deps.config, deps.stateDir);
  if (!isInside(wanted, root) || samePath(wanted, root)) {
    throw new PreconditionError(`"${wanted}" is not inside the worktree root "${root}": robot-army removes only worktrees it could have made`);
  }
  const { worktrees, unreadable } = await cloneWorktrees(deps.store, deps.config);
  const listed = worktrees.find((w) => !w.main && samePath(w.path, wanted));
  if (!listed) {
    const why = unreadable.length ? `; the worktrees of ${unreadable.map((u) => u.repo).join(", ")} cannot be read (${unreadable[0].problem})` : "";
    throw new PreconditionError(`No onboarded clone lists "${wanted}" as a worktree${why}: robot-army removes only what git knows as a worktree, so nothing was touched`);
  }
  if (!listed.branch) throw new PreconditionError(`The worktree "${wanted}" of ${listed.repo} is on a detached HEAD, so there is no branch whose commits could be proven on origin: nothing was touched`);
  const clone = onboardedClones(deps.store, deps.config).find((c) => c.repo === listed.repo)!;
  return { path: listed.path, repo: listed.repo, repoPath: listed.repoPath, base: clone.base, branch: listed.branch, session: sessionInPath(deps.sessionRoot, listed.path) };
}

/**
 * Removes an unclaimed worktree and its branch through the one removal path, under the
 * session root's answer and git's refusal (overridden only by `force`, which the command
 * takes only once the owner typed the directory's name at a terminal).
 */
export async function removeUnclaimed(deps: { store: Store; effects: Effects; stateDir: string; config?: { cleanup: Pick<Config["cleanup"], "disposable"> } }, target: UnclaimedTarget, options: { force: boolean }): Promise<CheckoutRemoval> {
  return await removeCheckout(
    deps,
    { repo: target.repo, item: null, repoPath: target.repoPath, path: target.path, branch: target.branch, base: target.base },
    { session: target.session, force: options.force ? { worktree: true, branch: true } : undefined },
  );
}

/**
 * Whether a managed session's worker is in `path` or below it, asked of the session root's
 * records, each by pid and start time: one that runs (or cannot be checked), or a record
 * that cannot be read, is a live or unknown answer, never "no session".
 */
export function sessionInPath(sessionRoot: string, path: string): SessionGuard {
  const { records, unreadable } = scanRecords(sessionRoot);
  for (const record of records) {
    if (!isInside(record.cwd, path)) continue;
    const runs = workerRuns(sessionRoot, record);
    if (runs === true) return { live: true, why: `session ${record.name} (${record.id}) runs in "${record.cwd}"` };
    if (runs === "unknown") return { live: "unknown", why: `whether session ${record.name} (${record.id}) in "${record.cwd}" still runs cannot be checked` };
  }
  if (unreadable.length > 0) return { live: "unknown", why: `the session record "${unreadable[0].file}" cannot be read (${unreadable[0].problem}), so whether its worker is in "${path}" is unknown` };
  return { live: false };
}

/** Whether `child` is `parent` or below it, symbolic links resolved where the paths exist. */
export function isInside(child: string, parent: string): boolean {
  return placeInside(placeOf(child), placeOf(parent));
}

/** Whether a place (`placeOf`) is another or below it. */
function placeInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Whether `test` holds for a place or any folder above it. */
function placeOrAbove(at: string, test: (place: string) => boolean): boolean {
  return folderAndAbove(at).some(test);
}

/** A path and every folder above it, up to the root of the file system. */
function folderAndAbove(path: string): string[] {
  const all = [path];
  for (let dir = path; dir !== dirname(dir);) all.push((dir = dirname(dir)));
  return all;
}

/** Every folder strictly above one of these paths. */
function foldersAbove(paths: readonly string[]): Set<string> {
  return new Set(paths.flatMap((path) => folderAndAbove(path).slice(1)));
}

/** `placeOf`, each path resolved once however often it is asked. */
function placesOnce(): (path: string) => string {
  const known = new Map<string, string>();
  return (path) => {
    let at = known.get(path);
    if (at === undefined) known.set(path, (at = placeOf(path)));
    return at;
  };
}

/** The real directories exactly `depth` levels below `root`, never through a symbolic link. */
function directoriesAtDepth(root: string, depth: number): string[] {
  let level = [root];
  for (let d = 0; d < depth; d++) {
    const next: string[] = [];
    for (const dir of level) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        const path = join(dir, name);
        try {
          if (lstatSync(path).isDirectory()) next.push(path);
        } catch {
          // Gone between the listing and the look: nothing to report.
        }
      }
    }
    level = next;
  }
  return level;
}
