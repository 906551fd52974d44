/**
 * Settling claims cut short: an item stays `dispatching` only while the process that
 * claimed it (the daemon, or `resume` / `restart` from the command line) works on it.
 * Each claim records that process's pid and start time. When that process is proven gone
 * and the item is still `dispatching`, its dispatch was cut short (a crash, a kill, a
 * power cut) somewhere between the claim and the session row: the item becomes
 * `interrupted`, so `resume`, `restart`, `retry` or `reset` can take it on. Nothing is
 * guessed: a claimer that cannot be checked, or a claim that names none, leaves the item
 * as it is (DESIGN rule 1).
 *
 * When the cut came after its worker was launched, the worker is adopted from evidence
 * (lib/daemon/adopt-worker.ts: it runs, the audit log proves it launched for this dispatch
 * in the item's worktree): its session row is written as its start would have written it
 * and the item moves `dispatching -> active` in one transaction, and the issue is then told
 * where it runs, as that start would have told it. A worker that runs but is not proven
 * this dispatch's is named in the reason instead (the session the launch named, with why it
 * was not adopted; else one tagged for the item), so the owner can look at it or end it.
 * When the cut came during the launch and the launch has no outcome yet, the child it handed
 * the start to may still be writing its session's record: the item is left `dispatching`
 * (counted waiting, with a line saying why) until the unfinished-effect sweep settles the
 * launch after its kind's settleAfterSeconds. Nothing is signalled here.
 */
import { forgetPullList } from "../boundaries/github-state.ts";
import { claimerOf } from "../dispatch/claim.ts";
import { recordWorker, tellIssue } from "../dispatch/start-worker.ts";
import type { DispatchDeps } from "../dispatch/dispatch-deps.ts";
import { liveSessionOf } from "../dispatch/verbs/live-session.ts";
import { liveness, provenSameProcess } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { getItem, listItems } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { launchesWithoutRow, nextAttempt, sessionById } from "../work-items/sessions.ts";
import { advanceCursor, lastAuditId } from "../store/audit.ts";
import type { LogCursor } from "../store/audit.ts";
import { transition } from "../work-items/transition.ts";
import type { DaemonEvent } from "../events.ts";
import { adoptionOf, latestClaim, launchPending } from "./adopt-worker.ts";
import { neverStarted } from "./never-started.ts";
import type { NeverStarted } from "./never-started.ts";
import { REQUEUED, requeueCount } from "../dispatch/requeued-worktree.ts";

/** How many times in a row a dispatch cut short before any worker started goes back to the queue; the next time the item fails. */
export const REQUEUE_LIMIT = 3;
import type { Adoption } from "./adopt-worker.ts";

/** What settling claims works with: the store and session root, for an adoption the config, host and issue comments, and the launcher asked for a window. */
export type ClaimsDeps = Pick<DispatchDeps, "store" | "sessionRoot" | "config" | "stateDir" | "host" | "effects" | "launcher">;

/** What one pass over the claims did. */
export interface ClaimsResult {
  /** Items whose claimer is proven gone: now interrupted, or active with their worker adopted. */
  cutShort: number;
  /** Of those, the items whose worker was adopted. */
  adopted: number;
  /** Items whose claimer cannot be checked or is not on record: left dispatching. */
  unknown: number;
  /** Items whose claimer is gone mid-launch, the launch not settled yet (its child may still be starting): left dispatching. */
  waiting: number;
  /** Items whose dispatch was cut short before any worker started: back in the queue. */
  requeued: number;
  /** Of those cut short before any worker started, the items failed: back in the queue REQUEUE_LIMIT times in a row already. */
  failed: number;
  /** Workers a cut dispatch launched, recorded after their item had moved on (`recordLeftWorkers`). */
  recorded: number;
  events: DaemonEvent[];
}

/**
 * Settles every `dispatching` item whose claimer is proven gone: its worker adopted when proven,
 * else the item interrupted. Then records the workers left launched without a row
 * (`recordLeftWorkers`), reading the launches since `launches` (the daemon's cursor) when given.
 */
