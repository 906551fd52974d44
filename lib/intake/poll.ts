/**
 * Intake: one pass over the configured repositories that turns labelled issues into work
 * items and keeps the items in step with their issues. An issue opened by the author with
 * the label, the label added by the author too (asked of GitHub for the pass's new issues together), becomes an
 * item (`discovered`, then `ready` at once when its repository is onboarded, with a comment
 * naming the item); one whose title or body someone else changed is held for the owner
 * (lib/intake/issue-trust.ts); a closed issue makes its live item `done`
 * (this pass is the only writer of `done`); a label removed before dispatch abandons the
 * item; snapshots of live items are refreshed, and a held item whose issue changed is asked
 * about again (the owner may have put the label back themselves). An issue whose trust
 * GitHub could not tell is left for the next poll, and the others go on. Every state
 * change goes through `transition()`, which writes its audit record.
 */
import type { GitHubIssue, GitHubReader, IssueChanges, OwnIssueChanges } from "../boundaries/github-types.ts";
import { RateLimitDeferred } from "../boundaries/github.ts";
import { now } from "../clock.ts";
import type { Effects } from "../effects.ts";
import { commentOnIssue } from "../effects.ts";
import { describeChanges } from "../repos/fingerprint.ts";
import { checkFingerprint } from "../repos/onboard.ts";
import { getRepoRecord } from "../repos/records.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { StoreError } from "../store/store-file.ts";
import { createItem, getItem, listItems, liveItemOf, refreshSnapshot } from "../work-items/queries.ts";
import type { IssueSnapshot, WorkItem, WorkItemState } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import { decide } from "./decide.ts";
import type { IgnoreReason, IntakeRules } from "./decide.ts";
import { noteGitHubBlockers } from "./dependencies.ts";
import { describeDoubt, isOwner, readManyTrustFacts, readTrustFacts, recordTrust, storedDoubt } from "./issue-trust.ts";
import type { TrustFacts } from "./issue-trust.ts";

/** What a pass needs: the store, GitHub to read, the wired effects, and this host's name. */
export interface PollDeps {
  store: Store;
  reader: GitHubReader;
  effects: Effects;
  rules: IntakeRules;
  /** Named in the comment that tells an issue it was queued. */
  host: string;
  /** Each repository's local clone, from the config: part of the fingerprint onboarding approved. */
  paths: Readonly<Record<string, string>>;
}

/** One thing that happened to an issue, in the order it happened. */
export type PollEvent =
  | { event: "new"; issue: number; item: number; state: string }
  | { event: "ready" | "done" | "abandoned"; issue: number; item: number; reason: string }
  | { event: "superseded"; issue: number; item: number; reason: string }
  | { event: "label_removed"; issue: number; item: number; state: string }
  | { event: "ignored"; issue: number; reason: IgnoreReason; by?: string | null }
  | { event: "held"; issue: number; item: number; reason: string }
  | { event: "cleared"; issue: number; item: number }
  | { event: "unread"; issue: number; reason: string }
  | { event: "comment"; issue: number; item: number; body: string; simulated: boolean; url: string | null; error?: string };

/** What a pass did in one repository. */
export interface RepoPoll {
  repo: string;
  onboarded: boolean;
  new: number;
  ready: number;
  done: number;
  abandoned: number;
  ignored: number;
  /** Issues whose trust GitHub could not tell this pass: left for the next one. */
  unread: number;
  events: PollEvent[];
  requests: number;
  not_modified: number;
  /** Set when GitHub calls were held back: nothing was read, and the next poll after it reads. */
  deferred_until: string | null;
  /** Set when the repository could not be read. */
  error: string | null;
  /** Settings that changed since onboarding approved them: nothing is queued until `onboard --reapprove`. */
  needs_reapproval: string[] | null;
}

/** The states of an item waiting in the queue, where a hold for the owner keeps it. */
const QUEUED: readonly WorkItemState[] = ["discovered", "ready"];

/** The reason a live poll gives a simulated item it replaces with a real one. */
export const SUPERSEDED = "superseded by a live poll";

