/**
 * Test scaffolding for the GitHub boundary and intake: a config pointing at a test forge,
 * connection options whose waits are recorded instead of slept, a store in the test's
 * temp dir, and changes made to the forge's state behind its back (a pull request).
 */
import { join } from "node:path";
import type { Config } from "../config.ts";
import { defaultConfig } from "../config.ts";
import type { TestForge } from "./forge.ts";
import { SEED_TIME } from "./forge.ts";
import { addIssue, findRepo, loadForgeData, saveForgeData } from "../forge/state.ts";
import { isoSeconds } from "../clock.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import type { GitHubOptions } from "../boundaries/github.ts";

/** A config for the test forge: its API, owner's token file, author `owner`, repository demo/widgets. */
export async function forgeConfig(t: TestForge, github: Partial<Config["github"]> = {}, daemon: Partial<Config["daemon"]> = {}): Promise<Config> {
  const base = await defaultConfig();
  return {
    ...base,
    daemon: { ...base.daemon, ...daemon },
    github: { ...base.github, api_base: t.forge.url, token_file: join(t.dir, "tokens", "owner"), author: "owner", ...github },
    repos: { "demo/widgets": { path: join(t.tmp, "widgets"), base_branch: "main", max_sessions: 1, priority: 0 } },
  };
}

/** Connection options for tests: short timeouts and backoff, and every wait recorded in `waits` instead of slept. */
export function quickOptions(waits: number[] = [], extra: GitHubOptions = {}): GitHubOptions {
  return { timeoutMs: 2000, backoffMs: 10, sleep: async (ms) => void waits.push(ms), ...extra };
}

/** Opens a store in the test's temp dir. */
export async function testStore(t: TestForge): Promise<Store> {
  return await openStore(join(t.tmp, "state"));
}

/** Adds an open pull request to demo/widgets by writing the forge's state (the forge reloads it); returns its number. */
export function addPullRequest(t: TestForge, labels: string[] = ["robot-army"]): number {
  const data = loadForgeData(t.dir);
  const repo = findRepo(data, "demo", "widgets")!;
  const at = isoSeconds(SEED_TIME);
  const pull = { head: "ra/feature", base: "main", head_sha: "0".repeat(40), base_sha: "0".repeat(40), draft: false, merged_at: null, merge_commit_sha: null, merged_by: null };
  const made = addIssue(data, repo, { title: "A pull request", body: "Closes nothing", user: "owner", labels, pull }, at);
  saveForgeData(t.dir, data);
  return made.number;
}

/** A pull request to write into the forge's state: its head branch, when it was last updated, and whether it merged. */
export interface PullSpec {
  head: string;
  updated_at: string;
  /** Set: merged (and closed) then. */
  merged_at?: string;
  /** Closed unmerged. */
  closed?: boolean;
  repo?: string;
}

/**
 * Adds pull requests by writing the forge's state (the forge reloads it), each updated
 * at its own time; returns their numbers. Their head commits are made up (40 hex digits
 * from the number), as a branch that does not exist in the bare repository leaves them.
 */
export function addPullRequests(t: TestForge, specs: PullSpec[]): number[] {
  const data = loadForgeData(t.dir);
  const numbers = specs.map((spec) => {
    const [owner, name] = (spec.repo ?? "demo/widgets").split("/");
    const repo = findRepo(data, owner, name)!;
    const pull = {
      head: spec.head, base: "main", head_sha: "", base_sha: "0".repeat(40), draft: false,
      merged_at: spec.merged_at ?? null, merge_commit_sha: spec.merged_at ? "f".repeat(40) : null, merged_by: spec.merged_at ? "owner" : null,
    };
    const made = addIssue(data, repo, { title: `Work on ${spec.head}`, body: null, user: "owner", labels: [], pull }, spec.updated_at);
    made.pull!.head_sha = made.number.toString(16).padStart(40, "a");
    if (spec.merged_at || spec.closed) Object.assign(made, { state: "closed", closed_at: spec.merged_at ?? spec.updated_at, closed_by: "owner" });
    return made.number;
  });
  saveForgeData(t.dir, data);
  return numbers;
}

/** Changes a pull request in the forge's state at `at` (merged, closed, or a new head), as the owner would on GitHub. */
export function changePullRequest(t: TestForge, number: number, change: { merged?: boolean; closed?: boolean; head_sha?: string }, at: string, repoName = "demo/widgets"): void {
  const data = loadForgeData(t.dir);
  const [owner, name] = repoName.split("/");
  const issue = findRepo(data, owner, name)!.issues.find((i) => i.number === number)!;
  if (change.merged) Object.assign(issue.pull!, { merged_at: at, merge_commit_sha: "f".repeat(40), merged_by: "owner" });
  if (change.merged || change.closed) Object.assign(issue, { state: "closed", closed_at: at, closed_by: "owner" });
  if (change.head_sha) issue.pull!.head_sha = change.head_sha;
  issue.updated_at = at;
  saveForgeData(t.dir, data);
}

/** A REST call to the test forge as `who`, answered as JSON; an error status throws with the forge's answer. */
export async function forgeAs(t: TestForge, who: "owner" | "stranger", method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(t.forge.url + path, {
    method, headers: { authorization: `token ${t.token(who)}`, "content-type": "application/json", accept: "application/vnd.github+json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}
