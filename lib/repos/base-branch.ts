/**
 * The branch a repository's work starts from and its pull requests target: the owner's
 * `[repos."owner/name"] base_branch` when set, else the default branch GitHub reported when
 * the owner onboarded (or last reapproved) it, kept in the approved fingerprint. A default
 * branch changed on GitHub is a changed setting: the repository waits for reapproval (and
 * nothing is dispatched to it) until the owner approves the new one, so work never starts
 * from a branch the owner has not seen named. Never guessed: a repository with neither is
 * refused, naming what to run.
 *
 * @example baseBranchOf(store, config, "demo/widgets") // "trunk"
 */
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import type { Store } from "../store/open.ts";
import { getRepoRecord } from "./records.ts";

/** The base branch of `name`: configured, else the approved default branch; a PreconditionError when neither is known. */
export function baseBranchOf(store: Store, config: Pick<Config, "repos">, name: string): string {
  const known = knownBaseBranch(store, config, name);
  if (known) return known;
  throw new PreconditionError(
    `${name} has no base branch: it is not onboarded, so its default branch was never read; run "robot-army onboard ${name}", or set [repos."${name}"] base_branch`,
  );
}

/** The base branch of `name` when it is known (configured, or onboarded); undefined for a repository never onboarded. */
export function knownBaseBranch(store: Store, config: Pick<Config, "repos">, name: string): string | undefined {
  const configured = config.repos[name]?.base_branch;
  if (configured) return configured;
  const approved = getRepoRecord(store, name)?.fingerprint.default_branch;
  return typeof approved === "string" && approved ? approved : undefined;
}