/**
 * Polls the repositories; one that cannot be read is reported and the others go on. When
 * several are polled and the author is the token's own user, one conditional request
 * (`GET /user/issues?filter=created`) reads the author's issues in all of them, so a poll
 * that finds nothing changed costs one request in all; its cost is reported on the first
 * repository. Otherwise each repository's issues are read apart (one request each when
 * nothing changed), which also sees, and counts as ignored, labelled issues others opened.
 *
 * The one request stands in for the repositories' own lists only while each of those was
 * read, whole or found unchanged, within the last `OWN_LIST_RECHECK_MS`; otherwise this
 * poll reads every repository apart. So a repository never read (just configured, or one
 * robot-army cannot read) is reported as such, never taken for one with no issues; a newly
 * configured one's issues from before the one list's last read are not skipped; and
 * whatever the one list leaves out (GitHub lists the user's owned and member repositories:
 * an organisation's reached through a team, or one renamed, may be missing) is read in its
 * own list within that time, from its own mark, so it is late but never lost.
 */
export async function pollRepositories(deps: PollDeps, repos: readonly string[]): Promise<RepoPoll[]> {
  const simulated = deps.effects.simulated;
  if (!(await readAsOne(deps, repos))) {
    const results: RepoPoll[] = [];
    for (const repo of repos) results.push(await pollRepository(deps, repo));
    return results;
  }
  let changes: OwnIssueChanges;
  try {
    changes = await deps.reader.ownIssueChanges(repos, { simulated });
  } catch (error) {
    if (error instanceof StoreError) throw error;
    return repos.map((repo) => {
      const result = emptyPoll(deps, repo);
      if (error instanceof RateLimitDeferred) result.deferred_until = error.until;
      else result.error = error instanceof Error ? error.message : String(error);
      return result;
    });
  }
  const results: RepoPoll[] = [];
  for (const [n, repo] of repos.entries()) {
    const cost = n === 0 ? { requests: changes.requests, notModified: changes.notModified } : { requests: 0, notModified: 0 };
    const issues = changes.issues[repo] ?? [];
    results.push(await pollRepository(deps, repo, { changed: changes.changed && issues.length > 0, issues, ...cost, commit() {} }));
  }
  // Remembered only once every repository took what it read: otherwise the next poll reads it all again.
  if (results.every((r) => r.error === null && r.deferred_until === null && r.unread === 0)) changes.commit();
  return results;
}

/** How long the one list may stand in for a repository's own list before that is read again. */
export const OWN_LIST_RECHECK_MS = 10 * 60_000;

/** Whether this poll reads the repositories as one list (see `pollRepositories`). */
async function readAsOne(deps: PollDeps, repos: readonly string[]): Promise<boolean> {
  if (repos.length < 2 || !(await authorIsTokenUser(deps))) return false;
  const after = now().getTime() - OWN_LIST_RECHECK_MS;
  return repos.every((repo) => {
    const readAt = deps.reader.issueListReadAt(repo, { simulated: deps.effects.simulated });
    return readAt !== undefined && Date.parse(readAt) > after;
  });
}

/** Whether intake's author is the login the token belongs to (asked of GitHub once, then remembered); not when that cannot be told. */
async function authorIsTokenUser(deps: PollDeps): Promise<boolean> {
  try {
    return (await deps.reader.tokenLogin())?.toLowerCase() === deps.rules.author.toLowerCase();
  } catch (error) {
    if (error instanceof StoreError) throw error;
    // Each repository is then read apart, and says for itself what went wrong.
    return false;
  }
}

function emptyPoll(deps: PollDeps, repo: string): RepoPoll {
  return {
    repo, onboarded: getRepoRecord(deps.store, repo)?.state === "onboarded",
    new: 0, ready: 0, done: 0, abandoned: 0, ignored: 0, unread: 0, events: [], requests: 0, not_modified: 0, deferred_until: null, error: null,
    needs_reapproval: null,
  };
}

/**
 * Reads what changed in one repository's issues and brings its work items in step; with
 * `given`, the changes were already read (for every repository at once), and its commit is
 * the caller's.
 */
