/**
 * The branch half of reclaiming a work item's disk (DESIGN rule 2): whether every commit
 * of a branch is on the remote, asked of the remote live; the branch's commits written to a
 * bundle before it goes; and a deletion pinned to the tip that was proven, so a commit that
 * lands between the check and the deletion keeps the branch.
 *
 * A remote-tracking ref is a cache of what origin said last time, never its answer: the
 * refs weighed here are the ones `git ls-remote` lists now. Unknown is "unproven", never safe.
 */
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { RobotArmyError } from "../errors.ts";
import { runGit, tail } from "./run-git.ts";

/** The commit a branch points at, or undefined when the clone has no such branch. */
export async function branchTip(repoPath: string, branch: string): Promise<string | undefined> {
  const result = await runGit(repoPath, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`]);
  if (result.code === 0) return result.stdout.trim();
  // Exit 1 is git's "no such ref"; anything else (not a repository, a damaged ref) is not an answer.
  if (result.code === 1) return undefined;
  throw new RobotArmyError(`git cannot read branch ${branch} in "${repoPath}": ${tail(result.stderr) || `git rev-parse exited ${result.code}`}`);
}

/** Whether `branch` exists in the clone at `repoPath`; git not able to say throws (unknown is not "no"). */
export async function branchExists(repoPath: string, branch: string): Promise<boolean> {
  const result = await runGit(repoPath, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`]);
  if (result.code === 0 || result.code === 1) return result.code === 0;
  throw new RobotArmyError(`git cannot say whether branch ${branch} exists in "${repoPath}": ${tail(result.stderr) || `git show-ref exited ${result.code}`}`);
}

/** Whether `commit` is `of` or one of its ancestors (no commit of its own beyond it); git not able to say throws. */
export async function isAncestor(repoPath: string, commit: string, of: string): Promise<boolean> {
  const result = await runGit(repoPath, ["merge-base", "--is-ancestor", "--end-of-options", commit, of]);
  if (result.code === 0 || result.code === 1) return result.code === 0;
  throw new RobotArmyError(`git cannot say whether ${commit} is in ${of} in "${repoPath}": ${tail(result.stderr) || `git merge-base exited ${result.code}`}`);
}

/** What was asked of the remote: the tip proven and the ref of origin's that holds it, or why it is unproven. */
export type RemoteProof = { proven: true; tip: string; how: string } | { proven: false; tip: string; reason: string };

/** What `proveOnRemote` weighs: the branch and the tip read before, its base, and the item's merged pull requests. */
export interface ProofQuestion {
  branch: string;
  tip: string;
  base: string;
  /** Numbers of the item's merged pull requests: GitHub keeps each one's head as `refs/pull/<n>/head`. */
  pullNumbers?: readonly number[];
}

/**
 * Whether every commit up to `tip` is on origin, asked live: contained in origin's base
 * branch (fetched first), in origin's branch of the same name, in `refs/pull/<n>/head` of a
 * merged pull request (how a squash merge proves itself: the base holds only the squash),
 * or else in any branch or tag origin has now. A ref origin does not list proves nothing; a
 * tip of origin's this clone cannot fetch proves nothing; origin not answering, or git not
 * able to say, is "unproven".
 */
