/**
 * Dispatch: ready work items become worker sessions. In queue order, each item the gate
 * lets through (lib/dispatch/gate.ts: the pause, the worker program, capacity, holds, caps,
 * the repository's trust) is claimed (`ready` -> `dispatching`) and started by startWorker
 * (lib/dispatch/start-worker.ts) in a new worktree on its own branch from the fetched base,
 * (audited `worktree.create`; its agent files checked again at that very commit) after its post-create steps, with its prompt. Once the session is confirmed the item is
 * `active` and its issue is told where it runs. A failure after the claim makes the item
 * `failed`: the reason goes to the item and the audit record, and the issue is told only
 * that a session could not be started (DESIGN rule 4).
 */
import { stillClaimedElsewhere, takeClaim } from "../work-items/issue-claims.ts";
import type { ClaimAnswer, Takeover } from "../work-items/issue-claims.ts";
import { BRANCH_PREFIX } from "../work-items/branch-name.ts";
import { createWorktree, runPostCreate, worktreePath } from "../boundaries/worktrees.ts";
import { vetAgentFiles } from "../repos/onboard.ts";
import { dispatchQueue } from "./queue.ts";
import { appendAudit, auditEffect } from "../store/audit.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import { branchName } from "../work-items/branch-name.ts";
import { claimDetails, FRESH_CLAIM } from "./claim.ts";
import { dispatchComment, takeoverComment } from "./comments.ts";
import { describeWait } from "./controls.ts";
import { gateForAll, gateForItem } from "./gate.ts";
import type { DispatchDeps } from "./dispatch-deps.ts";
import { startWorker, tellIssue } from "./start-worker.ts";
import { worktreeLeftByCut } from "./requeued-worktree.ts";
import { worktreeRoot } from "../work-items/worktree-root.ts";
import { baseBranchOf } from "../repos/base-branch.ts";

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
  const closed = await gateForAll(deps);
  if (closed) return { withheld: closed.reason, outcomes: [] };
  const { queue, held, held_for_owner, blocked, claimed_elsewhere } = dispatchQueue(deps.store, deps.config, { includeSimulated: deps.effects.simulated });
  // The queue holds no item the owner held, nor one held for the owner (its words may not be
  // theirs): those wait, each with why.
  const waiting = [
    ...held_for_owner.map(({ item, reason }) => ({ item, reason })),
    ...held.map(({ item, hold }) => ({ item, reason: describeWait(hold) })),
    ...blocked.map(({ item, reason }) => ({ item, reason })),
  ].filter(({ item }) => item.simulated === deps.effects.simulated);
  const outcomes: DispatchOutcome[] = waiting.map(({ item, reason }) => ({ item: item.id, repo: item.repo, issue: item.issue, result: "waiting", reason, session: null }));
  // Those another host held when last asked come after the queue, each asked again with one read of its claim's
  // reference, before any of the gate's questions: a claim released or moved since lets it go on.
  // A gone host's claim (its heartbeat stood still past the lease, no branch of the issue on GitHub) is taken over.
  const elsewhere = new Set(claimed_elsewhere.map(({ item }) => item.id));
  for (const { item } of [...queue, ...claimed_elsewhere]) {
    if (item.simulated !== deps.effects.simulated) continue;
    let takeover: Takeover | undefined;
    if (elsewhere.has(item.id)) {
      const answer = await stillClaimedElsewhere(deps, item, () => issueBranchOnGitHub(deps, item))
        .catch((error: unknown) => ({ waits: `its claim on GitHub could not be read (${error instanceof Error ? error.message : String(error)}); the start waits until it can be` }));
      if (answer && "waits" in answer) {
        outcomes.push({ item: item.id, repo: item.repo, issue: item.issue, result: "waiting", reason: answer.waits, session: null });
        continue;
      }
      takeover = answer?.takeover;
    }
    const shut = await gateForItem(deps, item);
    if (shut?.everyItem) return { withheld: shut.reason, outcomes };
    if (shut) {
      outcomes.push({ item: item.id, repo: item.repo, issue: item.issue, result: "waiting", reason: shut.reason, session: null });
      continue;
    }
    if (!deps.effects.worktrees || !deps.effects.sessions) {
      outcomes.push({ item: item.id, repo: item.repo, issue: item.issue, result: "would dispatch", reason: null, session: null });
      continue;
    }
    // Its issue's claim on GitHub, before the item is claimed here: a host that does not hold it starts nothing.
    // The claim names the session it is for, chosen now.
    const session = globalThis.crypto.randomUUID();
    const claim = await claimOrWait(deps, item, { session, takeover });
    if (!claim.held) {
      outcomes.push({ item: item.id, repo: item.repo, issue: item.issue, result: "waiting", reason: claim.reason, session: null });
      continue;
    }
    // Told, not waited on: the claim is this host's now, and a comment GitHub refuses is on record as failed.
    if (takeover) await tellIssue(deps, item, "takeover", takeoverComment(deps.host, takeover.host));
    outcomes.push(await dispatchItem(deps, item, session));
  }
  return { withheld: null, outcomes };
}