export async function pollRepository(deps: PollDeps, repo: string, given?: IssueChanges): Promise<RepoPoll> {
  const { store, effects } = deps;
  const result = emptyPoll(deps, repo);
  let changes;
  try {
    changes = given ?? await deps.reader.issueChanges(repo, { simulated: effects.simulated });
  } catch (error) {
    // The store's failure is the whole poll's, never this repository's (nor GitHub's).
    if (error instanceof StoreError) throw error;
    if (error instanceof RateLimitDeferred) result.deferred_until = error.until;
    else result.error = error instanceof Error ? error.message : String(error);
    return result;
  }
  result.requests = changes.requests;
  result.not_modified = changes.notModified;
  // Something changed, so work may be queued: first make sure the repository is still the
  // one the owner approved. An unchanged poll (all 304) queues nothing and skips this read.
  if (changes.changed && result.onboarded) {
    try {
      const check = await checkFingerprint(store, deps.reader, { name: repo, path: deps.paths[repo] ?? "" });
      if (check.state !== "onboarded") {
        result.onboarded = false;
        result.needs_reapproval = [describeChanges(check.changes)];
      }
    } catch (error) {
      if (error instanceof StoreError) throw error;
      if (error instanceof RateLimitDeferred) result.deferred_until = error.until;
      else result.error = error instanceof Error ? error.message : String(error);
      return result;
    }
  }
  const issues = [...changes.issues].sort((a, b) => a.number - b.number);
  const asked = await askTrustOfMany(deps, repo, issues, result);
  for (const issue of issues) {
    try {
      const item = await applyIssue(deps, repo, issue, result, asked);
      if (item && result.onboarded) await tellQueued(deps, item, result);
    } catch (error) {
      // Who labelled or edited this issue could not be asked: it is left as it was, reported,
      // and the others go on. Any other error is not GitHub's to report.
      if (!(error instanceof TrustUnread)) throw error;
      if (error.cause instanceof RateLimitDeferred) result.deferred_until = error.cause.until;
      else result.error ??= `GitHub could not say who labelled and edited #${issue.number}: ${error.message}`;
      result.unread++;
      result.events.push({ event: "unread", issue: issue.number, reason: error.message });
    }
  }
  // Processed: only now may the next poll skip what this one read. An issue left unread
  // keeps it uncommitted, so the next poll reads them again and asks about that one.
  if (result.unread === 0) changes.commit();
  if (result.onboarded) {
    // Items discovered before the repository was onboarded join the queue now. A pass
    // queues only items of its own kind: a simulated pass never queues a real item
    // (whose comment would then never be posted), nor a live pass a simulated one.
    const waiting = listItems(store, { repo, states: ["discovered"], includeSimulated: true }).filter((item) => item.simulated === effects.simulated);
    for (const item of waiting) {
      markReady(deps, item, "its repository was onboarded since", result);
      await tellQueued(deps, item, result);
    }
  }
  return result;
}

/**
 * Applies the decision for one issue; returns the item when it made a new one (ready when
 * the repository is onboarded). Who labelled and edited it is taken from `asked` when that
 * holds it, else asked of GitHub for it alone.
 */
