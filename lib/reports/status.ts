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
import { itemOf, needsOf } from "./needs-you.ts";
import type { ItemJson, Need } from "./needs-you.ts";
import { NEEDS_YOU_STATES } from "../work-items/owner-commands.ts";
import type { NeedsYouState } from "../work-items/owner-commands.ts";

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
  /** Ready items waiting for other issues to close (lib/intake/dependencies.ts), with which. */
  blocked: Array<ItemJson & { priority: number; reason: string }>;
  /**
   * Everything that needs the owner, as the dashboard's first page shows it (lib/reports/needs-you.ts): items whose
   * worker asked something, failed, interrupted and awaiting review items (with the pull request to review; one whose
   * worker ended within seconds of its start, its last output lines), the open anomalies, the pause, and ready items
   * held, held for the owner and untrusted; each with why, since when and the commands that help.
   */
  needs_you: Need[];
  /** The work items' pull requests as last refreshed: open, merged, and closed unmerged. */
  pull_requests: { open: number; merged: number; closed: number };
  rate_limit: RateLimitState | null;
  /** The open anomalies, oldest first (`robot-army anomalies` lists and acknowledges them). */
  anomalies: Anomaly[];
  simulated_hidden: number;
}

export type { ItemJson, Need };

/** How many of a quick exit's last lines `status` and the needs page show; `show` and the item page show all. */
export const QUICK_EXIT_LINES_SHOWN = 5;

/** What the store says now; an absent store is an empty one. */
export function statusReport(store: Store | undefined, config: Config, includeSimulated: boolean, stateDir: string): StatusReport {
  const counts = Object.fromEntries(WORK_ITEM_STATES.map((state) => [state, 0])) as Record<WorkItemState, number>;
  const daemon = daemonStatus(stateDir, store);
  if (!store) return { daemon, counts, total: 0, paused: null, queue: [], held: [], untrusted: [], held_for_owner: [], claimed_elsewhere: [], blocked: [], hosts: [], needs_you: [], pull_requests: { open: 0, merged: 0, closed: 0 }, rate_limit: null, anomalies: [], simulated_hidden: 0 };
  const sql = `SELECT state, count(*) AS n FROM work_items${includeSimulated ? "" : " WHERE simulated = 0"} GROUP BY state`;
  for (const row of store.statement(sql).all() as Array<{ state: WorkItemState; n: number }>) counts[row.state] = row.n;
  const { paused, queue, held, untrusted, held_for_owner, claimed_elsewhere, blocked }: DispatchQueue = dispatchQueue(store, config, { includeSimulated });
  const waiting = {
    paused,
    held: held.map(({ item, priority, hold }) => ({
      ...itemJson(item), priority, hold: { on: hold.repo !== null ? "repository" as const : "item" as const, reason: hold.reason, set_at: hold.set_at }, unhold: unholdCommand(hold),
    })),
    untrusted: untrusted.map((u) => ({ ...itemJson(u.item), priority: u.priority, reason: u.reason, remedy: trustRemedy(u.item.repo, u.reason) })),
    held_for_owner: held_for_owner.map((h) => ({ ...itemJson(h.item), priority: h.priority, reason: h.reason })),
    anomalies: listAnomalies(store, { open: true }),
  };
  return {
    daemon,
    counts,
    total: Object.values(counts).reduce((sum, n) => sum + n, 0),
    paused,
    queue: queue.map((q) => ({ position: q.position, ...itemJson(q.item), priority: q.priority })),
    held: waiting.held,
    untrusted: waiting.untrusted,
    held_for_owner: waiting.held_for_owner,
    claimed_elsewhere: claimed_elsewhere.map((c) => ({ ...itemJson(c.item), priority: c.priority, host: c.host, reason: c.reason })),
    blocked: blocked.map((b) => ({ ...itemJson(b.item), priority: b.priority, reason: b.reason })),
    hosts: hostsSeen(store, config, hostName(config)),
    needs_you: needsOf(store, waiting, { includeSimulated, pullToReview: (item) => pullToReview(store, item) }),
    pull_requests: countPullRequests(store),
    // The boundary keys its records by the API base without a trailing slash.
    rate_limit: readRateLimitState(store, config.github.api_base.replace(/\/+$/, "")),
    anomalies: waiting.anomalies,
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
    blocked: report.blocked.filter((b) => keep(b, "ready")),
    // An item's need by its item's state (a held one is ready); an anomaly, as the anomalies below, by its repository
    // alone (one of no repository kept); the pause, which governs every item, always.
    needs_you: report.needs_you.filter((n) => {
      if (n.item !== null) return keep(n.item, NEEDS_YOU_STATES.includes(n.kind as NeedsYouState) ? n.kind as NeedsYouState : "ready");
      if (n.anomaly === null) return true;
      const about = report.anomalies.find((a) => a.id === n.anomaly)?.repo ?? null;
      return repo === null || about === null || about === repo;
    }),
    anomalies: report.anomalies.filter((a) => repo === null || a.repo === null || a.repo === repo),
    filter,
    items: items.map((item) => ({ ...itemJson(item), state: item.state, reason: item.reason, since: item.updated_at })),
  };
}

/** The pull request an item awaiting review waits on: its newest open one, else its newest merged one. */
function pullToReview(store: Store, item: number): Need["review"] {
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
export const itemJson: (item: WorkItem) => ItemJson = itemOf;
