/**
 * `reset`: discards an item's unfinished worktree and branch and puts it back in the
 * queue. The issue is re-read first (a closed issue refuses: the next poll makes the item
 * done), with who last added its label and who edited its body (lib/intake/issue-trust.ts):
 * an item whose words are not the owner's alone goes back held for the owner, and when
 * GitHub cannot say, reset refuses before removing anything. Removal is cleanup's own
 * (lib/cleanup/checkout.ts): a live session (or one that cannot be checked) refuses; git's
 * refusal over uncommitted work, and a branch with commits origin does not have (asked
 * live), are kept unless forced; a branch is written to a bundle before it is deleted.
 * Only when both are gone does the item go `ready`.
 * Below effect level `local` worktrees are simulated, so reset refuses before it reads anything.
 */
import { worktreePath } from "../../boundaries/worktrees.ts";
import { removeCheckout } from "../../cleanup/checkout.ts";
import { episodeKeysOf } from "../../cleanup/cleanup.ts";
import type { CheckoutRemoval } from "../../cleanup/checkout.ts";
import { PreconditionError } from "../../errors.ts";
import { getItem, refreshSnapshot, requireItem } from "../../work-items/queries.ts";
import type { WorkItem, WorkItemState } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { branchName } from "../../work-items/branch-name.ts";
import type { DispatchDeps } from "../dispatch-deps.ts";
import { latestSession } from "../../work-items/sessions.ts";
import { worktreeRoot } from "../../work-items/worktree-root.ts";
import { describeLive, liveSessionOf } from "./live-session.ts";
import { describeDoubt, readTrustFacts, recordTrust, trustRulesOf } from "../../intake/issue-trust.ts";
import { baseBranchOf } from "../../repos/base-branch.ts";

/** States a reset may start from. */
export const RESETTABLE: readonly WorkItemState[] = ["interrupted", "failed", "needs_info", "active", "awaiting_review"];

/** What reset did: the removal as it happened, and the item as it is now. */
export interface ResetOutcome {
  removal: CheckoutRemoval;
  item: WorkItem;
  /** Whether the item went back to `ready`. */
  reset: boolean;
  /** Why the item is held for the owner (its label or body not the owner's alone), or null when it is not. */
  held: string | null;
}

/** Re-reads the issue, removes the worktree and branch under the guards, and on success makes the item `ready`. */
export async function resetItem(deps: Pick<DispatchDeps, "store" | "config" | "stateDir" | "sessionRoot" | "github" | "effects">, itemId: number, options: { force?: boolean } = {}): Promise<ResetOutcome> {
  const { store, config } = deps;
  const found = requireItem(store, itemId);
  if (!RESETTABLE.includes(found.state)) throw new PreconditionError(`Work item ${itemId} is ${found.state}; reset needs it ${RESETTABLE.join(", ")}`);
  if (!deps.effects.worktrees) {
    throw new PreconditionError(`Reset removes a real worktree and branch: run it with --effect-level local or above (now ${deps.effects.level}); nothing was removed`);
  }
  const repo = config.repos[found.repo];
  if (!repo) throw new PreconditionError(`Repository "${found.repo}" of work item ${itemId} is not in the config`);
  const rules = trustRulesOf(config.github);
  if (!rules) throw new PreconditionError("github.author is not set, so no issue's words can be told to be yours; set it in the config");
  const issue = await deps.github.getIssue(found.repo, found.issue);
  const facts = await readTrustFacts(deps.github, found.repo, found.issue, rules);
  refreshSnapshot(store, found.id, {
    repo: found.repo, issue: found.issue, title: issue.title, body: issue.body, author: issue.author, labels: issue.labels,
    issue_state: issue.state, issue_updated_at: issue.updated_at,
  });
  if (issue.state === "closed") throw new PreconditionError(`Issue ${found.repo}#${found.issue} is closed; the next poll makes work item ${itemId} done`);
  const item = getItem(store, itemId)!;
  const doubt = recordTrust(store, item, facts, rules);
  const held = doubt ? describeDoubt(item.id, doubt, rules) : null;
  const last = latestSession(store, item.id);
  const path = last?.worktree ?? worktreePath(worktreeRoot(config, deps.stateDir), item.repo, item.issue);
  const branch = last?.branch ?? branchName(item.issue, item.title);
  const live = liveSessionOf(store, deps.sessionRoot, item.id, path);
  const force = options.force === true;
  const removal = await removeCheckout(
    deps,
    // The records robot-army's own hooks left uncommitted are its to archive, never the owner's work that keeps the worktree.
    { repo: item.repo, item: item.id, repoPath: repo.path, path, branch, base: baseBranchOf(store, deps.config, item.repo), episodeKeys: episodeKeysOf(store, item.id) },
    { session: live.live === false ? { live: false } : { live: live.live, why: describeLive(live, item.id) }, force: { worktree: force, branch: force } },
  );
  if (removal.worktree.status === "kept" && live.live !== false) throw new PreconditionError(describeLive(live, item.id));
  const gone = removal.worktree.status !== "kept" && removal.branch.status !== "kept";
  if (!gone) return { removal, item, reset: false, held };
  const now = store.transaction(() => {
    if (item.state === "active" || item.state === "awaiting_review") transition(store, item.id, "interrupted", { reason: "no session of it runs" });
    return transition(store, item.id, "ready", { reason: "reset by the owner", details: { worktree: removal.worktree.status, branch: removal.branch.status } });
  });
  return { removal, item: now, reset: true, held };
}
