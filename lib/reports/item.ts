/**
 * One work item as `robot-army show` prints it and the dashboard's item page shows it: its
 * issue as last read, its state and reason (a failed item's failure, a needs_info item's
 * question), whose words its issue holds, every state change from the audit log, its
 * sessions (one that ended within seconds of its start with its last output lines), its pull requests, the latest cleanup decision and the episode records archived
 * when its worktree was removed.
 */
import { ownerQuestion } from "../work-items/owner-commands.ts";
import { claimOf } from "../work-items/issue-claims.ts";
import type { ClaimRow } from "../work-items/issue-claims.ts";
import { bundleKept } from "../cleanup/cleanup.ts";
import { latestCleanup } from "../cleanup/records.ts";
import { archivedRecords } from "../cleanup/record-archive.ts";
import type { CleanupRecord } from "../cleanup/records.ts";
import type { Config } from "../config.ts";
import { trustSummary, trustRulesOf } from "../intake/issue-trust.ts";
import type { TrustSummary } from "../intake/issue-trust.ts";
import { pullRequestsOf } from "../intake/pull-requests.ts";
import { feedbackOf } from "../intake/feedback.ts";
import type { FeedbackRow } from "../intake/feedback.ts";
import type { PullRequestRow } from "../intake/pull-requests.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { getItem, listItems } from "../work-items/queries.ts";
import type { ItemSummary, WorkItem } from "../work-items/queries.ts";
import { quickExitsOf } from "../work-items/quick-exit.ts";
import type { QuickExit } from "../work-items/quick-exit.ts";
import { sessionsOf } from "../work-items/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";

/** What a needs_info item's worker asks (lib/work-items/owner-commands.ts), for `show`. */
export { ownerQuestion };

/** Which item: by id, or by its issue. */
export type ItemRef = { id: number } | { repo: string; issue: number };

/** One state change, as the audit log recorded it. */
export interface HistoryEntry {
  at: string;
  from: string | null;
  to: string;
  reason: string | null;
  simulated: boolean;
}

/** Everything known of one item, as `show --json` prints it. */
export type ItemReport = WorkItem & {
  url: string | null;
  failure: string | null;
  needs_info: { question: string; asked_at: string; answer: string } | null;
  trust: TrustSummary | null;
  history: HistoryEntry[];
  /** Its sessions, oldest first; one that ended by itself within seconds of its start with its last output lines. */
  sessions: ItemSession[];
  pull_requests: PullRequestRow[] | "not checked";
  /** What its owner and listed reviewers said since its worker started, oldest first, each with how it reached the worker (lib/intake/feedback.ts). */
  feedback: FeedbackRow[];
  cleanup: (CleanupRecord & { restorable: boolean }) | null;
  /** The episode records robot-army wrote that cleanup archived (`kept`: the copy is still on disk). */
  archived_records: ReturnType<typeof archivedRecords>;
  /** Its issue's claim on GitHub as last seen (lib/work-items/issue-claims.ts): this host's, or who else holds it; null when never claimed at live. */
  claim: ClaimRow | null;
};

/** How a piece of feedback reached the worker, in words: `typed into <session> at <time>`, `waiting: ...`. */
export function feedbackState(piece: FeedbackRow): string {
  switch (piece.delivered_how) {
    case "typed":
      return `typed into its worker at ${piece.delivered_at}`;
    case "resume":
      return `given to its worker at its resume, ${piece.delivered_at}`;
    case "prompt":
      return `in its next attempt's prompt, ${piece.delivered_at}`;
    case "not delivered":
      return "not given: the item is finished";
    case "superseded":
      return "not given: its pull request's head has moved on since";
    default:
      return piece.delivery_action ? "its typing was cut short: it may have reached the worker, and is not typed again" : "waiting for its worker to be idle (or to be resumed)";
  }
}

/** A session of the item, with its quick exit when it ended so (lib/work-items/quick-exit.ts). */
export type ItemSession = StoredSession & { quick_exit?: QuickExit };

