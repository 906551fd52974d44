/**
 * Onboarding: the owner's approval of a repository robot-army may work on. The clone in
 * the config must really be that repository (its `origin` names it), and the settings
 * GitHub reports, with the agent files on its base branch (lib/repos/agent-files.ts), are
 * recorded as a fingerprint. When a later read finds different settings or agent files,
 * the repository waits for `onboard --reapprove` and nothing is dispatched to it.
 */
import { existsSync, realpathSync } from "node:fs";
import type { GitHubReader } from "../boundaries/github-types.ts";
import { remoteUrl, repositoryAt } from "../boundaries/git.ts";
import { FetchError, fetchBase } from "../boundaries/worktrees.ts";
import { runGit } from "../boundaries/run-git.ts";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import { raiseAnomaly } from "../store/anomalies.ts";
import type { Store } from "../store/open.ts";
import { AgentFilesUnreadable, agentFingerprint, agentKeysOf, readAgentFiles, settingsKeysOf } from "./agent-files.ts";
import type { AgentFiles } from "./agent-files.ts";
import { AGENT_FILE_KEY, agentFileChanges, describeChanges, fingerprintChanges, fingerprintOf, settingsDigest, sortedFingerprint } from "./fingerprint.ts";
import type { Fingerprint, SettingChange } from "./fingerprint.ts";
import { originMatches, redactedRemote } from "./origin.ts";
import { getRepoRecord, pendingChanges, recordApproval, recordChangedSettings } from "./records.ts";
import type { OnboardingState, RepoRecord } from "./records.ts";

/** A repository as onboarding needs it: its `owner/name`, where its clone is, and its base branch (whose agent files are read). */
export interface RepoRef {
  name: string;
  path: string;
  base?: string;
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
  /** The agent files as read now from origin's base branch. */
  agent: AgentFiles;
  /** The base branch they were read from. */
  base: string;
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
    const review = agentFileChanges(changes).length ? ` ("robot-army onboard ${repo} --diff" shows how its agent files changed)` : "";
    super(`Settings of "${repo}" changed since it was onboarded at ${since}: ${what}; nothing is dispatched to it until "robot-army onboard ${repo} --reapprove"${review}`);
    this.name = "ReapprovalNeededError";
    this.repo = repo;
    this.changes = changes;
  }
}

/**
 * Checks the clone and records the repository's fingerprint (a first onboarding, or with
 * `reapprove` an approval of changed settings). Without `reapprove`, changed settings mark
 * the repository `needs_reapproval` and throw `ReapprovalNeededError`. With `agentCommit`, a
 * reapproval approves the agent files of that commit of the base branch only (the one the owner
 * was shown): origin's base branch at another refuses it, approving nothing; with
 * `settingsDigest`, the settings only as shown (fingerprint.ts `settingsDigest`).
 */
export async function onboardRepository(
  store: Store,
  github: Pick<GitHubReader, "getRepository">,
  config: Config,
  name: string,
  options: { reapprove?: boolean; agentCommit?: string; settingsDigest?: string } = {},
): Promise<OnboardResult> {
  const path = configuredPath(config, name);
  const clone = await checkClone(name, path);
  const repository = await github.getRepository(name);
  // The owner's base branch, else the one GitHub names as the repository's default (recorded in the fingerprint approved here).
  const base = config.repos[name].base_branch ?? repository.default_branch;
  if (!originMatches(clone.origin, repository, clone.root)) {
    // The clone URL alone: the web URL (also accepted) is another spelling of it on GitHub.
    throw new PreconditionError(`Clone "${path}" is not ${name}: its origin is "${redactedRemote(clone.origin)}", expected "${repository.clone_url}"`);
  }
  const agent = await readBaseAgentFiles({ name, path, base });
  const settings = fingerprintOf(repository, path);
  const fingerprint = sortedFingerprint(settings, agentFingerprint(agent));
  const result = (outcome: OnboardResult["outcome"], record: RepoRecord, changes: SettingChange[] = []): OnboardResult => ({
    name, path, origin: redactedRemote(clone.origin), outcome, fingerprint, agent, base, changes, record,
  });
  const before = getRepoRecord(store, name);
  if (!before) return result("onboarded", recordApproval(store, name, path, fingerprint, agent.commit));
  const changes = fingerprintChanges(before.fingerprint, fingerprint);
  if (before.state === "onboarded" && changes.length === 0) return result("unchanged", before);
  if (options.reapprove && options.agentCommit !== undefined && options.agentCommit !== agent.commit) {
    throw new PreconditionError(`origin/${base} of ${name} is at ${agent.commit} now, not at ${options.agentCommit} whose agent files you were shown: nothing was approved; look at the changes again`);
  }
  if (options.reapprove && options.settingsDigest !== undefined && options.settingsDigest !== settingsDigest(fingerprint)) {
    throw new PreconditionError(`${name}'s settings on GitHub are not the ones you were shown (${describeChanges(fingerprintChanges(before.fingerprint, fingerprint).filter((c) => !c.setting.startsWith(AGENT_FILE_KEY))) || "as approved"} now): nothing was approved; look at the changes again`);
  }
  if (options.reapprove) return result("reapproved", recordApproval(store, name, path, fingerprint, agent.commit), changes);
  const waiting = recordSeen(store, before, { name, path, base }, settings, agent);
  throw new ReapprovalNeededError(name, waiting.changes, before.onboarded_at);
}

