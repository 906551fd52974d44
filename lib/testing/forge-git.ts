/**
 * Test scaffolding for branches on a forge's bare repository: pushed from a real clone
 * (`pushBranch`, as a worker would), or written straight into the bare repository
 * (`makeBranch`, the same commit in a fifth of the time, for tests about something else).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { commitFile, git } from "./fixtures.ts";

/** Clones the bare repository (once per folder), commits `file` on a new branch and pushes it; returns the pushed commit. */
export function pushBranch(tmp: string, cloneUrl: string, branch: string, file: string, content = `${branch}\n`, from = "main"): string {
  const clone = join(tmp, "clone");
  if (!existsSync(clone)) {
    git(tmp, "clone", "--quiet", cloneUrl, clone);
    git(clone, "config", "user.name", "Robot Army Test");
    git(clone, "config", "user.email", "test@robot-army.invalid");
  } else {
    git(clone, "fetch", "--quiet", "origin");
  }
  git(clone, "switch", "--quiet", "-C", branch, `origin/${from}`);
  const sha = commitFile(clone, file, content, `Change ${file} on ${branch}`);
  git(clone, "push", "--quiet", "--force", "origin", `${branch}:${branch}`);
  return sha;
}

/** Writes a commit adding a top-level `file` on top of `from` and points `branch` at it, in the bare repository itself. */
export function makeBranch(bare: string, branch: string, file: string, content = `${branch}\n`, from = "main"): string {
  const parent = plumbing(bare, ["rev-parse", `refs/heads/${from}`]);
  const entries = plumbing(bare, ["ls-tree", parent]).split("\n").filter((line) => line && !line.endsWith(`\t${file}`));
  const blob = plumbing(bare, ["hash-object", "-w", "--stdin"], content);
  const tree = plumbing(bare, ["mktree"], [...entries, `100644 blob ${blob}\t${file}`].join("\n") + "\n");
  const commit = plumbing(bare, ["commit-tree", tree, "-p", parent, "-m", `Change ${file} on ${branch}`]);
  plumbing(bare, ["update-ref", `refs/heads/${branch}`, commit]);
  return commit;
}

function plumbing(cwd: string, args: string[], input?: string): string {
  const result = spawnSync("git", args, {
    cwd,
    input,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "Robot Army Test", GIT_AUTHOR_EMAIL: "test@robot-army.invalid", GIT_COMMITTER_NAME: "Robot Army Test", GIT_COMMITTER_EMAIL: "test@robot-army.invalid" },
  });
  if (result.status !== 0) throw new Error(`git ${args.join(" ")} failed in "${cwd}": ${result.stderr.trim()}`);
  return result.stdout.trim();
}