/** The item's claim on GitHub, or why it waits: held by another host, or GitHub could not be asked (a start never goes ahead on a claim not proven). */
async function claimOrWait(deps: DispatchDeps, item: WorkItem, start: { session: string; takeover?: Takeover }): Promise<ClaimAnswer> {
  try {
    return await takeClaim(deps, item, "dispatch", start);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { held: false, reason: `its claim on GitHub could not be made or read (${why}); the start waits until it can be` };
  }
}

/** A branch of the item's issue on GitHub (`robot-army/issue-<n>` or `robot-army/issue-<n>-...`), any host's: the first found, or null. */
async function issueBranchOnGitHub(deps: DispatchDeps, item: WorkItem): Promise<string | null> {
  const stem = `${BRANCH_PREFIX}issue-${item.issue}`;
  // The prefix with its dash, so issue 1 does not list issue 10's branches; the bare name read on its own.
  const [slugged] = await deps.github.matchingRefs(item.repo, `refs/heads/${stem}-`);
  if (slugged) return slugged.ref.slice("refs/heads/".length);
  return (await deps.github.readRef(item.repo, `refs/heads/${stem}`)) === null ? null : stem;
}

/** Claims one ready item and starts its worker in a new worktree (its session `sessionId` when given); any failure after the claim fails the item. */
export async function dispatchItem(deps: DispatchDeps, item: WorkItem, sessionId?: string): Promise<DispatchOutcome> {
  const { config } = deps;
  // The claim: the transition reads and writes the state in one transaction, so two passes never both win.
  transition(deps.store, item.id, "dispatching", { reason: "a slot is free", details: { ...claimDetails(), [FRESH_CLAIM]: true } });
  const repo = config.repos[item.repo];
  const started = await startWorker(deps, item, {
    sessionId,
    worktree: async () => {
      const root = worktreeRoot(config, deps.stateDir);
      const branch = branchName(item.issue, item.title);
      const base = baseBranchOf(deps.store, config, item.repo);
      const vet = (commit: string) => vetAgentFiles(deps.store, { name: item.repo, path: repo.path, base }, commit);
      // The one an earlier dispatch of it made before it was cut short, no worker ever started in it: carried on in, as it is.
      const left = await worktreeLeftByCut(deps.store, repo.path, item.id);
      if (left) {
        appendAudit(deps.store, { kind: "worktree.reused", repo: item.repo, item: item.id, body: { ...left, why: "made by a dispatch of it cut short before its worker started" } });
        await vet(left.head);
        await runPostCreate(left.path, config.worktrees.post_create);
        return { ...left, base };
      }
      // Audited (DESIGN rule 3): a crash while git makes it is settled from the folder and git's list of worktrees.
      const made = await auditEffect(
        deps.store,
        { kind: "worktree.create", repo: item.repo, item: item.id, body: { path: worktreePath(root, item.repo, item.issue), branch } },
        () => createWorktree({
          repoPath: repo.path, baseBranch: base, root, repo: item.repo, issue: item.issue, branch,
          // Its own fetch may bring a commit newer than the one the gate read: its agent files are checked again, there.
          vet,
        }),
        (worktree) => ({ path: worktree.path, branch: worktree.branch, head: worktree.head }),
      );
      await runPostCreate(made.path, config.worktrees.post_create);
      return made;
    },
    resume: null,
    prompt: true,
    becameActive: { reason: "its worker started" },
    comment: { purpose: "dispatched", body: (place) => dispatchComment(place) },
  });
  return { item: item.id, repo: item.repo, issue: item.issue, result: started.result, reason: started.reason, session: started.session };
}
