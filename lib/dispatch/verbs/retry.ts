/**
 * `retry`: a failed work item goes back to `ready`, so dispatch gives it a fresh start:
 * a new worktree and branch. An item whose worktree is still on disk, or whose branch is
 * still in the clone, would only fail again at the next dispatch (dispatch never
 * overwrites either) and say so once more on its issue, so retry refuses it up front and
 * names what does apply: `resume` or `restart` carry on in that worktree, `reset`
 * discards it.
 */
import { existsSync } from "node:fs";
import { worktreePath } from "../../boundaries/worktrees.ts";
import { branchExists } from "../../boundaries/branches.ts";
import type { Config } from "../../config.ts";
import { PreconditionError } from "../../errors.ts";
import type { Store } from "../../store/open.ts";
import { requireItem } from "../../work-items/queries.ts";
import type { WorkItem } from "../../work-items/queries.ts";
import { latestSession } from "../../work-items/sessions.ts";
import { transition } from "../../work-items/transition.ts";
import { branchName } from "../../work-items/branch-name.ts";
import { worktreeRoot } from "../../work-items/worktree-root.ts";

/** What retry reads: the store, and the config and state dir that say where the item's worktree and branch would be. */
export interface RetryDeps {
  store: Store;
  config: Pick<Config, "worktrees" | "repos">;
  stateDir: string;
}

/** Moves a failed item with neither worktree nor branch left to `ready` (audited as `state.work_item`); anything else refuses. */
export async function retryItem(deps: RetryDeps, itemId: number): Promise<WorkItem> {
  const { store, config } = deps;
  const item = requireItem(store, itemId);
  if (item.state !== "failed") {
    throw new PreconditionError(`Work item ${itemId} is ${item.state}, not failed; retry only puts a failed item back in the queue`);
  }
  const last = latestSession(store, item.id);
  const path = last?.worktree ?? worktreePath(worktreeRoot(config, deps.stateDir), item.repo, item.issue);
  if (existsSync(path)) {
    throw new PreconditionError(
      `Work item ${itemId} still has its worktree at "${path}", so a fresh dispatch would fail on it; ` +
        `"robot-army resume ${itemId}" or "robot-army restart ${itemId}" carry on in it, "robot-army reset ${itemId}" discards it`,
    );
  }
  const branch = last?.branch ?? branchName(item.issue, item.title);
  const repo = Object.hasOwn(config.repos, item.repo) ? config.repos[item.repo] : undefined;
  if (repo && await branchExists(repo.path, branch)) {
    throw new PreconditionError(
      `Work item ${itemId}'s branch "${branch}" is still in "${repo.path}", so a fresh dispatch would fail on it; ` +
        `"robot-army reset ${itemId}" removes it (once origin has its commits)`,
    );
  }
  return transition(store, itemId, "ready", { reason: "retried by the owner", details: { failure: item.reason } });
}
