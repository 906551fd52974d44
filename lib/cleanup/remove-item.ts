/**
 * `robot-army worktree remove <id>`: the owner's removal of one item's worktree and branch,
 * under cleanup's guards. On a finished item (`done` or `abandoned`) it leaves the record
 * cleanup would, its reason naming `robot-army worktree remove`; on an unfinished one it
 * removes under the same guards and writes no record, so `retry` and `reset` can give the
 * item a fresh worktree. A record that is `done` is refused (`already_removed`) without
 * asking git; a `branch_retained` one is not: `--force` is how that branch goes, after its
 * bundle is written.
 *
 * The item's uncommitted episode records robot-army wrote are archived first, as cleanup
 * archives them (lib/cleanup/checkout.ts): alone they neither keep the worktree nor need --force.
 *
 * `--force` is taken only at a terminal (the command checks) and each guard it overrides is
 * confirmed by typing: the item id over an open session row, the directory's name over
 * uncommitted work. No stdin, Ctrl-C or another answer removes nothing, and the attempt is
 * recorded in the audit log against the path it named.
 */
import { basename } from "node:path";
import { existsSync } from "node:fs";
import type { Answer } from "../cli.ts";
import { PreconditionError } from "../errors.ts";
import { appendAudit } from "../store/audit.ts";
import { requireItem } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { removeCheckout } from "./checkout.ts";
import type { CheckoutRemoval } from "./checkout.ts";
import { checkoutOf, cleanupItem, episodeKeysOf, sessionRowsGuard } from "./cleanup.ts";
import { uncommittedWork } from "./own-records.ts";
import type { CleanupDeps } from "./cleanup.ts";
import { latestRealCleanup } from "./records.ts";
import type { CleanupRecord } from "./records.ts";
import { baseBranchOf } from "../repos/base-branch.ts";

/** A refusal with its code: `already_removed` when the item's record says both halves are gone. */
export class AlreadyRemovedError extends PreconditionError {
  code = "already_removed" as const;
}

/** What `worktree remove <id>` did: the removal, and the record written (none for an unfinished item). */
export interface ItemRemoval {
  item: WorkItem;
  path: string;
  branch: string;
  removal: CheckoutRemoval | null;
  record: CleanupRecord | null;
}

/** Removes an item's worktree and branch; `ask` confirms what `force` overrides. */
export async function removeItemWorktree(
  deps: CleanupDeps,
  itemId: number,
  options: { force: boolean; ask: (question: string) => Promise<Answer> },
): Promise<ItemRemoval> {
  const { store } = deps;
  const item = requireItem(store, itemId);
  const checkout = checkoutOf(store, itemId);
  if (!checkout) throw new PreconditionError(`Work item ${itemId} never had a worktree: there is nothing to remove`);
  if (item.state === "dispatching") throw new PreconditionError(`Work item ${itemId} is dispatching: its worktree is being made for a worker; nothing was removed`);
  // A simulated decision touched nothing: only a real one says both halves are gone.
  const before = latestRealCleanup(store, itemId);
  if (before?.state === "done") {
    throw new AlreadyRemovedError(`Work item ${itemId}'s worktree "${before.worktree_path}" and branch ${before.branch} were already removed (${before.at}): already_removed`);
  }
  const session = sessionRowsGuard(store, itemId);
  let forceSession = false;
  let forceWorktree = false;
  if (options.force) {
    if (session.live !== false) {
      await confirm(deps, item, checkout.path, options.ask, "session",
        `${session.why}.\n--force removes the worktree under it and whatever that session has not committed is lost.\nType the item id (${itemId}) to go on: `, String(itemId));
      forceSession = true;
    }
    // git's --force is passed only over work the owner was shown and confirmed by typing the directory's name:
    // a tree clean now is removed without it, so a file written meanwhile makes git refuse.
    // robot-army's own records are archived, not deleted: alone they are nothing to confirm.
    if (existsSync(checkout.path) && await dirtyBesidesOwnRecords(checkout.path, episodeKeysOf(store, itemId))) {
      const name = basename(checkout.path);
      await confirm(deps, item, checkout.path, options.ask, "uncommitted work",
        `"${checkout.path}" has uncommitted or untracked work (or git cannot say): --force deletes it.\nType the directory's name (${name}) to go on: `, name);
      forceWorktree = true;
    }
  }
  // Asked again after the questions, which can wait for ever: a row opened meanwhile refuses, unless its override was typed.
  if (!forceSession && sessionRowsGuard(store, itemId).live !== false && session.live === false) {
    throw new PreconditionError(`Work item ${itemId}: a session row of it opened while you were asked; nothing was removed`);
  }
  const force = { session: forceSession, worktree: forceWorktree, branch: options.force };
  if (item.state === "done" || item.state === "abandoned") {
    const decision = await cleanupItem(deps, itemId, { by: "worktree remove", force });
    return { item, ...checkout, removal: decision.removal, record: decision.record };
  }
  const repo = deps.config.repos[item.repo];
  if (!repo) throw new PreconditionError(`Repository "${item.repo}" of work item ${itemId} is not in the config, so its clone cannot be asked; nothing was removed`);
  const removal = await removeCheckout(
    deps,
    { repo: item.repo, item: itemId, repoPath: repo.path, path: checkout.path, branch: checkout.branch, base: baseBranchOf(deps.store, deps.config, item.repo), episodeKeys: episodeKeysOf(store, itemId) },
    { session: forceSession ? { live: false } : sessionRowsGuard(store, itemId), force: { worktree: forceWorktree, branch: options.force } },
  );
  return { item, ...checkout, removal, record: null };
}

/** Whether the worktree holds uncommitted work other than robot-army's own records; true when git cannot say. */
async function dirtyBesidesOwnRecords(path: string, keys: readonly string[]): Promise<boolean> {
  try {
    return (await uncommittedWork(path, keys)).others.length > 0;
  } catch {
    return true;
  }
}

/** Asks the owner to type `expected`; anything else is recorded against the path and refused. */
async function confirm(
  deps: CleanupDeps, item: WorkItem, path: string, ask: (question: string) => Promise<Answer>, overriding: string, question: string, expected: string,
): Promise<void> {
  const answer = await ask(question);
  const gaveUp = "unanswered" in answer ? answer.unanswered : answer.line.trim() === expected ? undefined : "answer did not match";
  if (gaveUp === undefined) return;
  appendAudit(deps.store, { kind: "worktree.remove", repo: item.repo, item: item.id, body: { path, forcing: overriding, gave_up: gaveUp, removed: false } });
  throw new PreconditionError(`Not removed (${gaveUp}): --force over ${overriding} needs "${expected}" typed; nothing was removed from "${path}"`);
}