export async function proveOnRemote(repoPath: string, question: ProofQuestion): Promise<RemoteProof> {
  const { branch, tip, base } = question;
  const unproven = (reason: string): RemoteProof => ({ proven: false, tip, reason });
  const listed = await runGit(repoPath, ["ls-remote", "origin"]);
  if (listed.code !== 0) return unproven(`origin cannot be asked whether its commits are there: ${tail(listed.stderr) || `git ls-remote exited ${listed.code}`}`);
  const refs = new Map<string, string>();
  for (const line of listed.stdout.split("\n")) {
    const [sha, ref] = line.split("\t");
    if (sha && ref && /^[0-9a-f]{40,64}$/.test(sha)) refs.set(ref, sha);
  }
  // The base is fetched first, under its remote-tracking name, so what was merged since is weighed.
  await runGit(repoPath, ["fetch", "--quiet", "--no-tags", "origin", "--", `+refs/heads/${base}:refs/remotes/origin/${base}`]);
  const named: Array<[string, string]> = [
    [`refs/heads/${base}`, `origin's ${base}`],
    [`refs/heads/${branch}`, `origin's branch ${branch}`],
    ...(question.pullNumbers ?? []).map((n): [string, string] => [`refs/pull/${n}/head`, `origin's refs/pull/${n}/head (pull request #${n})`]),
  ];
  for (const [ref, how] of named) {
    const sha = refs.get(ref);
    if (!sha || !(await haveCommit(repoPath, sha, ref))) continue;
    const contained = await runGit(repoPath, ["merge-base", "--is-ancestor", tip, sha]);
    if (contained.code === 0) return { proven: true, tip, how: `every commit of it is in ${how}, asked live` };
    if (contained.code !== 1) return unproven(`git cannot say whether ${ref} holds it: ${tail(contained.stderr) || `exit ${contained.code}`}`);
  }
  // Any other branch or tag origin has: its tips are fetched so they can be weighed (a failed fetch only proves less).
  await runGit(repoPath, ["fetch", "--quiet", "--no-write-fetch-head", "origin"]);
  const tips = [...new Set([...refs].filter(([ref]) => ref.startsWith("refs/heads/") || ref.startsWith("refs/tags/")).map(([, sha]) => sha))];
  // ls-remote also lists tag objects, whose peeled `^{}` line names the commit.
  const known = tips.length === 0 ? "" : (await runGit(repoPath, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], tips.join("\n") + "\n")).stdout;
  const commits = known.split("\n").filter((line) => line.endsWith(" commit")).map((line) => `^${line.split(" ")[0]}`);
  const counted = await runGit(repoPath, ["rev-list", "--count", tip, "--stdin"], commits.join("\n") + "\n");
  if (counted.code !== 0) return unproven(`its commits cannot be counted: ${tail(counted.stderr) || `git rev-list exited ${counted.code}`}`);
  const count = Number(counted.stdout.trim());
  if (count === 0) return { proven: true, tip, how: "every commit of it is on a branch or tag of origin, asked live" };
  return unproven(`${count} ${count === 1 ? "commit of it is" : "commits of it are"} on no branch, tag or merged pull request of origin (asked live)`);
}

