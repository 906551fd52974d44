/**
 * `worktree prune`: git's record of worktrees whose directory is gone, cleared per
 * onboarded clone. What git would prune is learnt first (`git worktree prune --dry-run
 * --verbose`), the prune is audited (`worktree.prune`, intent and outcome, naming the
 * paths), and what it pruned is read back from git's list afterwards, so a report never
 * says "pruned" of a record git still holds. Below effect level local nothing is asked of
 * git: each repository is "not checked", never "nothing to prune".
 *
 * @example
 * for (const result of await pruneWorktrees({ store, config, effects })) console.log(describePrune(result));
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import type { Config } from "../config.ts";
import type { Effects } from "../effects.ts";
import { redact } from "../redact.ts";
import { samePath } from "../same-path.ts";
import { auditEffect } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { cloneWorktrees, onboardedClones } from "./unclaimed.ts";

/** What became of one clone's prune. */
export type PruneResult =
  | { repo: string; status: "not_checked"; level: string }
  | { repo: string; status: "nothing" }
  | { repo: string; status: "pruned"; pruned: Array<{ path: string; why: string }>; left: string[] }
  | { repo: string; status: "failed"; problem: string };

/** Prunes every onboarded clone's stale worktree records, one clone after another. */
export async function pruneWorktrees(deps: { store: Store; config: Pick<Config, "repos">; effects: Pick<Effects, "worktrees" | "level"> }): Promise<PruneResult[]> {
  const results: PruneResult[] = [];
  for (const clone of onboardedClones(deps.store, deps.config)) {
    if (!deps.effects.worktrees) {
      results.push({ repo: clone.repo, status: "not_checked", level: deps.effects.level });
      continue;
    }
    results.push(await pruneClone(deps.store, deps.config, clone));
  }
  return results;
}

async function pruneClone(store: Store, config: Pick<Config, "repos">, clone: { repo: string; path: string }): Promise<PruneResult> {
  const dry = await git(clone.path, ["worktree", "prune", "--dry-run", "--verbose"]);
  if (dry.code !== 0) return { repo: clone.repo, status: "failed", problem: gitProblem("git worktree prune --dry-run", dry) };
  const commonDir = await git(clone.path, ["rev-parse", "--git-common-dir"]);
  if (commonDir.code !== 0) return { repo: clone.repo, status: "failed", problem: gitProblem("git rev-parse --git-common-dir", commonDir) };
  const common = isAbsolute(commonDir.stdout.trim()) ? commonDir.stdout.trim() : join(clone.path, commonDir.stdout.trim());
  const stale = wouldPrune(dry.stdout + dry.stderr).map(({ name, why }) => ({ path: worktreePathOf(common, name), why }));
  if (stale.length === 0) return { repo: clone.repo, status: "nothing" };
  return await auditEffect(
    store,
    { kind: "worktree.prune", repo: clone.repo, body: { repo_path: clone.path, paths: stale.map((s) => s.path) } },
    async (): Promise<PruneResult> => {
      const pruned = await git(clone.path, ["worktree", "prune", "--verbose"]);
      if (pruned.code !== 0) return { repo: clone.repo, status: "failed", problem: gitProblem("git worktree prune", pruned) };
      // What git still lists was not pruned, whatever it printed.
      const listed = (await cloneWorktrees(store, { repos: { [clone.repo]: config.repos[clone.repo] } })).worktrees;
      const still = (path: string) => listed.some((w) => samePath(w.path, path));
      return { repo: clone.repo, status: "pruned", pruned: stale.filter((s) => !still(s.path)), left: stale.filter((s) => still(s.path)).map((s) => s.path) };
    },
    (result) => (result.status === "pruned" ? { pruned: result.pruned.map((p) => p.path), left: result.left } : { status: result.status }),
  );
}

/** One line per clone, as `worktree prune` prints it. */
export function describePrune(result: PruneResult): string[] {
  switch (result.status) {
    case "not_checked":
      return [`${result.repo}: not checked (effect level ${result.level}; version control is real from local)`];
    case "nothing":
      return [`${result.repo}: nothing to prune`];
    case "failed":
      return [`${result.repo}: could not prune: ${result.problem}`];
    case "pruned":
      return [
        `${result.repo}: pruned ${result.pruned.length} worktree record${result.pruned.length === 1 ? "" : "s"}`,
        ...result.pruned.map((p) => `  pruned ${p.path} (${p.why})`),
        ...result.left.map((path) => `  still listed by git: ${path}`),
      ];
  }
}

/** The admin entries `git worktree prune --dry-run --verbose` names: `Removing worktrees/<name>: <why>`. */
function wouldPrune(output: string): Array<{ name: string; why: string }> {
  return [...output.matchAll(/^Removing worktrees\/([^:\n]+): (.*)$/gm)].map((m) => ({ name: m[1], why: m[2].trim() }));
}

/** The worktree path an admin entry names (its `gitdir` file points at `<path>/.git`), or the entry itself when that cannot be read. */
function worktreePathOf(commonDir: string, name: string): string {
  try {
    const gitdir = readFileSync(join(commonDir, "worktrees", name, "gitdir"), "utf8").trim();
    return gitdir.endsWith("/.git") ? dirname(gitdir) : gitdir;
  } catch {
    return join(commonDir, "worktrees", name);
  }
}

function gitProblem(what: string, result: { code: number; stderr: string }): string {
  return `${what} exited ${result.code}${result.stderr.trim() ? `: ${redact(result.stderr).trim().split("\n").at(-1)}` : ""}`;
}

async function git(cwd: string, args: string[]) {
  const { $ } = await import("dax-sh");
  return await $`git ${args}`.cwd(cwd).env("GIT_TERMINAL_PROMPT", "0").stdin("null").quiet().noThrow();
}
