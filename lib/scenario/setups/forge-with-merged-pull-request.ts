/**
 * Setup `forge-with-merged-pull-request`: `forge-with-closed-issue-worker`'s story told
 * through a pull request: demo/widgets onboarded, issue 1 dispatched at live as
 * ra-widgets-1 (item 1), then a commit pushed to the item's branch from its worktree, a
 * pull request opened from that branch (`Closes #1`) and merged by the owner, which closes
 * issue 1. The next pass reads the pull request merged and the issue closed.
 *
 * Variables: those of `forge-with-clone`, and `${PULL}`, the pull request's number (6).
 */
import { git } from "../../testing/fixtures.ts";
import { forgeApi } from "./_forge-intake.ts";
import { mustRun } from "./episode-repo.ts";
import { TIMED_WORKER } from "./forge-with-closed-issue-worker.ts";
import { thenRun, withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Onboards, dispatches issue 1, and opens and merges a pull request from its branch. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withWorker(ctx, TIMED_WORKER);
  let pull = 0;
  await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    const ran = await mustRun(ctx, ["run", "--once", "--effect-level", "live"], { cwd: made.cwd, env: made.env });
    if (!ran.includes("as ra-widgets-1 (item 1)")) throw new Error(`setup: run --once did not dispatch issue 1: ${ran}`);
    pull = await openAndMerge(ctx, made, 1);
  });
  return { ...made, vars: { ...made.vars, PULL: String(pull) } };
}

/** Commits on the item's branch in its worktree, pushes it, opens a pull request closing the issue, and merges it as the owner; its number. */
export async function openAndMerge(ctx: SetupContext, made: SetupResult, item: number): Promise<number> {
  const shown = JSON.parse(await mustRun(ctx, ["show", String(item), "--json"], { cwd: made.cwd, env: made.env })) as {
    issue: number; sessions: Array<{ branch: string; worktree: string }>;
  };
  const { branch, worktree } = shown.sessions.at(-1)!;
  git(worktree, "commit", "--quiet", "--allow-empty", "-m", "Add a --verbose flag");
  git(worktree, "push", "--quiet", "origin", branch);
  const api = forgeApi(made);
  const opened = await api.owner("POST", "/repos/demo/widgets/pulls", { title: "Add a --verbose flag", head: branch, base: "main", body: `Closes #${shown.issue}` }) as { number: number };
  await api.owner("PUT", `/repos/demo/widgets/pulls/${opened.number}/merge`, {});
  return opened.number;
}
