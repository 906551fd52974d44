/**
 * What `robot-army status` reports and the dashboard shows, read from the store: whether the
 * daemon runs, work items by state, the dispatch queue as dispatch takes it (with the pause,
 * the held, the untrusted and the items held for the owner apart), what needs the owner,
 * the pull requests, the rate limit as last seen and the open anomalies. Simulated items
 * (made below the live effect level) are left out, and counted, unless asked for.
 */
import { hostsSeen } from "../daemon/host-heartbeats.ts";
import type { HostSeen } from "../daemon/host-heartbeats.ts";
import { readRateLimitState } from "../boundaries/github.ts";
import type { RateLimitState } from "../boundaries/github-types.ts";
import { hostName } from "../config.ts";
import type { Config } from "../config.ts";
import { daemonStatus } from "../daemon/daemon-status.ts";
import type { DaemonStatus } from "../daemon/daemon-status.ts";
import type { Hold, Pause } from "../dispatch/controls.ts";
import { countPullRequests, pullRequestsOf } from "../intake/pull-requests.ts";
import { dispatchQueue, trustRemedy } from "../dispatch/queue.ts";
import type { DispatchQueue, UntrustedReason } from "../dispatch/queue.ts";
import { listAnomalies } from "../store/anomalies.ts";
import type { Anomaly } from "../store/anomalies.ts";
import type { Store } from "../store/open.ts";
import { WORK_ITEM_STATES, countSimulated, listItems } from "../work-items/queries.ts";
import type { WorkItem, WorkItemState } from "../work-items/queries.ts";
import { quickExitsOf } from "../work-items/quick-exit.ts";
import type { QuickExit } from "../work-items/quick-exit.ts";
import { latestSession } from "../work-items/sessions.ts";

/** Everything `status` reports, as `--json` prints it. */
export interface StatusReport {
  daemon: DaemonStatus;
  counts: Record<WorkItemState, number>;
  total: number;
  /** The pause in force: the queue keeps its order, and nothing is dispatched from it. */
  paused: Pause | null;
  queue: Array<ItemJson & { position: number; priority: number }>;
  /** Ready items the owner held, by item or through the repository, and the command that lets each go. */
  held: Array<ItemJson & { priority: number; hold: { on: "item" | "repository"; reason: string | null; set_at: string }; unhold: string }>;
  /** Ready items whose repository is not trusted on this machine, why, and what trusts it. */
  untrusted: Array<ItemJson & { priority: number; reason: UntrustedReason; remedy: string }>;
  /** Ready items whose issue's words may not be yours (labelled or edited by someone else), why, and what lets each go. */
  held_for_owner: Array<ItemJson & { priority: number; reason: string }>;
  /** The hosts whose heartbeats this store has seen on GitHub (lib/daemon/host-heartbeats.ts), this one first. */
  hosts: HostSeen[];
  /** Ready items whose issue another host held on GitHub when last asked (its claim), who, and why each waits. */
  claimed_elsewhere: Array<ItemJson & { priority: number; host: string | null; reason: string }>;
  /**
   * What waits for the owner: items whose worker asked something (needs_info), failed items,
   * interrupted items, then items awaiting review, each with why and what to run (and, awaiting review, the pull request;
   * one whose worker ended within seconds of its start, its last output lines).
   */
  needs_you: NeedsYou[];
  /** The work items' pull requests as last refreshed: open, merged, and closed unmerged. */
  pull_requests: { open: number; merged: number; closed: number };
  rate_limit: RateLimitState | null;
  /** The open anomalies, oldest first (`robot-army anomalies` lists and acknowledges them). */
  anomalies: Anomaly[];
  simulated_hidden: number;
}

export type ItemJson = { id: number; repo: string; issue: number; title: string; created_at: string; simulated: boolean };

/**
 * An item that waits for its owner: its state, why (the worker's question, the failure, how
 * its worker ended), since when, and the command that helps; an item awaiting review has the
 * pull request to review, when one is known.
 */