/** What a fingerprint check found: the state now, and what differs from the approval. */
export interface FingerprintCheck {
  name: string;
  state: OnboardingState | "not_onboarded";
  /** Settings and agent files that differ from the approved fingerprint (none while onboarded). */
  changes: SettingChange[];
  /** True when this check is the one that saw a new difference (and audited it). */
  changedNow: boolean;
  /** The base branch's commit whose agent files this check read; null when it did not read them. */
  commit?: string | null;
}

/**
 * Reads the repository's settings again and compares them with what the owner approved;
 * a difference makes it `needs_reapproval` (audited, naming the settings). With
 * `agentFiles` (the gate, before every start) it fetches the base branch and reads the agent
 * files there too; a difference in them also raises an `agent_files_changed` anomaly. Poll
 * and `repos` read the settings only: the agent files as last seen stand. A repository never
 * onboarded is not read.
 * @example
 * const check = await checkFingerprint(store, github, { name, path: repo.path, base: baseBranchOf(store, config, name) }, { agentFiles: true });
 * if (check.state !== "onboarded") continue; // nothing is dispatched to it
 */
export async function checkFingerprint(
  store: Store,
  github: Pick<GitHubReader, "getRepository">,
  repo: RepoRef,
  options: { agentFiles?: boolean; fetch?: boolean } = {},
): Promise<FingerprintCheck> {
  const before = getRepoRecord(store, repo.name);
  if (!before) return { name: repo.name, state: "not_onboarded", changes: [], changedNow: false };
  const settings = fingerprintOf(await github.getRepository(repo.name), repo.path);
  const agent = options.agentFiles ? await readBaseAgentFiles(repo, { fetch: options.fetch }) : undefined;
  return recordSeen(store, before, repo, settings, agent);
}

/**
 * Checks the agent files at the commit a new worktree is about to start from (after
 * dispatch's own fetch, which may have brought a newer commit than the gate read): the same
 * as approved, or the repository needs reapproval (audited, with the anomaly) and the start
 * is refused with what to run.
 */
export async function vetAgentFiles(store: Store, repo: RepoRef, commit: string): Promise<void> {
  const before = getRepoRecord(store, repo.name);
  if (!before) throw new PreconditionError(`Repository "${repo.name}" is not onboarded; "robot-army onboard ${repo.name}"`);
  const agent = await readAgentFiles(repo.path, commit);
  const check = recordSeen(store, before, repo, settingsKeysOf(before.seen ?? before.fingerprint), agent);
  if (check.state !== "onboarded") throw new PreconditionError(`Not started: ${describeReapproval(repo.name, check.changes, repo.base ?? "", commit)}`);
}

/**
 * Why a repository that needs reapproval takes no work, and what to run: its agent files
 * named with how to review them, or (settings only) the one wording status gives.
 */
export function describeReapproval(name: string, changes: readonly SettingChange[], base: string, commit?: string | null): string {
  const approve = `"robot-army onboard ${name} --reapprove"`;
  if (!agentFileChanges(changes).length) return `repository ${name} needs reapproval; ${approve}`;
  const where = `origin/${base}${commit ? ` at ${commit}` : ""}`;
  return `repository ${name} needs reapproval (${describeChanges(changes)}, on ${where}); review with "robot-army onboard ${name} --diff", then approve with ${approve}`;
}

