/**
 * The dispatch queue: work items in `ready`, in the order dispatch takes them (the
 * repository's `priority` from the config, higher first, then the oldest item first),
 * and the ready items it passes over, each with why. This is the one place that decides
 * what dispatch may take, so `status` shows what dispatch does:
 *
 * - **untrusted**: the item's repository may not receive work on this machine (not in the
 *   config, not onboarded, or waiting for reapproval). Checked first: a repository that
 *   is not trusted here takes no work whatever the owner's holds say.
 * - **held for the owner**: the issue's words may not be the owner's: its label was added
 *   by someone else, or its body edited by someone else and not approved as it reads
 *   (`robot-army approve`), as GitHub was last seen to say (lib/intake/issue-trust.ts; the
 *   gate asks again before any start). Like untrusted, no hold or `--force` lifts it.
 * - **held**: the owner held the item, or its repository (`robot-army hold`).
 * - **paused**: the owner's pause stops every dispatch; the queue keeps its order, and
 *   dispatch takes nothing from it until `robot-army unpause`.
 * - **blocked**: the item's issue is blocked by another issue still open (GitHub's issue
 *   dependencies, or "blocked by #N" in the owner's words; lib/intake/dependencies.ts): it is
 *   dispatched once they close. A cycle of them is reported, not waited on.
 * - **claimed elsewhere**: another host (or another copy of this state) held the issue's
 *   claim on GitHub when it was last asked (lib/work-items/issue-claims.ts). Dispatch asks
 *   again after the queue, one request each: a claim released since lets the item start.
 */
import { hostName } from "../config.ts";
import type { Config } from "../config.ts";
import { findHold, pauseState } from "./controls.ts";
import type { Hold, Pause } from "./controls.ts";
import type { Store } from "../store/open.ts";
import { listItems } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { describeDoubt, storedDoubt, trustRulesOf } from "../intake/issue-trust.ts";
import type { IssueDoubt } from "../intake/issue-trust.ts";
import { getRepoRecord } from "../repos/records.ts";
import { blockedReason, itemsMaybeBlocked } from "../intake/dependencies.ts";
import { claimOf, describeHeld } from "../work-items/issue-claims.ts";

/** A ready item in the queue, with its place. */
export interface QueuedItem {
  /** 1 for the item dispatched next. */
  position: number;
  item: WorkItem;
  priority: number;
}

/** Why a repository may not receive work on this machine. */
export type UntrustedReason = "not in the config" | "not onboarded" | "needs reapproval";

/** A ready item whose repository is not trusted here, and why. */
export interface UntrustedItem {
  item: WorkItem;
  priority: number;
  reason: UntrustedReason;
}

/** A ready item the owner held, by itself or through its repository, with the hold. */
export interface HeldItem {
  item: WorkItem;
  priority: number;
  hold: Hold;
}

/** A ready item whose issue's words may not be the owner's, why, and what lets it go (`reason`). */
export interface HeldForOwnerItem {
  item: WorkItem;
  priority: number;
  doubt: IssueDoubt;
  reason: string;
}

/** A ready item whose issue another host held on GitHub when last asked, who, and why it waits. */
export interface ClaimedElsewhereItem {
  item: WorkItem;
  priority: number;
  /** The host its claim names; null when it names none. */
  host: string | null;
  reason: string;
}

/** A ready item whose issue waits for other issues to close, and which. */
export interface BlockedItem {
  item: WorkItem;
  priority: number;
  reason: string;
}

/** What dispatch may take, in order, and what it passes over and why; every list in dispatch order. */
export interface DispatchQueue {
  /** The owner's pause, when set: dispatch then takes nothing, the queue included. */
  paused: Pause | null;
  queue: QueuedItem[];
  held: HeldItem[];
  untrusted: UntrustedItem[];
  held_for_owner: HeldForOwnerItem[];
  blocked: BlockedItem[];
  claimed_elsewhere: ClaimedElsewhereItem[];
}

/** What keeps one ready item out of the queue: its repository's trust, else its issue's, else the owner's hold. */
export type OutOfQueue = { untrusted: UntrustedReason } | { doubt: IssueDoubt } | { held: Hold } | { blocked: string };

/**
 * Ready items in dispatch order, split into the queue, the held and the untrusted, with the
 * pause; simulated ones only when asked for.
 * @example
 * const { paused, queue } = dispatchQueue(store, config);
 * if (!paused) for (const { item } of queue) await dispatch(item);
 */