export type NeedsYou = ItemJson & {
  state: NeedsYouState;
  reason: string | null;
  since: string;
  command: string;
  pull_request?: { number: number; url: string; merged: boolean };
  /** How its latest worker ended when that was within seconds of its start, with its last output lines. */
  quick_exit?: QuickExit;
};

/** How many of a quick exit's last lines `status` and the needs page show; `show` and the item page show all. */
export const QUICK_EXIT_LINES_SHOWN = 5;

/** The states that wait for the owner, in the order status lists them. */
const NEEDS_YOU_STATES = ["needs_info", "failed", "interrupted", "awaiting_review"] as const;

/** A state that waits for the owner. */
export type NeedsYouState = (typeof NEEDS_YOU_STATES)[number];

/** What helps an item in each state: answer its worker, put it back in the queue, bring its worker back, look at its work. */
const NEEDS_YOU_VERB: Record<NeedsYouState, string> = { needs_info: "attach", failed: "retry", interrupted: "resume", awaiting_review: "show" };

/** What the store says now; an absent store is an empty one. */
export function statusReport(store: Store | undefined, config: Config, includeSimulated: boolean, stateDir: string): StatusReport {
  const counts = Object.fromEntries(WORK_ITEM_STATES.map((state) => [state, 0])) as Record<WorkItemState, number>;
  const daemon = daemonStatus(stateDir, store);
  if (!store) return { daemon, counts, total: 0, paused: null, queue: [], held: [], untrusted: [], held_for_owner: [], claimed_elsewhere: [], hosts: [], needs_you: [], pull_requests: { open: 0, merged: 0, closed: 0 }, rate_limit: null, anomalies: [], simulated_hidden: 0 };
  const sql = `SELECT state, count(*) AS n FROM work_items${includeSimulated ? "" : " WHERE simulated = 0"} GROUP BY state`;
  for (const row of store.statement(sql).all() as Array<{ state: WorkItemState; n: number }>) counts[row.state] = row.n;
  const { paused, queue, held, untrusted, held_for_owner, claimed_elsewhere }: DispatchQueue = dispatchQueue(store, config, { includeSimulated });
  return {
    daemon,
    counts,
    total: Object.values(counts).reduce((sum, n) => sum + n, 0),
    paused,
    queue: queue.map((q) => ({ position: q.position, ...itemJson(q.item), priority: q.priority })),
    held: held.map(({ item, priority, hold }) => ({
      ...itemJson(item), priority, hold: { on: hold.repo !== null ? "repository" : "item", reason: hold.reason, set_at: hold.set_at }, unhold: unholdCommand(hold),
    })),
    untrusted: untrusted.map((u) => ({ ...itemJson(u.item), priority: u.priority, reason: u.reason, remedy: trustRemedy(u.item.repo, u.reason) })),
    held_for_owner: held_for_owner.map((h) => ({ ...itemJson(h.item), priority: h.priority, reason: h.reason })),
    claimed_elsewhere: claimed_elsewhere.map((c) => ({ ...itemJson(c.item), priority: c.priority, host: c.host, reason: c.reason })),
    hosts: hostsSeen(store, config, hostName(config)),
    needs_you: needsYou(store, includeSimulated),
    pull_requests: countPullRequests(store),
    // The boundary keys its records by the API base without a trailing slash.
    rate_limit: readRateLimitState(store, config.github.api_base.replace(/\/+$/, "")),
    anomalies: listAnomalies(store, { open: true }),
    simulated_hidden: includeSimulated ? 0 : countSimulated(store),
  };
}

/** What `status --state S --repo R` narrows the report to: items in those states, of that repository. */
export interface StatusFilter {
  states: readonly WorkItemState[] | null;
  repo: string | null;
}

/** An item `status --state/--repo` lists: its fields, state and why it is there. */
export type FilteredItem = ItemJson & { state: WorkItemState; reason: string | null; since: string };