export async function settleClaims(deps: ClaimsDeps, launches?: LogCursor): Promise<ClaimsResult> {
  const result: ClaimsResult = { cutShort: 0, adopted: 0, unknown: 0, waiting: 0, requeued: 0, failed: 0, recorded: 0, events: [] };
  for (const item of listItems(deps.store, { states: ["dispatching"], includeSimulated: true })) {
    const claimer = claimerOf(deps.store, item.id);
    const state = claimer ? liveness(claimer) : "unknown";
    if (state === "running") continue;
    if (state === "unknown") {
      result.unknown++;
      continue;
    }
    // Cut mid-launch: the child it handed the start to may still write its session's record. Until the
    // unfinished-effect sweep settles the launch from that record (launched: adopted; not: interrupted), nothing is concluded.
    const pending = launchPending(deps.store, item.id, claimer!);
    if (pending) {
      result.waiting++;
      const name = typeof pending.body.session === "string" ? pending.body.session : pending.sessionId;
      result.events.push({
        event: "claim_waiting",
        line: `dispatch of ${item.repo}#${item.issue} (item ${item.id}) was cut short (pid ${claimer!.pid} ended) while launching session ${name}: ` +
          `left dispatching until that launch is settled from the session's record`,
        item: item.id, session: pending.sessionId, action_id: pending.actionId,
      });
      continue;
    }
    const live = liveSessionOf(deps.store, deps.sessionRoot, item.id, null);
    const adoption = await adoptionOf(deps, item, claimer!, live);
    if (!("not" in adoption)) {
      // Adopted, or what it stood on changed meanwhile: a later pass looks again.
      await adopt(deps, item, claimer!, adoption, result);
      continue;
    }
    // Nothing of it ever started (no worker, no window, no commit): back in the queue by itself, a few times.
    const proof = await neverStarted(deps, item);
    if (!("not" in proof)) {
      await requeue(deps, item, claimer!, proof, result);
      continue;
    }
    // The session its launch named, when it runs (or cannot be checked) and was not adopted; else one tagged for it.
    const launched = adoption.session;
    const session = launched?.record ?? (live.live !== false && live.session ? live.session : null);
    const still = launched
      ? `; session "${launched.record.name}" its launch started ${launched.runs === true ? "still runs" : "cannot be checked"}, not adopted: ${adoption.not}`
      : session
        ? `; session "${session.name}" tagged for it ${live.live === true ? "still runs" : "cannot be checked"}`
        : live.live === "unknown" ? `; whether a worker runs for it cannot be checked (${unreadable(live.unreadable)})` : "";
    // A fresh dispatch not put back in the queue says why: something of it may have started.
    const unqueued = proof.resumed ? "" : `; not put back in the queue: ${proof.not}`;
    const reason = `its dispatch was cut short: the process that claimed it (pid ${claimer!.pid}) ended before its worker was recorded${still}${unqueued}`;
    // Only while it is still dispatching on the claim read above: an owner's abandon, or a claim since, stands.
    const moved = deps.store.transaction(() => {
      if (getItem(deps.store, item.id)?.state !== "dispatching") return false;
      const now = claimerOf(deps.store, item.id);
      if (!now || !provenSameProcess(now, claimer!)) return false;
      transition(deps.store, item.id, "interrupted", { reason, details: { claimed_by: claimer, session: session?.id ?? null } });
      return true;
    });
    if (!moved) continue;
    result.cutShort++;
    const next = session
      ? `look at it with "robot-army session peek ${session.name}" or end it with "robot-army session kill ${session.name}", then resume or restart`
      : live.live === "unknown"
        ? `${unreadable(live.unreadable)}, so whether a worker runs for it is not known`
        : `"robot-army resume ${item.id}", "restart", "retry" or "reset" take it on`;
    result.events.push({
      event: "claim_cut_short",
      line: `dispatch of ${item.repo}#${item.issue} (item ${item.id}) was cut short (pid ${claimer!.pid} ended): item interrupted; ${next}`,
      item: item.id, session: session?.id ?? null,
    });
  }
  await recordLeftWorkers(deps, result, launches);
  return result;
}

