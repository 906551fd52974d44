/**
 * The one way robot-army removes a checkout (a worktree and its branch): cleanup, `worktree
 * remove`, `reset` and `purge-simulated` all come here, so no path can drift from the guards.
 * Each guard is a different question asked of the one thing that can answer it (DESIGN rule 2):
 * - the session: asked by the caller (session rows for an item, the session root and the
 *   process table for a path no item claims); live or unknown keeps both halves;
 * - the worktree: git's own refusal over uncommitted or untracked work, taken as-is; a
 *   directory still there after a reported removal is `directory_survived`; either way the
 *   branch is not attempted;
 * - the branch: every commit proven on origin, asked live (lib/boundaries/branches.ts),
 *   written to a bundle, then deleted only at the tip that was proven.
 * Before git is asked, an item's worktree whose only uncommitted files are robot-army's own
 * episode records (proven by own-records.ts) has them archived under the state dir, copied
 * and verified first (record-archive.ts), so they neither keep the worktree nor are lost;
 * with any other uncommitted work they stay where they are and git refuses as ever. A forced
 * removal archives the proven records before the rest is deleted.
 * Every removal, bundle and deletion is an audited effect. Below effect level `local`
 * nothing is touched and the report says `simulated`, except that a real directory on disk
 * then is a survivor, never a removal.
 */
import { existsSync } from "node:fs";
import { branchTip, bundlePath, deleteBranchAt, proveOnRemote, writeBundle } from "../boundaries/branches.ts";
import { existingWorktree, removeWorktreeDirectory } from "../boundaries/worktrees.ts";
import type { KeptCode } from "../boundaries/worktrees.ts";
import type { Config } from "../config.ts";
import type { Effects } from "../effects.ts";
import { auditEffect } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { PreconditionError } from "../errors.ts";
import { uncommittedWork } from "./own-records.ts";
import { archiveDir, archiveRecords } from "./record-archive.ts";
import type { ArchivedRecord } from "./record-archive.ts";

/** What removing a checkout needs. */
export interface CheckoutDeps {
  store: Store;
  effects: Pick<Effects, "worktrees" | "level">;
  stateDir: string;
  /** The owner's build output, deleted with a worktree (`[cleanup] disposable`); without it every ignored file keeps the worktree. */
  config?: { cleanup: Pick<Config["cleanup"], "disposable"> };
}

/** The checkout: whose it is (no item for a path no item claims), its clone, path, branch and base. */
export interface CheckoutTarget {
  repo: string;
  item: number | null;
  repoPath: string;
  path: string;
  branch: string;
  base: string;
  /** The item's merged pull requests: their `refs/pull/<n>/head` can prove the branch (a squash merge). */
  pullNumbers?: readonly number[];
  /** The item's episode keys (its session rows'): its uncommitted records proven robot-army's own are archived, not left to keep the worktree. */
  episodeKeys?: readonly string[];
}

/** What the caller's session guard answered: none runs, or one runs or cannot be checked, and why. */
export type SessionGuard = { live: false } | { live: true | "unknown"; why: string };

/** The session guard's answer, and what the owner forced after typing its confirmation. */
export interface CheckoutOptions {
  session: SessionGuard;
  force?: { worktree?: boolean; branch?: boolean };
}

/** What became of the worktree directory; `records_not_archived` when its records could not be archived, so nothing was removed. */
export type CheckoutWorktree = { status: "removed" | "absent" | "simulated"; deleted?: string[] } | { status: "kept"; code: KeptCode | "records_not_archived"; reason: string };

/** What became of the branch; `not_attempted` when its worktree was kept. */
export type CheckoutBranch = { status: "deleted" | "absent" | "simulated" | "not_attempted" } | { status: "kept"; reason: string };

/** Exactly what `removeCheckout` did. */
export interface CheckoutRemoval {
  simulated: boolean;
  worktree: CheckoutWorktree;
  branch: CheckoutBranch;
  /** How the branch was proven on origin. */
  proof?: string;
  /** The tip that was proven (and pinned in the deletion). */
  tip?: string;
  /** The bundle the branch was written to, and the command that brings it back. */
  bundle?: string;
  restore?: string;
  /** The item's episode records archived before the worktree was asked to go (they are out of it now, whatever git then said). */
  archived?: ArchivedRecord[];
}