/**
 * The report narrowed to the filter's items: the counts, the queue and its held, untrusted and
 * held-for-owner items, what needs the owner and the open anomalies of that repository (one of
 * no repository is kept), and every matching item listed with its state and why.
 */
export function filterStatus(report: StatusReport, store: Store | undefined, filter: StatusFilter, includeSimulated: boolean): StatusReport & { filter: StatusFilter; items: FilteredItem[] } {
  const { states, repo } = filter;
  const keep = (item: { repo: string }, state: WorkItemState) => (repo === null || item.repo === repo) && (states === null || states.includes(state));
  const items = store ? listItems(store, { repo: repo ?? undefined, states: states ?? undefined, includeSimulated }) : [];
  const counts = Object.fromEntries(WORK_ITEM_STATES.map((state) => [state, 0])) as Record<WorkItemState, number>;
  for (const item of items) counts[item.state]++;
  return {
    ...report,
    counts,
    total: items.length,
    queue: report.queue.filter((q) => keep(q, "ready")),
    held: report.held.filter((h) => keep(h, "ready")),
    untrusted: report.untrusted.filter((u) => keep(u, "ready")),
    held_for_owner: report.held_for_owner.filter((h) => keep(h, "ready")),
    claimed_elsewhere: report.claimed_elsewhere.filter((c) => keep(c, "ready")),
    needs_you: report.needs_you.filter((n) => keep(n, n.state)),
    anomalies: report.anomalies.filter((a) => repo === null || a.repo === null || a.repo === repo),
    filter,
    items: items.map((item) => ({ ...itemJson(item), state: item.state, reason: item.reason, since: item.updated_at })),
  };
}

/** The items that wait for the owner: needs_info first (a worker is waiting), then failed, interrupted, awaiting review, each oldest change first. */
function needsYou(store: Store, includeSimulated: boolean): NeedsYou[] {
  const waiting = NEEDS_YOU_STATES.flatMap((state) =>
    listItems(store, { states: [state], includeSimulated })
      .sort((a, b) => a.updated_at.localeCompare(b.updated_at) || a.id - b.id)
      .map((item) => {
        const pull = state === "awaiting_review" ? pullToReview(store, item.id) : undefined;
        return {
          ...itemJson(item), state, reason: item.reason, since: item.updated_at, command: `robot-army ${NEEDS_YOU_VERB[state]} ${item.id}`,
          ...(pull ? { pull_request: pull } : {}),
        };
      })
  );
  // Its newest worker's quick exit: a worker that ended at once is never reported without what it printed.
  const latest = waiting.flatMap((n) => latestSession(store, n.id) ?? []);
  const quick = quickExitsOf(store, latest);
  return waiting.map((n) => {
    const exit = quick.get(latest.find((session) => session.item === n.id)?.id ?? "");
    return exit ? { ...n, quick_exit: exit } : n;
  });
}

/** The pull request an item awaiting review waits on: its newest open one, else its newest merged one. */
function pullToReview(store: Store, item: number): NeedsYou["pull_request"] {
  const pulls = pullRequestsOf(store, item);
  if (pulls === "not checked") return undefined;
  const pull = pulls.findLast((p) => p.state === "open" && p.merged_at === null) ?? pulls.findLast((p) => p.merged_at !== null);
  return pull ? { number: pull.number, url: pull.html_url, merged: pull.merged_at !== null } : undefined;
}

/** The command that lets a hold go. */
export function unholdCommand(hold: Hold): string {
  return hold.repo !== null ? `robot-army unhold --repo ${hold.repo}` : `robot-army unhold ${hold.item}`;
}

/** The fields of an item every list shows. */
export function itemJson(item: WorkItem): ItemJson {
  return { id: item.id, repo: item.repo, issue: item.issue, title: item.title, created_at: item.created_at, simulated: item.simulated };
}