/** Whether the clone has commit `sha`, fetching `ref` from origin for it when it does not (a failed fetch: no). */
async function haveCommit(repoPath: string, sha: string, ref: string): Promise<boolean> {
  const has = async () => (await runGit(repoPath, ["cat-file", "-e", `${sha}^{commit}`])).code === 0;
  if (await has()) return true;
  await runGit(repoPath, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin", "--", ref]);
  return await has();
}

/** A bundle written: its file (null when the branch had no commit of its own to write) and the one command restoring the branch. */
export interface Bundle {
  file: string | null;
  restore: string;
}

/**
 * Writes the commits of `branch` up to `tip` that origin's base does not hold to a bundle
 * at `file` (0600, its folders 0700; written beside it and renamed, so a file at that path
 * is whole), and checks it. A file already there is never overwritten (`bundlePath` picks a
 * free name). A branch with no commit of its own needs no file: its tip is on the base.
 * Throws when git cannot write or check it: the branch is then not deleted.
 */
export async function writeBundle(repoPath: string, spec: { branch: string; tip: string; base: string; file: string }): Promise<Bundle> {
  const { branch, tip, base } = spec;
  const ownCommits = await runGit(repoPath, ["rev-list", "--count", tip, `^refs/remotes/origin/${base}`, "--"]);
  const own = ownCommits.code === 0 ? Number(ownCommits.stdout.trim()) : undefined;
  if (own === 0) return { file: null, restore: `git -C ${shellWord(repoPath)} branch ${shellWord(branch)} ${tip}` };
  const file = spec.file;
  if (existsSync(file)) throw new Error(`"${file}" is already there and is not overwritten`);
  mkdirTree(dirname(file));
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  // The branch ref pinned at the proven tip: a temporary ref, so the bundle names the branch as it was proven.
  const pin = `refs/robot-army/bundle/${branch}`;
  try {
    const pinned = await runGit(repoPath, ["update-ref", pin, tip]);
    if (pinned.code !== 0) throw new Error(`git update-ref could not pin ${tip}: ${tail(pinned.stderr)}`);
    const exclude = own === undefined ? [] : [`^refs/remotes/origin/${base}`];
    const made = await runGit(repoPath, ["bundle", "create", "--quiet", partial, pin, ...exclude]);
    if (made.code !== 0) throw new Error(`git bundle create failed: ${tail(made.stderr) || `exit ${made.code}`}`);
    const checked = await runGit(repoPath, ["bundle", "verify", "--quiet", partial]);
    if (checked.code !== 0) throw new Error(`git bundle verify failed: ${tail(checked.stderr) || `exit ${checked.code}`}`);
    chmodSync(partial, 0o600);
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
    await runGit(repoPath, ["update-ref", "-d", pin]);
  }
  return { file, restore: `git -C ${shellWord(repoPath)} fetch ${shellWord(file)} ${shellWord(`${pin}:refs/heads/${branch}`)}` };
}

/** What became of the branch: `deleted` only when the ref is gone because of this call. */
export type BranchDeletion = { status: "deleted" } | { status: "absent" } | { status: "kept"; reason: string };

/**
 * Deletes `branch` only if it still points at `tip`, the commit that was proven
 * (`git update-ref -d <ref> <tip>`): one that moved since keeps the branch. A branch
 * checked out in a worktree (the clone's own checkout included) is kept, as `git branch -d`
 * keeps it: update-ref would leave that checkout on a branch with no commits. Its config
 * section (upstream, and the like) goes with it, as `git branch -d` would take it.
 */
export async function deleteBranchAt(repoPath: string, branch: string, tip: string): Promise<BranchDeletion> {
  const before = await branchTip(repoPath, branch);
  if (before === undefined) return { status: "absent" };
  if (before !== tip) return { status: "kept", reason: `it moved to ${before.slice(0, 12)} after ${tip.slice(0, 12)} was proven` };
  const checkedOut = await whereCheckedOut(repoPath, branch);
  if (checkedOut !== undefined) return { status: "kept", reason: checkedOut };
  const deleted = await runGit(repoPath, ["update-ref", "-d", `refs/heads/${branch}`, tip]);
  const after = await branchTip(repoPath, branch);
  if (after !== undefined) {
    return { status: "kept", reason: deleted.code !== 0 ? tail(deleted.stderr) || `git update-ref exited ${deleted.code}` : `git left "${branch}" at ${after.slice(0, 12)}` };
  }
  await runGit(repoPath, ["config", "--remove-section", `branch.${branch}`]);
  return { status: "deleted" };
}

/**
 * Where a branch's bundle is written: `<state dir>/bundles/<owner>/<name>/<branch>.bundle`,
 * or, when an earlier branch of that name left one there, `<branch>.<tip's first 12>.bundle`,
 * then `<branch>.<tip's first 12>.<n>.bundle` (the same branch restored and deleted again):
 * always a name no file has, so no bundle is overwritten and none stops a deletion.
 */
export function bundlePath(stateDir: string, repo: string, branch: string, tip: string): string {
  const stem = join(stateDir, "bundles", ...repo.split("/"), branch);
  if (!existsSync(`${stem}.bundle`)) return `${stem}.bundle`;
  const tipped = `${stem}.${tip.slice(0, 12)}`;
  for (let n = 1; ; n++) {
    const file = n === 1 ? `${tipped}.bundle` : `${tipped}.${n}.bundle`;
    if (!existsSync(file)) return file;
  }
}

/** Why `branch` cannot go because a worktree (the clone's own checkout included) has it checked out, or may: undefined when none does. */
async function whereCheckedOut(repoPath: string, branch: string): Promise<string | undefined> {
  const listed = await runGit(repoPath, ["worktree", "list", "--porcelain", "-z"]);
  if (listed.code !== 0) return `git cannot say whether a worktree has it checked out: ${tail(listed.stderr) || `git worktree list exited ${listed.code}`}`;
  let path = "";
  for (const line of listed.stdout.split("\0")) {
    if (line.startsWith("worktree ")) path = line.slice("worktree ".length);
    else if (line === `branch refs/heads/${branch}`) return `it is checked out at "${path}"`;
  }
  return undefined;
}

function mkdirTree(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** A word for a shell: left as it is when it is plainly safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