/** Removes the worktree, then (only once it is gone) the branch, each under its guard. */
export async function removeCheckout(deps: CheckoutDeps, target: CheckoutTarget, options: CheckoutOptions): Promise<CheckoutRemoval> {
  const { store } = deps;
  const about = { repo: target.repo, ...(target.item === null ? {} : { item: target.item }) };
  const notAttempted = { status: "not_attempted" } as const;
  // A clone that is not there cannot be asked anything: refused before any effect is begun.
  if (deps.effects.worktrees && !existsSync(target.repoPath)) {
    throw new PreconditionError(`The clone of ${target.repo} at "${target.repoPath}" is not there, so git cannot be asked about "${target.path}"; nothing was removed`);
  }
  if (options.session.live !== false) {
    return { simulated: !deps.effects.worktrees, worktree: { status: "kept", code: "session", reason: options.session.why }, branch: notAttempted };
  }
  if (!deps.effects.worktrees) {
    // Version control is simulated: nothing is touched, and a real directory there is not "removed".
    return await auditEffect(store, { kind: "worktree.remove", ...about, simulated: true, body: { path: target.path, branch: target.branch, simulated: true } }, (): CheckoutRemoval => {
      if (existsSync(target.path)) {
        const reason = `"${target.path}" is still on disk: worktrees are simulated at effect level ${deps.effects.level}, so it was not removed`;
        return { simulated: true, worktree: { status: "kept", code: "directory_survived", reason }, branch: notAttempted };
      }
      return { simulated: true, worktree: { status: "simulated" }, branch: { status: "simulated" } };
    }, (r) => ({ worktree: r.worktree, branch: r.branch, simulated: true }));
  }
  const forceWorktree = options.force?.worktree === true;
  const taken = await archiveOwnRecords(deps, target, forceWorktree);
  if ("kept" in taken) return { simulated: false, worktree: taken.kept, branch: notAttempted };
  const archived = taken.archived.length ? { archived: taken.archived } : {};
  const removal = await removeWorktreeAndBranch(deps, target, about, { worktree: forceWorktree, branch: options.force?.branch === true });
  return { ...removal, ...archived };
}

/**
 * Archives the item's uncommitted records proven robot-army's own when nothing else is
 * uncommitted (or the owner forced the removal): what git is then asked to remove holds no
 * record. Archives nothing when the path is not the item's worktree on its branch, when git
 * cannot list what is uncommitted, or when other work is there unforced: git's refusal decides.
 */
async function archiveOwnRecords(
  deps: CheckoutDeps, target: CheckoutTarget, forced: boolean,
): Promise<{ archived: ArchivedRecord[] } | { kept: Extract<CheckoutWorktree, { status: "kept" }> }> {
  const none = { archived: [] };
  if (target.item === null || !target.episodeKeys?.length) return none;
  const item = target.item;
  try {
    if (!(await existingWorktree({ repoPath: target.repoPath, path: target.path, branch: target.branch }))) return none;
  } catch {
    return none;
  }
  const found = await uncommittedWork(target.path, target.episodeKeys).catch(() => undefined);
  if (!found || found.records.length === 0) return none;
  if (found.others.length > 0 && !forced) return none;
  try {
    return { archived: await archiveRecords(deps.store, { repo: target.repo, item }, { stateDir: deps.stateDir, worktree: target.path, records: found.records }) };
  } catch (error) {
    const reason = `its episode records could not be archived in "${archiveDir(deps.stateDir, item)}", so nothing was removed: ${(error as Error).message}`;
    return { kept: { status: "kept", code: "records_not_archived", reason } };
  }
}

/** The worktree's removal, then (only once it is gone) the branch's: proven, bundled, deleted at the proven tip. */
async function removeWorktreeAndBranch(
  deps: CheckoutDeps, target: CheckoutTarget, about: { repo: string; item?: number }, force: { worktree: boolean; branch: boolean },
): Promise<CheckoutRemoval> {
  const { store } = deps;
  const forceWorktree = force.worktree;
  const notAttempted = { status: "not_attempted" } as const;
  const worktree = await auditEffect(
    store,
    { kind: "worktree.remove", ...about, body: { path: target.path, branch: target.branch, force: forceWorktree, simulated: false } },
    () => removeWorktreeDirectory({
      repoPath: target.repoPath, path: target.path, branch: target.branch, force: forceWorktree, liveSession: false, disposable: deps.config?.cleanup?.disposable ?? [],
    }),
    (r) => ({ worktree: r, simulated: false }),
  );
  if (worktree.status === "kept") return { simulated: false, worktree, branch: notAttempted };
  let tip: string | undefined;
  try {
    tip = await branchTip(target.repoPath, target.branch);
  } catch (error) {
    return { simulated: false, worktree, branch: { status: "kept", reason: (error as Error).message } };
  }
  if (tip === undefined) return { simulated: false, worktree, branch: { status: "absent" } };
  const forced = force.branch;
  const proof = await proveOnRemote(target.repoPath, { branch: target.branch, tip, base: target.base, pullNumbers: target.pullNumbers });
  if (!proof.proven && !forced) return { simulated: false, worktree, branch: { status: "kept", reason: `unproven: ${proof.reason}` }, tip };
  const how = proof.proven ? proof.how : `forced by the owner (${proof.reason})`;
  let bundle;
  try {
    const file = bundlePath(deps.stateDir, target.repo, target.branch, tip);
    bundle = await auditEffect(
      store,
      { kind: "bundle.write", ...about, body: { branch: target.branch, tip, file } },
      () => writeBundle(target.repoPath, { branch: target.branch, tip, base: target.base, file }),
      (b) => ({ file: b.file }),
    );
  } catch (error) {
    return { simulated: false, worktree, branch: { status: "kept", reason: `its bundle could not be written, so it was not deleted: ${(error as Error).message}` }, proof: how, tip };
  }
  const deleted = await auditEffect(
    store,
    { kind: "branch.delete", ...about, body: { branch: target.branch, tip, proof: how, bundle: bundle.file } },
    () => deleteBranchAt(target.repoPath, target.branch, tip),
    (d) => ({ branch: d }),
  );
  return { simulated: false, worktree, branch: deleted, proof: how, tip, ...(bundle.file ? { bundle: bundle.file } : {}), restore: bundle.restore };
}