/**
 * The fingerprint onboarding would record now (the settings GitHub reports and the agent
 * files on the freshly fetched base branch) and the commit they were read at.
 * @example
 * const { fingerprint, commit } = await currentFingerprint(github, { name, path, base: "main" });
 * recordApproval(store, name, path, fingerprint, commit);
 */
export async function currentFingerprint(github: Pick<GitHubReader, "getRepository">, repo: RepoRef): Promise<{ fingerprint: Fingerprint; commit: string }> {
  const repository = await github.getRepository(repo.name);
  const settings = fingerprintOf(repository, repo.path);
  // As onboarding reads them: on the given base branch, else on the repository's default branch.
  const agent = await readBaseAgentFiles({ ...repo, base: repo.base ?? repository.default_branch });
  return { fingerprint: sortedFingerprint(settings, agentFingerprint(agent)), commit: agent.commit };
}

/** Whether work may be dispatched to a repository: it is onboarded and its settings are as approved. */
export function mayDispatch(store: Store, name: string): boolean {
  return getRepoRecord(store, name)?.state === "onboarded";
}

/**
 * Fetches the base branch from origin (as dispatch does before it makes a worktree) and
 * reads the agent files at the commit it names; with `fetch: false` (a dry run, which changes
 * nothing in the clone) at the commit origin/<base> names as last fetched. A clone that
 * cannot fetch or be read is `AgentFilesUnreadable`: unknown, so nothing starts.
 */
export async function readBaseAgentFiles(repo: RepoRef, options: { fetch?: boolean } = {}): Promise<AgentFiles> {
  const base = repo.base;
  if (!base) throw new TypeError(`The base branch of "${repo.name}" is needed to read its agent files`);
  try {
    const commit = options.fetch === false ? await lastFetched(repo.path, base) : await fetchBase(repo.path, repo.name, base);
    return await readAgentFiles(repo.path, commit);
  } catch (error) {
    if (error instanceof FetchError || error instanceof AgentFilesUnreadable) {
      throw new AgentFilesUnreadable(`The agent files of "${repo.name}" on origin/${base} could not be read: ${error.message}`);
    }
    throw error;
  }
}

/**
 * Records what was seen (the settings, and the agent files when they were read) and raises
 * the anomaly when agent files differ. Agent files not read this time stand as last seen: a
 * read of the settings alone neither raises nor clears them.
 */
function recordSeen(store: Store, before: RepoRecord, repo: RepoRef, settings: Fingerprint, agent: AgentFiles | undefined): FingerprintCheck {
  const files = agent ? agentFingerprint(agent) : agentKeysOf(before.seen ?? before.fingerprint);
  const after = recordChangedSettings(store, repo.name, sortedFingerprint(settings, files), agent?.commit ?? null);
  const changes = pendingChanges(after);
  const changedFiles = agentFileChanges(changes);
  if (agent && changedFiles.length) {
    raiseAnomaly(store, {
      kind: "agent_files_changed", actionId: repo.name, repo: repo.name,
      // The files there or there before (an approval made before agent files were read names the named ones absent as changed too).
      files: changedFiles.filter((c) => c.to !== null || (c.from !== null && c.from !== undefined)).map((c) => c.setting.slice(AGENT_FILE_KEY.length)),
      detail: `${describeReapproval(repo.name, changes, repo.base ?? "", agent.commit)}; nothing is dispatched to it until then`,
    });
  }
  return {
    name: repo.name, state: after.state, changes, changedNow: JSON.stringify(after) !== JSON.stringify(before),
    ...(agent ? { commit: agent.commit } : {}),
  };
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

/** The commit origin/<base> names in the clone as last fetched, without fetching. */
async function lastFetched(path: string, base: string): Promise<string> {
  const found = await runGit(path, ["rev-parse", "--verify", "--quiet", "--end-of-options", `refs/remotes/origin/${base}^{commit}`]);
  if (found.code !== 0) throw new AgentFilesUnreadable(`origin/${base} has not been fetched into "${path}"`);
  return found.stdout.trim();
}
