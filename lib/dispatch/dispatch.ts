/**
 * Dispatch: ready work items become worker sessions. In queue order and under the caps,
 * each item is claimed (`ready` -> `dispatching`), gets a worktree on its own branch from
 * the fetched base, its post-create steps, a prompt file, and a worker started through the
 * launcher inside a managed session tagged `ra_item`; once the session is confirmed the
 * item is `active` and its issue is told where it runs. A failure after the claim makes
 * the item `failed`: the reason goes to the item and the audit record, and the issue is
 * told only that a session could not be started (DESIGN rule 4).
 */
import { join } from "node:path";
import type { GitHubReader } from "../boundaries/github-types.ts";
import type { Launcher, LaunchSpec } from "../boundaries/launchers/types.ts";
import { createWorktree, runPostCreate } from "../boundaries/worktrees.ts";
import { isoSeconds, now } from "../clock.ts";
import { readRecord } from "../sessions/records.ts";
import type { Config } from "../config.ts";
import { commentOnIssue } from "../effects.ts";
import type { Effects } from "../effects.ts";
import { checkFingerprint } from "../repos/onboard.ts";
import { dispatchQueue } from "../repos/queue.ts";
import type { Store } from "../store/open.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import { claimDetails } from "./claim.ts";
import { findWorkerProgram } from "./worker-program.ts";
import { branchName } from "./branch-name.ts";
import { ITEM_TAG, observeCapacity, workerTags } from "./capacity.ts";
import { describePause, describeWait, findHold, pauseState } from "./controls.ts";
import { composePrompt, writePromptFile } from "./prompt.ts";
import { dispatchComment, failureComment } from "./comments.ts";
import { recordSession } from "./sessions.ts";
import { worktreeRoot } from "./worktree-root.ts";

/** What dispatch works with. */
export interface DispatchDeps {
  store: Store;
  config: Config;
  stateDir: string;
  sessionRoot: string;
  github: GitHubReader;
  effects: Effects;
  launcher: Launcher;
  host: string;
}

/** What happened to one ready item in a dispatch pass. */
export interface DispatchOutcome {
  item: number;
  repo: string;
  issue: number;
  result: "active" | "failed" | "waiting" | "would dispatch";
  /** Why it waits, or why it failed (private: never in a public comment). */
  reason: string | null;
  session: { name: string; id: string; branch: string; worktree: string } | null;
}

/** One pass: dispatches what the caps allow, reports every ready item it looked at. */
export async function dispatchReady(deps: DispatchDeps): Promise<{ withheld: string | null; outcomes: DispatchOutcome[] }> {
  const { store, config } = deps;
  const paused = pauseState(store);
  if (paused) return { withheld: describePause(paused), outcomes: [] };
  if (deps.effects.sessions) {
    const program = await findWorkerProgram(config);
    if ("missing" in program) return { withheld: program.missing, outcomes: [] };
  }
  const { queue } = dispatchQueue(store, config, { includeSimulated: deps.effects.simulated });
  const outcomes: DispatchOutcome[] = [];
  for (const { item } of queue) {
    if (item.simulated !== deps.effects.simulated) continue;
    const capacity = observeCapacity({ sessionRoot: deps.sessionRoot, config, store });
    if (!capacity.observable) return { withheld: `capacity cannot be observed: ${capacity.why}`, outcomes };
    const waiting = (reason: string) => outcomes.push({ item: item.id, repo: item.repo, issue: item.issue, result: "waiting", reason, session: null });
    const hold = findHold(store, item.id, item.repo);
    if (hold) {
      waiting(describeWait(hold));
      continue;
    }
    const answer = capacity.canDispatch(item.repo);
    if (!answer.ok) {
      waiting(answer.reason);
      continue;
    }
    const check = await checkFingerprint(store, deps.github, { name: item.repo, path: config.repos[item.repo].path });
    if (check.state !== "onboarded") {
      waiting(`repository ${item.repo} needs reapproval`);
      continue;
    }
    if (!deps.effects.worktrees || !deps.effects.sessions) {
      outcomes.push({ item: item.id, repo: item.repo, issue: item.issue, result: "would dispatch", reason: null, session: null });
      continue;
    }
    outcomes.push(await dispatchItem(deps, item));
  }
  return { withheld: null, outcomes };
}

