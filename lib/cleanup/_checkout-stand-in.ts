/**
 * integration: replace with lib/cleanup/checkout.ts (removeCheckout, CheckoutRemoval,
 * SessionGuard), then delete this file. The smallest stand-in for the one removal path,
 * with its interface, built on the worktree boundary's removeWorktree: audited
 * `worktree.remove`, touching nothing below effect level local.
 */
import { existsSync } from "node:fs";
import { removeWorktree } from "../boundaries/worktrees.ts";
import type { Effects } from "../effects.ts";
import { auditEffect } from "../store/audit.ts";
import type { Store } from "../store/open.ts";

/** What the caller learnt of a session in the worktree. */
export type SessionGuard = { live: false } | { live: true | "unknown"; why: string };

/** What became of a checkout. */
export interface CheckoutRemoval {
  simulated: boolean;
  worktree: { status: "removed" | "absent" | "simulated" } | { status: "kept"; code: "session" | "git_refused" | "directory_survived" | "not_a_worktree"; reason: string };
  branch: { status: "deleted" | "absent" | "simulated" | "not_attempted" } | { status: "kept"; reason: string };
  proof?: string;
  tip?: string;
  bundle?: string;
  restore?: string;
}

/** Removes a checkout: worktree, then branch. */
export async function removeCheckout(
  deps: { store: Store; effects: Effects; stateDir: string },
  target: { repo: string; item: number | null; repoPath: string; path: string; branch: string; base: string; pullNumbers?: number[] },
  options: { session: SessionGuard; force?: { worktree?: boolean; branch?: boolean } },
): Promise<CheckoutRemoval> {
  if (options.session.live !== false) {
    return { simulated: false, worktree: { status: "kept", code: "session", reason: options.session.why }, branch: { status: "not_attempted" } };
  }
  if (!deps.effects.worktrees) {
    if (existsSync(target.path)) return { simulated: true, worktree: { status: "kept", code: "directory_survived", reason: `"${target.path}" is still there` }, branch: { status: "not_attempted" } };
    return { simulated: true, worktree: { status: "simulated" }, branch: { status: "simulated" } };
  }
  return await auditEffect(
    deps.store,
    { kind: "worktree.remove", repo: target.repo, item: target.item ?? undefined, body: { path: target.path, branch: target.branch, force: Boolean(options.force?.worktree) } },
    async (): Promise<CheckoutRemoval> => {
      const done = await removeWorktree({ repoPath: target.repoPath, path: target.path, branch: target.branch, force: Boolean(options.force?.worktree), liveSession: false });
      const worktree = done.worktree.status === "kept" ? { status: "kept" as const, code: "git_refused" as const, reason: done.worktree.reason } : done.worktree;
      const branch = done.worktree.status === "kept" ? { status: "not_attempted" as const } : done.branch;
      return { simulated: false, worktree, branch };
    },
    (r) => ({ worktree: r.worktree.status, branch: r.branch.status }),
  );
}