/**
 * Puts an item whose dispatch was cut short before any worker started back in the queue, with
 * the worktree that dispatch left (the next one carries on in it), at most REQUEUE_LIMIT times
 * in a row; the next time it is `failed` with why, for the owner to look at. Only while it is
 * still dispatching on the claim read before: an owner's abandon, or a claim since, stands.
 */
async function requeue(deps: ClaimsDeps, item: WorkItem, claimer: ProcessIdentity, proof: NeverStarted, result: ClaimsResult): Promise<void> {
  const before = requeueCount(deps.store, item.id);
  const give = before >= REQUEUE_LIMIT;
  const cut = `its dispatch was cut short before any worker started: the process that claimed it (pid ${claimer.pid}) ended with no worker launched, ` +
    `no window open and no commit on its branch`;
  const kept = proof.worktree ? `; its worktree "${proof.worktree.path}" is kept` : "";
  const reason = give
    ? `${cut}, ${before + 1} times in a row (back in the queue the ${REQUEUE_LIMIT} times before)${kept}`
    : `${cut}; back in the queue (${before + 1} of ${REQUEUE_LIMIT})${kept}`;
  const moved = deps.store.transaction(() => {
    if (getItem(deps.store, item.id)?.state !== "dispatching") return false;
    const now = claimerOf(deps.store, item.id);
    if (!now || !provenSameProcess(now, claimer)) return false;
    const details = { claimed_by: claimer, worktree: proof.worktree, cut_before_start: before + 1 };
    transition(deps.store, item.id, give ? "failed" : "ready", { reason, details: give ? details : { ...details, [REQUEUED]: true } });
    return true;
  });
  if (!moved) return;
  const what = `dispatch of ${item.repo}#${item.issue} (item ${item.id}) was cut short (pid ${claimer.pid} ended) before any worker started`;
  if (give) {
    result.failed++;
    const next = proof.worktree
      ? `"robot-army resume ${item.id}" starts a worker in its worktree, "robot-army reset ${item.id}" discards it`
      : `"robot-army retry ${item.id}" puts it back in the queue`;
    result.events.push({ event: "claim_failed", line: `${what}, ${before + 1} times in a row: item failed; ${next}`, item: item.id });
    return;
  }
  result.requeued++;
  result.events.push({ event: "claim_requeued", line: `${what}: back in the queue (${before + 1} of ${REQUEUE_LIMIT})${kept}`, item: item.id });
}

/**
 * Records the adopted worker's row and makes its item `active`, then tells its issue as its
 * start would have. Inside the transaction, what was read before the await of adoptionOf is
 * read again: the item still `dispatching` on the same claim by the same claimer (an owner's
 * abandon, or a claim since, stands), no row for the session, and the launch's attempt still
 * the item's next; any of it changed, nothing is written and the item is left for a later pass
 * ("changed").
 */
export async function adopt(deps: ClaimsDeps, item: WorkItem, claimer: ProcessIdentity, adoption: Adoption, result: ClaimsResult): Promise<"adopted" | "changed"> {
  const { worker } = adoption;
  const reason = `its worker was adopted after its dispatch was cut short: the process that claimed it (pid ${claimer.pid}) ended after launching session "${worker.name}" and before recording it`;
  const row = deps.store.transaction(() => {
    if (getItem(deps.store, item.id)?.state !== "dispatching") return undefined;
    const now = claimerOf(deps.store, item.id);
    if (latestClaim(deps.store, item.id)?.id !== adoption.claim || !now || !provenSameProcess(now, claimer)) return undefined;
    if (sessionById(deps.store, worker.sessionId)) return undefined;
    if (nextAttempt(deps.store, item.id) !== adoption.attempt) return undefined;
    return recordWorker(deps, item, worker, { reason, details: { ...adoption.details, adopted: true, claimed_by: claimer, launch: adoption.launch } });
  });
  if (!row) return "changed";
  // Its branch is tracked only now: a pull request it opened before is read again, not passed over by a 304.
  forgetPullList(deps.store, deps.config.github.api_base, item.repo);
  result.cutShort++;
  result.adopted++;
  result.events.push({
    event: "worker_adopted",
    line: `dispatch of ${item.repo}#${item.issue} (item ${item.id}) was cut short (pid ${claimer.pid} ended) after its worker started: session ${worker.name} (${worker.sessionId}) adopted, item active`,
    item: item.id, session: worker.sessionId,
  });
  // The comment its start makes once the row is written: never made before (the cut came before the row), made once here.
  if (adoption.comment) await tellIssue(deps, item, adoption.comment.purpose, adoption.comment.body);
  return "adopted";
}