/** Claims one ready item and starts its worker; any failure after the claim fails the item. */
export async function dispatchItem(deps: DispatchDeps, item: WorkItem): Promise<DispatchOutcome> {
  const { store, config } = deps;
  // The claim: the transition reads and writes the state in one transaction, so two passes never both win.
  transition(store, item.id, "dispatching", { reason: "a slot is free", details: claimDetails() });
  const repo = config.repos[item.repo];
  const branch = branchName(item.issue, item.title);
  const name = sessionName(item);
  try {
    const worktree = await createWorktree({
      repoPath: repo.path, baseBranch: repo.base_branch, root: worktreeRoot(config, deps.stateDir), repo: item.repo, issue: item.issue, branch,
    });
    await runPostCreate(worktree.path, config.worktrees.post_create);
    const promptFile = writePromptFile(join(deps.stateDir, "prompts", `item-${item.id}`), composePrompt({
      item: item.id, repo: item.repo, issue: item.issue, title: item.title, body: item.body,
      branch, worktree: worktree.path, episodeKey: `item-${item.id}`,
    }));
    const launched = await deps.launcher.launch(workerSpec(deps, item, {
      name, cwd: worktree.path, argv: [config.worker.binary, ...config.worker.args], promptFile,
    }));
    store.transaction(() => {
      recordSession(store, {
        id: launched.sessionId, item: item.id, name, host: deps.host, launcher: launched.launcher, marker: launched.marker,
        worktree: worktree.path, branch, started_at: isoSeconds(now()), simulated: item.simulated, ...workerProcess(deps.sessionRoot, launched.sessionId),
      });
      transition(store, item.id, "active", { reason: "its worker started", details: { session: launched.sessionId, name } });
    });
    const session = { name, id: launched.sessionId, branch, worktree: worktree.path };
    await tell(deps, item, "dispatched", dispatchComment({ host: deps.host, ...session }));
    return { item: item.id, repo: item.repo, issue: item.issue, result: "active", reason: null, session };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    transition(store, item.id, "failed", { reason });
    await tell(deps, item, "failed", failureComment({ host: deps.host, item: item.id }));
    return { item: item.id, repo: item.repo, issue: item.issue, result: "failed", reason, session: null };
  }
}

/**
 * What the launcher starts for an item: its session's name, tags (the launcher adds
 * `ra_item`), worktree, argv, prompt file, and the non-secret variables a worker needs
 * (the repository, its base branch, its episode key, where GitHub is and the token's file).
 */
export function workerSpec(
  deps: Pick<DispatchDeps, "store" | "config">,
  item: WorkItem,
  launch: { name: string; cwd: string; argv: string[]; promptFile?: string },
): LaunchSpec {
  const { [ITEM_TAG]: _item, ...tags } = workerTags(deps.store, item.id);
  const github = deps.config.github;
  return {
    item: item.id, name: launch.name, cwd: launch.cwd, argv: launch.argv, tags,
    ...(launch.promptFile ? { stdinFile: launch.promptFile } : {}),
    env: {
      RA_REPO: item.repo, RA_BASE_BRANCH: deps.config.repos[item.repo].base_branch, RA_EPISODE_KEY: `item-${item.id}`,
      RA_GITHUB_API: github.api_base, ...(github.token_file ? { RA_GITHUB_TOKEN_FILE: github.token_file } : {}),
    },
  };
}

/** Comments on the item's issue; one that fails to post is in the audit log (by commentOnIssue) and otherwise ignored. */
export async function tell(deps: Pick<DispatchDeps, "store" | "effects">, item: WorkItem, purpose: string, body: string): Promise<void> {
  try {
    await commentOnIssue(deps.store, deps.effects, { repo: item.repo, issue: item.issue, item: item.id, body, purpose });
  } catch {
    // Recorded as the comment's failed outcome; the session goes on and nothing retries it.
  }
}

/** The worker's pid and start time from its managed session's record, when it is on record. */
export function workerProcess(sessionRoot: string, sessionId: string): { pid: number | null; pid_started_at: string | null } {
  const record = readRecord(sessionRoot, sessionId);
  return { pid: record?.childPid ?? null, pid_started_at: record?.childStartedAt ?? null };
}

/** `ra-<repository name>-<issue>`: what a terminal tab and a resume picker show. */
export function sessionName(item: Pick<WorkItem, "repo" | "issue">): string {
  const repoName = item.repo.split("/")[1].replace(/[^A-Za-z0-9._-]/g, "-");
  return `ra-${repoName}-${item.issue}`;
}
