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