/**
 * Records the workers a cut-short dispatch launched whose item left `dispatching` before the
 * launch was settled (its issue closed meanwhile: the poll made it `done`): the launch's
 * outcome says it started, no row records it, and it runs. Left so, nothing would retire it
 * and it would hold a slot for good. The same evidence as an adoption is asked for (the
 * latest claim's claimer proven gone, its launch naming this session, the item's worktree on
 * the launch's branch); the row alone is written and the item keeps its state, so the worker
 * is watched, counted and retired like any other. Nothing is signalled and nothing said on
 * the issue (it has moved on). With a cursor, only the launches since the last pass are read,
 * and again those of items left unrecorded; every other launch behind it has its row.
 */
export async function recordLeftWorkers(deps: ClaimsDeps, result: ClaimsResult, cursor?: LogCursor): Promise<void> {
  const top = lastAuditId(deps.store);
  const launches = launchesWithoutRow(deps.store, cursor);
  for (const id of new Set(launches.map((launch) => launch.item))) await recordLeftWorker(deps, result, id);
  if (!cursor) return;
  // Read again next pass: every launch read here that still has no row (one whose item was recorded may have an older one).
  const left = launches.length ? launchesWithoutRow(deps.store, { after: top, again: launches.map((launch) => launch.id) }) : [];
  advanceCursor(cursor, top, left.map((launch) => launch.id));
}

/** Records the worker a cut dispatch of item `id` launched and left without a row, on the evidence `recordLeftWorkers` asks for. */
async function recordLeftWorker(deps: ClaimsDeps, result: ClaimsResult, id: number): Promise<void> {
  const item = getItem(deps.store, id);
  if (!item || item.state === "dispatching") return;
  const claim = latestClaim(deps.store, id);
  const claimer = claimerOf(deps.store, id);
  if (!claim || !claimer || liveness(claimer) !== "exited") return;
  const live = liveSessionOf(deps.store, deps.sessionRoot, id, null);
  const adoption = await adoptionOf(deps, item, claimer, live);
  if ("not" in adoption) return;
  const row = deps.store.transaction(() => {
    if (latestClaim(deps.store, id)?.id !== adoption.claim || sessionById(deps.store, adoption.worker.sessionId)) return undefined;
    if (nextAttempt(deps.store, id) !== adoption.attempt) return undefined;
    return recordWorker(deps, item, adoption.worker, null);
  });
  if (!row) return;
  forgetPullList(deps.store, deps.config.github.api_base, item.repo);
  result.recorded++;
  result.events.push({
    event: "worker_recorded",
    line: `dispatch of ${item.repo}#${item.issue} (item ${item.id}) was cut short (pid ${claimer.pid} ended) and its item is ${item.state}: ` +
      `session ${adoption.worker.name} (${adoption.worker.sessionId}) it launched runs, now recorded so it is watched and retired`,
    item: item.id, session: adoption.worker.sessionId,
  });
}

/** What could not be read: one session record, named, or the session root itself. */
function unreadable(record: string | undefined): string {
  return record ? `session record "${record}" cannot be read` : "the session root cannot be read";
}