async function applyIssue(deps: PollDeps, repo: string, issue: GitHubIssue, result: RepoPoll, asked: ReadonlyMap<number, TrustFacts>): Promise<WorkItem | undefined> {
  const { store, effects } = deps;
  let live = liveItemOf(store, repo, issue.number);
  if (live && supersedes(deps, live)) {
    transition(store, live.id, "abandoned", { reason: SUPERSEDED });
    result.events.push({ event: "superseded", issue: issue.number, item: live.id, reason: SUPERSEDED });
    live = undefined;
  }
  const decision = decide(issue, live, deps.rules);
  const snapshot = snapshotOf(repo, issue);
  switch (decision.kind) {
    case "take": {
      // Asked only of a candidate: who added the label, and who changed the title or body.
      const facts = await askTrust(deps, repo, issue.number, result, asked);
      if (!isOwner(facts.labelledBy, deps.rules)) {
        result.ignored++;
        result.events.push({ event: "ignored", issue: issue.number, reason: "labelled by someone else", by: facts.labelledBy });
        return undefined;
      }
      // One transaction: the item is never seen discovered in an onboarded repository, nor without its trust.
      // Not synced to the disk on its own (Store.unsynced): the list's mark, saved (synced) after the pass's items, carries
      // it there. Lost with the machine before that, it is lost with the mark, so the next poll reads the list again and
      // makes it again; and nothing outside names it before a synced commit does (the queued comment's intent).
      const made = store.unsynced(() => store.transaction(() => {
        const item = createItem(store, snapshot, { simulated: effects.simulated });
        result.new++;
        result.events.push({ event: "new", issue: issue.number, item: item.id, state: item.state });
        if (result.onboarded) markReady(deps, item, "its repository is onboarded", result);
        noteGitHubBlockers(store, item.id, issue);
        return { item, doubt: recordTrust(store, item, facts, deps.rules) };
      }));
      if (made.doubt) result.events.push({ event: "held", issue: issue.number, item: made.item.id, reason: describeDoubt(made.item.id, made.doubt, deps.rules) });
      return made.item;
    }
    case "refresh":
      refreshSnapshot(store, live!.id, snapshot);
      noteGitHubBlockers(store, live!.id, issue);
      await askAgainIfHeld(deps, repo, live!.id, result, asked);
      return undefined;
    case "done":
      store.transaction(() => {
        refreshSnapshot(store, live!.id, snapshot);
        transition(store, live!.id, "done", { reason: "issue closed", issueClosedObserved: true, details: { closed_at: issue.closed_at } });
      });
      result.done++;
      result.events.push({ event: "done", issue: issue.number, item: live!.id, reason: "issue closed" });
      return undefined;
    case "abandon":
      store.transaction(() => {
        refreshSnapshot(store, live!.id, snapshot);
        transition(store, live!.id, "abandoned", { reason: decision.reason });
      });
      result.abandoned++;
      result.events.push({ event: "abandoned", issue: issue.number, item: live!.id, reason: decision.reason });
      return undefined;
    case "label-removed-after-dispatch":
      store.transaction(() => {
        refreshSnapshot(store, live!.id, snapshot);
        appendAudit(store, {
          kind: "work_item.label_removed", repo, item: live!.id, simulated: live!.simulated,
          body: { issue: issue.number, state: live!.state, label: deps.rules.label, note: "after dispatch: the work goes on" },
        });
      });
      result.events.push({ event: "label_removed", issue: issue.number, item: live!.id, state: live!.state });
      return undefined;
    case "ignore":
      result.ignored++;
      result.events.push({ event: "ignored", issue: issue.number, reason: decision.reason });
      return undefined;
    case "none":
      return undefined;
  }
}

/**
 * Asks GitHub again about a held item whose issue changed: the owner may have taken the
 * label off and put it back, or changed the words back. Only items held in the queue
 * (`discovered`, `ready`) are asked, and only when their issue is among the changed ones,
 * so an unchanged poll costs nothing more; a later start asks the gate in any case.
 */
async function askAgainIfHeld(deps: PollDeps, repo: string, id: number, result: RepoPoll, asked: ReadonlyMap<number, TrustFacts>): Promise<void> {
  const item = getItem(deps.store, id)!;
  if (!QUEUED.includes(item.state) || !storedDoubt(deps.store, item, deps.rules)) return;
  const doubt = recordTrust(deps.store, item, await askTrust(deps, repo, item.issue, result, asked), deps.rules);
  if (doubt) result.events.push({ event: "held", issue: item.issue, item: item.id, reason: describeDoubt(item.id, doubt, deps.rules) });
  else result.events.push({ event: "cleared", issue: item.issue, item: item.id });
}

/**
 * Asks GitHub at once about every issue of this pass whose trust applyIssue will ask (each
 * one it takes, each held item in the queue whose issue changed): one GraphQL request per
 * TRUST_BATCH of them where each alone costs two. What that answer does not vouch for is
 * asked alone at its turn, as before; the requests are counted in the pass.
 */
