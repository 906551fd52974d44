/**
 * Onboarding: the owner's approval of a repository robot-army may work on. The clone in
 * the config must really be that repository (its `origin` names it), and the settings
 * GitHub reports are recorded as a fingerprint. When a later read finds different
 * settings, the repository waits for `onboard --reapprove` and nothing is dispatched to it.
 */
import { existsSync, realpathSync } from "node:fs";
import type { GitHubReader } from "../boundaries/github-types.ts";
import { remoteUrl, repositoryAt } from "../boundaries/git.ts";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import type { Store } from "../store/open.ts";
import { describeChanges, fingerprintChanges, fingerprintOf } from "./fingerprint.ts";
import type { Fingerprint, SettingChange } from "./fingerprint.ts";
import { originMatches, redactedRemote } from "./origin.ts";
import { getRepoRecord, pendingChanges, recordApproval, recordChangedSettings } from "./records.ts";
import type { OnboardingState, RepoRecord } from "./records.ts";

/** A repository as onboarding needs it: its `owner/name` and where its clone is. */
export interface RepoRef {
  name: string;
  path: string;
}

/** What `onboardRepository` did. */
export interface OnboardResult {
  name: string;
  path: string;
  /** The clone's origin, with any credential in it redacted. */
  origin: string;
  /** `unchanged`: it was onboarded already with these very settings; nothing was written. */
  outcome: "onboarded" | "reapproved" | "unchanged";
  fingerprint: Fingerprint;
  /** For `reapproved`: what differs from the fingerprint approved before. */
  changes: SettingChange[];
  record: RepoRecord;
}

/** Onboarding refused because the settings changed since the owner approved them. */
export class ReapprovalNeededError extends PreconditionError {
  repo: string;
  changes: SettingChange[];
  constructor(repo: string, changes: SettingChange[], since: string) {
    const what = changes.length ? describeChanges(changes) : "they changed and are back as approved";
    super(`Settings of "${repo}" changed since it was onboarded at ${since}: ${what}; nothing is dispatched to it until "robot-army onboard ${repo} --reapprove"`);
    this.name = "ReapprovalNeededError";
    this.repo = repo;
    this.changes = changes;
  }
}

/**
 * Checks the clone and records the repository's fingerprint (a first onboarding, or with
 * `reapprove` an approval of changed settings). Without `reapprove`, changed settings mark
 * the repository `needs_reapproval` and throw `ReapprovalNeededError`.
 */
export async function onboardRepository(
  store: Store,
  github: Pick<GitHubReader, "getRepository">,
  config: Config,
  name: string,
  options: { reapprove?: boolean } = {},
): Promise<OnboardResult> {
  const path = configuredPath(config, name);
  const clone = await checkClone(name, path);
  const repository = await github.getRepository(name);
  if (!originMatches(clone.origin, repository, clone.root)) {
    // The clone URL alone: the web URL (also accepted) is another spelling of it on GitHub.
    throw new PreconditionError(`Clone "${path}" is not ${name}: its origin is "${redactedRemote(clone.origin)}", expected "${repository.clone_url}"`);
  }
  const fingerprint = fingerprintOf(repository, path);
  const result = (outcome: OnboardResult["outcome"], record: RepoRecord, changes: SettingChange[] = []): OnboardResult => ({
    name, path, origin: redactedRemote(clone.origin), outcome, fingerprint, changes, record,
  });
  const before = getRepoRecord(store, name);
  if (!before) return result("onboarded", recordApproval(store, name, path, fingerprint));
  const changes = fingerprintChanges(before.fingerprint, fingerprint);
  if (before.state === "onboarded" && changes.length === 0) return result("unchanged", before);
  if (options.reapprove) return result("reapproved", recordApproval(store, name, path, fingerprint), changes);
  const waiting = recordChangedSettings(store, name, fingerprint);
  throw new ReapprovalNeededError(name, pendingChanges(waiting), before.onboarded_at);
}

/** What a fingerprint check found: the state now, and what differs from the approval. */
export interface FingerprintCheck {
  name: string;
  state: OnboardingState | "not_onboarded";
  /** Settings that differ from the approved fingerprint (none while onboarded). */
  changes: SettingChange[];
  /** True when this check is the one that saw a new difference (and audited it). */
  changedNow: boolean;
}

/**
 * Reads the repository's settings again and compares them with what the owner approved;
 * a difference makes it `needs_reapproval` (audited, naming the settings). Poll and
 * dispatch call it before handing out work; a repository never onboarded is not read.
 * @example
 * const check = await checkFingerprint(store, github, { name, path: config.repos[name].path });
 * if (check.state !== "onboarded") continue; // nothing is dispatched to it
 */
export async function checkFingerprint(store: Store, github: Pick<GitHubReader, "getRepository">, repo: RepoRef): Promise<FingerprintCheck> {
  const before = getRepoRecord(store, repo.name);
  if (!before) return { name: repo.name, state: "not_onboarded", changes: [], changedNow: false };
  const fingerprint = fingerprintOf(await github.getRepository(repo.name), repo.path);
  const after = recordChangedSettings(store, repo.name, fingerprint);
  return { name: repo.name, state: after.state, changes: pendingChanges(after), changedNow: JSON.stringify(after) !== JSON.stringify(before) };
}

/** Whether work may be dispatched to a repository: it is onboarded and its settings are as approved. */
export function mayDispatch(store: Store, name: string): boolean {
  return getRepoRecord(store, name)?.state === "onboarded";
}

function configuredPath(config: Config, name: string): string {
  if (!Object.hasOwn(config.repos, name)) {
    const known = Object.keys(config.repos);
    const hint = known.length ? ` (it names ${known.map((n) => `"${n}"`).join(", ")})` : "";
    throw new PreconditionError(`Repository "${name}" is not in the config${hint}: add a [repos."${name}"] table with the path of its clone`);
  }
  return config.repos[name].path;
}

/** The clone at `path`: it exists, it is the top of a git repository, and it has an origin. */
async function checkClone(name: string, path: string): Promise<{ root: string; origin: string }> {
  if (!existsSync(path)) throw new PreconditionError(`The clone of "${name}" is missing: "${path}" does not exist`);
  let root: string;
  try {
    root = (await repositoryAt(path)).root;
  } catch (error) {
    if (error instanceof PreconditionError) throw new PreconditionError(`The clone of "${name}" is not a git repository: "${path}"`);
    throw error;
  }
  if (realpathSync(root) !== realpathSync(path)) {
    throw new PreconditionError(`The clone of "${name}" must be the top of a git repository: "${path}" is inside "${root}"`);
  }
  const origin = await remoteUrl(root, "origin");
  if (origin === undefined) throw new PreconditionError(`The clone of "${name}" at "${path}" has no remote "origin"`);
  return { root, origin };
}