export function dispatchQueue(store: Store, config: Config, options: { includeSimulated?: boolean } = {}): DispatchQueue {
  const priority = (repo: string) => (Object.hasOwn(config.repos, repo) ? config.repos[repo].priority : 0);
  const ready = listItems(store, { states: ["ready"], includeSimulated: options.includeSimulated })
    .map((item) => ({ item, priority: priority(item.repo) }))
    // [dispatch] order: "priority" puts higher repository priority first; "oldest" is by age alone.
    .sort((a, b) => (config.dispatch.order === "priority" ? b.priority - a.priority : 0) || compare(a.item.created_at, b.item.created_at) || a.item.id - b.item.id);
  const result: DispatchQueue = { paused: pauseState(store) ?? null, queue: [], held: [], untrusted: [], held_for_owner: [], blocked: [], claimed_elsewhere: [] };
  const trust = new Map<string, UntrustedReason | null>();
  // Asked once for the whole queue: of thousands of ready items, only those that may be blocked are asked why.
  const maybeBlocked = ready.length ? itemsMaybeBlocked(store) : new Set<number>();
  for (const entry of ready) {
    const out = whyNotQueued(store, config, entry.item, trust, maybeBlocked);
    const claim = out ? undefined : claimOf(store, entry.item.id);
    if (!out && claim && !claim.mine && claim.released_at === null) {
      result.claimed_elsewhere.push({ ...entry, host: claim.host, reason: describeHeld(entry.item, claim.host, claim.host === hostName(config)) });
    } else if (!out) result.queue.push({ ...entry, position: result.queue.length + 1 });
    else if ("untrusted" in out) result.untrusted.push({ ...entry, reason: out.untrusted });
    else if ("doubt" in out) result.held_for_owner.push({ ...entry, doubt: out.doubt, reason: describeDoubt(entry.item.id, out.doubt, trustRules(config)!) });
    else if ("blocked" in out) result.blocked.push({ ...entry, reason: out.blocked });
    else result.held.push({ ...entry, hold: out.held });
  }
  return result;
}

/**
 * Why a ready item is not in the queue, or undefined when it is (the pause aside): what a
 * gate on one item (resume, restart) asks. `trust` caches each repository's answer within one pass.
 */
export function whyNotQueued(
  store: Store,
  config: Config,
  item: Pick<WorkItem, "id" | "repo" | "title" | "body">,
  trust: Map<string, UntrustedReason | null> = new Map(),
  maybeBlocked?: ReadonlySet<number>,
): OutOfQueue | undefined {
  if (!trust.has(item.repo)) trust.set(item.repo, untrustedReason(store, config, item.repo));
  const untrusted = trust.get(item.repo);
  if (untrusted) return { untrusted };
  const rules = trustRules(config);
  const doubt = rules && storedDoubt(store, item, rules);
  if (doubt) return { doubt };
  const hold = findHold(store, item.id, item.repo);
  if (hold) return { held: hold };
  const blocked = maybeBlocked && !maybeBlocked.has(item.id) ? null : blockedReason(store, item);
  return blocked ? { blocked } : undefined;
}

/** What trusts a repository again: the config, onboarding, or reapproval. */
export function trustRemedy(repo: string, reason: UntrustedReason): string {
  if (reason === "not in the config") return `add [repos."${repo}"] to the config`;
  return reason === "not onboarded" ? `"robot-army onboard ${repo}"` : `"robot-army onboard ${repo} --reapprove"`;
}

/** Why an untrusted repository takes no work, and what trusts it: the one wording status, dispatch and the relaunch verbs give. */
export function describeUntrusted(repo: string, reason: UntrustedReason): string {
  return `repository ${repo} ${reason === "needs reapproval" ? reason : `is ${reason}`}; ${trustRemedy(repo, reason)}`;
}

function untrustedReason(store: Store, config: Config, repo: string): UntrustedReason | null {
  if (!Object.hasOwn(config.repos, repo)) return "not in the config";
  const state = getRepoRecord(store, repo)?.state;
  if (state === undefined) return "not onboarded";
  return state === "needs_reapproval" ? "needs reapproval" : null;
}

/** Whose label and words are trusted, or undefined when `github.author` is unset (the gate then refuses every start). */
function trustRules(config: Config): { author: string; label: string } | undefined {
  return trustRulesOf(config.github);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
