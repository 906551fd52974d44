/**
 * Stand-in for the one removal path until the integrator's lib/cleanup/checkout.ts is merged.
 * integration: replace with removeCheckout, SessionGuard and CheckoutRemoval from lib/cleanup/checkout.ts
 */
import { existsSync } from "node:fs";
import { removeWorktree } from "../boundaries/worktrees.ts";
import type { Effects } from "../effects.ts";
import { auditEffect } from "../store/audit.ts";
import type { Store } from "../store/open.ts";

/** What the caller's session guard answered. */
export type SessionGuard = { live: false } | { live: true | "unknown"; why: string };

/** Exactly what `removeCheckout` did. */
export interface CheckoutRemoval {
  simulated: boolean;
  worktree: { status: "removed" | "absent" | "simulated" } | { status: "kept"; code: "session" | "git_refused" | "directory_survived" | "not_a_worktree"; reason: string };
  branch: { status: "deleted" | "absent" | "simulated" | "not_attempted" } | { status: "kept"; reason: string };
  proof?: string;
  tip?: string;
  bundle?: string;
  restore?: string;
}

/** Removes the worktree, then its branch, each under its guard. */
export async function removeCheckout(
  deps: { store: Store; effects: Pick<Effects, "worktrees" | "level">; stateDir: string },
  target: { repo: string; item: number | null; repoPath: string; path: string; branch: string; base: string; pullNumbers?: readonly number[] },
  options: { session: SessionGuard; force?: { worktree?: boolean; branch?: boolean } },
): Promise<CheckoutRemoval> {
  const about = { repo: target.repo, ...(target.item === null ? {} : { item: target.item }) };
  if (options.session.live !== false) {
    return { simulated: !deps.effects.worktrees, worktree: { status: "kept", code: "session", reason: options.session.why }, branch: { status: "not_attempted" } };
  }
  if (!deps.effects.worktrees) {
    return await auditEffect(deps.store, { kind: "worktree.remove", ...about, simulated: true, body: { path: target.path, branch: target.branch, simulated: true } }, (): CheckoutRemoval => {
      if (existsSync(target.path)) {
        const reason = `"${target.path}" is still on disk: worktrees are simulated at effect level ${deps.effects.level}, so it was not removed (real from local)`;
        return { simulated: true, worktree: { status: "kept", code: "directory_survived", reason }, branch: { status: "not_attempted" } };
      }
      return { simulated: true, worktree: { status: "simulated" }, branch: { status: "simulated" } };
    });
  }
  const removal = await auditEffect(deps.store, { kind: "worktree.remove", ...about, body: { path: target.path, branch: target.branch, simulated: false } },
    () => removeWorktree({ repoPath: target.repoPath, path: target.path, branch: target.branch, liveSession: false }));
  if (removal.worktree.status === "kept") {
    return { simulated: false, worktree: { status: "kept", code: "git_refused", reason: removal.worktree.reason }, branch: { status: "not_attempted" } };
  }
  return { simulated: false, worktree: removal.worktree, branch: removal.branch };
}