async function askTrustOfMany(deps: PollDeps, repo: string, issues: readonly GitHubIssue[], result: RepoPoll): Promise<ReadonlyMap<number, TrustFacts>> {
  const wanted = issues.filter((issue) => willAskTrust(deps, repo, issue)).map((issue) => issue.number);
  if (wanted.length === 0) return new Map();
  const sent = deps.reader.requestsSent();
  try {
    return await readManyTrustFacts(deps.reader, repo, wanted, deps.rules);
  } finally {
    result.requests += deps.reader.requestsSent() - sent;
  }
}

/** Whether applyIssue will ask who labelled and edited this issue: the decision it will take, read ahead, nothing done. */
function willAskTrust(deps: PollDeps, repo: string, issue: GitHubIssue): boolean {
  const found = liveItemOf(deps.store, repo, issue.number);
  const live = found && supersedes(deps, found) ? undefined : found;
  const decision = decide(issue, live, deps.rules);
  if (decision.kind === "take") return true;
  // As askAgainIfHeld asks once the item's snapshot holds the issue's words.
  return decision.kind === "refresh" && QUEUED.includes(live!.state) && storedDoubt(deps.store, { id: live!.id, title: issue.title, body: issue.body }, deps.rules) !== undefined;
}

/** Whether this pass replaces a live item with a new one: a simulated item, seen by a live poll. */
function supersedes(deps: PollDeps, live: WorkItem): boolean {
  return live.simulated && !deps.effects.simulated;
}

/** Who labelled, renamed and edited an issue: from `asked`, else asked of GitHub; the requests are counted in the pass, a failure is TrustUnread. */
async function askTrust(deps: PollDeps, repo: string, issue: number, result: RepoPoll, asked: ReadonlyMap<number, TrustFacts>): Promise<TrustFacts> {
  const known = asked.get(issue);
  if (known) return known;
  const sent = deps.reader.requestsSent();
  try {
    return await readTrustFacts(deps.reader, repo, issue, deps.rules);
  } catch (error) {
    throw new TrustUnread(error);
  } finally {
    // The pass reports every request it made, these included.
    result.requests += deps.reader.requestsSent() - sent;
  }
}

/** GitHub could not say who labelled or edited an issue: it is left for the next poll, uncommitted. */
class TrustUnread extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = "TrustUnread";
  }
}

/** Moves an item to `ready`. */
function markReady(deps: PollDeps, item: WorkItem, reason: string, result: RepoPoll): void {
  transition(deps.store, item.id, "ready", { reason });
  result.ready++;
  result.events.push({ event: "ready", issue: item.issue, item: item.id, reason });
}

/** Tells a queued item's issue, with identifiers only (DESIGN rule 4). */
async function tellQueued(deps: PollDeps, item: WorkItem, result: RepoPoll): Promise<void> {
  const body = queuedComment(item.id, deps.host);
  try {
    const made = await commentOnIssue(deps.store, deps.effects, { repo: item.repo, issue: item.issue, item: item.id, body, purpose: "queued" });
    result.events.push({ event: "comment", issue: item.issue, item: item.id, body, simulated: made.simulated, url: made.url });
  } catch (error) {
    // The item stays queued; the failure is in the comment's audit outcome and in this report.
    const message = error instanceof Error ? error.message : String(error);
    result.events.push({ event: "comment", issue: item.issue, item: item.id, body, simulated: deps.effects.simulated, url: null, error: message });
  }
}

/** The public comment on a queued issue: the item's number and the host, nothing else. */
export function queuedComment(item: number, host: string): string {
  return `robot-army queued this issue as work item ${item} on ${host}.`;
}

function snapshotOf(repo: string, issue: GitHubIssue): IssueSnapshot {
  return {
    repo, issue: issue.number, title: issue.title, body: issue.body, author: issue.author,
    labels: issue.labels, issue_state: issue.state, issue_updated_at: issue.updated_at,
  };
}