/** The item's sessions, each with its quick exit when it had one. */
export function itemSessions(store: Store, item: number): ItemSession[] {
  const sessions = sessionsOf(store, item);
  const quick = quickExitsOf(store, sessions);
  return sessions.map((session) => (quick.has(session.id) ? { ...session, quick_exit: quick.get(session.id) } : session));
}

/** The item's report, read from the store. */
export function itemReport(store: Store, config: Config, item: WorkItem): ItemReport {
  const cleanup = latestCleanup(store, item.id);
  return {
    ...item,
    url: issueUrl(store, item, config.github.api_base),
    failure: item.state === "failed" ? item.reason : null,
    needs_info: ownerQuestion(item),
    trust: trustSummary(store, item, trustRulesOf(config.github)),
    history: historyOf(store, item.id),
    sessions: itemSessions(store, item.id),
    pull_requests: pullRequestsOf(store, item.id),
    feedback: feedbackOf(store, item.id),
    cleanup: cleanup ? { ...cleanup, restorable: cleanup.branch_outcome === "deleted" && bundleKept(cleanup) } : null,
    archived_records: archivedRecords(store, item.id),
    claim: claimOf(store, item.id) ?? null,
  };
}

/**
 * The item an id names, or the live (else the latest) item of an issue; of an issue's
 * items, a real one is preferred to a simulated one unless simulated ones are included.
 */
export function findItem(store: Store, ref: ItemRef, includeSimulated = false): WorkItem | undefined {
  if ("id" in ref) return getItem(store, ref.id);
  const all = listItems(store, { repo: ref.repo, includeSimulated: true }).filter((item) => item.issue === ref.issue);
  const pick = (items: WorkItem[]) => items.find((item) => item.state !== "done" && item.state !== "abandoned") ?? items.at(-1);
  return pick(includeSimulated ? all : all.filter((item) => !item.simulated)) ?? pick(all);
}

/** Every `state.work_item` record of the item, oldest first. */
export function historyOf(store: Store, id: number): HistoryEntry[] {
  return queryAudit(store, { kind: "state.work_item", item: id }).map((record) => ({
    at: record.at,
    from: typeof record.body.from === "string" ? record.body.from : null,
    to: String(record.body.to),
    reason: typeof record.body.reason === "string" ? record.body.reason : null,
    simulated: record.simulated,
  }));
}

/**
 * The issue's web address: as an audit record of the item gave it, else from the API
 * base when it is GitHub's own or an Enterprise server's `/api/v3`; null when not known.
 */
export function issueUrl(store: Store, item: WorkItem, apiBase: string): string | null {
  return issueUrls(store, [item], apiBase).get(item.id) ?? null;
}

/** The web addresses of these items' issues, as `issueUrl` finds each, in one query (the dashboard's rows). */
export function issueUrls(store: Store, items: readonly ItemSummary[], apiBase: string): Map<number, string | null> {
  const given = new Map<number, string>();
  // Oldest first, so each item's latest record naming an address is the one kept.
  const rows = store.statement(
    `SELECT item, json_extract(body, '$.html_url') AS url FROM audit
     WHERE item IN (SELECT value FROM json_each(?)) AND json_type(body, '$.html_url') = 'text' ORDER BY id`,
  ).all(JSON.stringify(items.map((item) => item.id))) as Array<{ item: number; url: string }>;
  for (const row of rows) given.set(row.item, row.url);
  const base = apiBase.replace(/\/+$/, "");
  const fromBase = (item: ItemSummary) => {
    if (base === "https://api.github.com") return `https://github.com/${item.repo}/issues/${item.issue}`;
    if (base.endsWith("/api/v3")) return `${base.slice(0, -"/api/v3".length)}/${item.repo}/issues/${item.issue}`;
    return null;
  };
  return new Map(items.map((item) => [item.id, given.get(item.id) ?? fromBase(item)]));
}
