/**
 * Helpers for the cleanup setups (scenarios/cleanup/): the config lines turning the daemon's
 * cleanup step on, where an item's worktree is, and the owner's hand in it afterwards (an
 * untracked file, a commit origin does not have), each made with real git.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../../testing/fixtures.ts";
import { mustRun } from "./episode-repo.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The config lines `[cleanup] on_issue_close = true`: the daemon's pass reclaims done items. */
export function cleanupOn(): string[] {
  return ["[cleanup]", "on_issue_close = true", ""];
}

/** The worktree robot-army made for demo/widgets#`issue` (under the state dir's `worktrees/`). */
export function worktreeOf(ctx: SetupContext, issue: number): string {
  const path = join(ctx.env.RA_STATE_DIR, "worktrees", "demo", "widgets", `issue-${issue}`);
  if (!existsSync(path)) {
    const root = join(ctx.env.RA_STATE_DIR, "worktrees", "demo", "widgets");
    throw new Error(`setup: no worktree "${path}" (there: ${existsSync(root) ? readdirSync(root).join(", ") : "nothing"})`);
  }
  return path;
}

/** Leaves one untracked file in a worktree, and changes nothing else: git's worktree removal refuses such a tree. */
export function leaveUntracked(worktree: string, name = "scratch.txt"): string {
  const file = join(worktree, name);
  writeFileSync(file, "notes the owner kept while checking the work\n");
  return file;
}

/** Commits a file on the worktree's branch and pushes nothing: a commit origin does not have. */
export function commitUnpushed(worktree: string, clock: string): string {
  writeFileSync(join(worktree, "afterthought.md"), "One more thing, never pushed.\n");
  git(worktree, "add", "--", "afterthought.md");
  // Dated by the scenario's clock, so the commit (and every sha after it) is the same every run.
  const made = spawnSync("git", ["commit", "--quiet", "-m", "An afterthought, not pushed"], {
    cwd: worktree, encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "Owner", GIT_AUTHOR_EMAIL: "owner@example.invalid", GIT_COMMITTER_NAME: "Owner", GIT_COMMITTER_EMAIL: "owner@example.invalid", GIT_AUTHOR_DATE: clock, GIT_COMMITTER_DATE: clock },
  });
  if (made.status !== 0) throw new Error(`setup: git commit failed in "${worktree}": ${made.stderr.trim()}`);
  return git(worktree, "rev-parse", "HEAD");
}

/** The clock of the setup's own pass: two minutes after the scenario's, so the poll is due (later steps use a later `RA_NOW`). */
export const SETUP_PASS_AT = "2026-01-15T10:02:00Z";

/**
 * One pass at live as the setup's own, at `at` (default `SETUP_PASS_AT`: the merge is read,
 * item 1 is done and its idle worker retired at once, a merge needing no quiet period), with
 * the items in `hold` held first so the pass dispatches nothing else; its output. It fails
 * the setup unless item 1's worker was retired.
 */
export async function retireNow(ctx: SetupContext, made: SetupResult, hold: number[] = [], at = SETUP_PASS_AT): Promise<string> {
  const run = (argv: string[]) => mustRun(ctx, argv, { cwd: made.cwd, env: { ...made.env, RA_NOW: at } });
  for (const item of hold) await run(["hold", String(item)]);
  const ran = await run(["run", "--once", "--effect-level", "live"]);
  if (!/retired ra-widgets-1 of item 1 /.test(ran)) throw new Error(`setup: run --once did not retire item 1's worker: ${ran}`);
  return ran;
}
