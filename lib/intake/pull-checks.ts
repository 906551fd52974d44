/**
 * What GitHub itself says back on an item's open pull request: a check that failed, and a
 * conflict with the base branch (lib/intake/feedback.ts keeps them as feedback, which reaches
 * the worker as a review does). A commit's checks are asked until they have all finished (or,
 * when it has none, until ten minutes after the head was first seen), then not again for that
 * head; the pull request's mergeability is asked once it moved or its base's tip moved (one
 * conditional request a repository tells that), and again while GitHub is still computing it.
 * So nothing is asked per item while nothing changes. A failure is told once per head and
 * check, a conflict once per head: neither again while it stays the same.
 */
import { RateLimitDeferred } from "../boundaries/github.ts";
import type { GitHubReader } from "../boundaries/github-types.ts";
import { printable } from "../printable.ts";
import { now } from "../clock.ts";
import type { Config } from "../config.ts";
import { knownBaseBranch } from "../repos/base-branch.ts";
import type { Store } from "../store/open.ts";
import type { NewFeedback, TrackedPull } from "./feedback-types.ts";

/** How long a head with no check at all is asked about: CI may be slow to start. */
export const NO_CHECKS_SETTLE_MS = 10 * 60_000;

/** How long a head whose checks never all finish is asked about: a check left pending for ever costs nothing past this. */
export const PENDING_CHECKS_LIMIT_MS = 2 * 3600_000;

/** The conclusions of a check run that failed. */
const FAILED = new Set(["failure", "timed_out", "cancelled", "action_required", "startup_failure"]);

/** What the checks pass works with. */
export interface PullChecksDeps {
  store: Store;
  github: Pick<GitHubReader, "commitChecks" | "pullMergeability" | "branchTip">;
  config: Pick<Config, "repos">;
}

/** The failed checks and conflicts found on these open pull requests, the requests it took, and what to remember of them once they are kept. */
export async function pullChecks(deps: PullChecksDeps, repo: string, open: readonly TrackedPull[]): Promise<{ found: NewFeedback[]; requests: number; failed: string[]; remember(): void }> {
  const found: NewFeedback[] = [];
  const failed: string[] = [];
  const updates: Update[] = [];
  let requests = 0;
  if (!open.length) return { found, requests, failed, remember() {} };
  const base = knownBaseBranch(deps.store, deps.config, repo);
  let tip: string | null = null;
  if (base) {
    tip = await deps.github.branchTip(repo, base);
    requests++;
  }
  for (const pull of open) {
    try {
      requests += await onePull(deps, repo, pull, tip, found, updates);
    } catch (error) {
      if (error instanceof RateLimitDeferred) throw error;
      // One pull request that cannot be read leaves the others'; it is asked again next pass.
      failed.push(`${repo}#${pull.number} checks: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return {
    found,
    requests,
    failed,
    remember() {
      for (const u of updates) deps.store.statement(`UPDATE pull_requests SET ${u.column} = ? WHERE repo = ? AND number = ?`).run(u.value, repo, u.number);
    },
  };
}

/** What is remembered of a pull request once its feedback is kept. */
type Update = { number: number; column: "checks_final_for" | "mergeability_read_for"; value: string };

/** Asks what one pull request's head and mergeability say; returns the requests it took. */
async function onePull(deps: PullChecksDeps, repo: string, pull: TrackedPull, tip: string | null, found: NewFeedback[], updates: Update[]): Promise<number> {
  let requests = 0;
  {
    const short = pull.head_sha.slice(0, 7);
    const piece = (p: Omit<NewFeedback, "item" | "finished" | "pull_request" | "created_at">): NewFeedback =>
      ({ ...p, item: pull.tracked.item, finished: false, pull_request: pull.number, created_at: pull.updated_at });
    if (pull.checks_final_for !== pull.head_sha) {
      const checks = await deps.github.commitChecks(repo, pull.head_sha);
      requests += 2;
      // Only the check's name and its link: what a check or a status says is anyone's who may push or any app's, never the owner's words.
      for (const run of checks.runs) {
        if (run.status !== "completed" || !FAILED.has(run.conclusion ?? "")) continue;
        found.push(piece({
          source: "check", github_id: `${pull.head_sha}:check:${run.name}`, author: printable(run.app ?? "checks"),
          what: `check ${JSON.stringify(printable(run.name).slice(0, 80))} ${run.conclusion === "failure" ? "failed" : `ended ${run.conclusion}`} on ${short} of pull request #${pull.number}`,
          body: "", url: run.url || pull.html_url,
        }));
      }
      for (const status of checks.statuses) {
        if (status.state !== "failure" && status.state !== "error") continue;
        found.push(piece({
          source: "check", github_id: `${pull.head_sha}:status:${status.context}`, author: printable(status.creator ?? "status"),
          what: `status ${JSON.stringify(printable(status.context).slice(0, 80))} is ${status.state} on ${short} of pull request #${pull.number}`,
          body: "", url: status.url || pull.html_url,
        }));
      }
      const finished = checks.runs.every((run) => run.status === "completed") && checks.statuses.every((status) => status.state !== "pending");
      const none = checks.runs.length + checks.statuses.length === 0;
      const age = now().getTime() - Date.parse(pull.seen_at);
      if ((finished && (!none || age > NO_CHECKS_SETTLE_MS)) || age > PENDING_CHECKS_LIMIT_MS) updates.push({ number: pull.number, column: "checks_final_for", value: pull.head_sha });
    }
    const key = `${pull.updated_at} ${tip ?? "?"}`;
    if (pull.mergeability_read_for !== key) {
      const merge = await deps.github.pullMergeability(repo, pull.number);
      requests++;
      if (merge.mergeable === false) {
        const onto = merge.base_branch;
        found.push(piece({
          source: "conflict", github_id: `${merge.head_sha}:conflict`, author: "github",
          what: `pull request #${pull.number} conflicts with ${printable(onto)} at ${merge.head_sha.slice(0, 7)}`,
          body: `Bring ${printable(onto)} into your branch and resolve the conflicts, then commit and push: git fetch origin ${printable(onto)} && git merge origin/${printable(onto)}`,
          url: pull.html_url,
        }));
      }
      // Still being computed: asked again next pass.
      if (merge.mergeable !== null) updates.push({ number: pull.number, column: "mergeability_read_for", value: key });
    }
  }
  return requests;
}
