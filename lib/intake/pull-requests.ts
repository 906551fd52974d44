/**
 * Pull requests tracked: each pass refreshes the pull requests of active and recently done
 * work items (the one opened from the item's branch, its state, whether and when it merged,
 * its head SHA) with one conditional list request per repository, never one per item, and
 * one 304 per repository when nothing changed; while the rate limit all hosts share is
 * tight, a repository at most every five minutes. A pull request is an item's when its head
 * branch is one of the item's sessions' branches. The rows live in `pull_requests`; when
 * GitHub last answered for a repository lives in `pull_request_refreshes`, so an item can
 * tell `none` (GitHub answered there is none) from `not checked` (never asked, or it
 * could not be).
 *
 * @example
 * const refresh = await refreshPullRequests({ store, github, config });
 * const merged = mergedPullRequest(store, item.id); // retirement's first signal
 */
import { RateLimitDeferred } from "../boundaries/github.ts";
import type { GitHubPullRequest, GitHubReader } from "../boundaries/github-types.ts";
import { TIGHT_PULL_REFRESH_MS, rateLimitTight } from "../boundaries/rate-budget.ts";
import { isoSeconds, now, parseTimestamp } from "../clock.ts";
import type { Config } from "../config.ts";
import type { Store } from "../store/open.ts";
import { StoreError } from "../store/store-file.ts";
import { getItem } from "../work-items/queries.ts";
import type { ItemSummary } from "../work-items/queries.ts";
import { sessionsOf, trackedSessionBranches } from "../work-items/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";

/** What a refresh works with. */
export interface PullRequestDeps {
  store: Store;
  github: Pick<GitHubReader, "pullChanges" | "rateLimit">;
  config: Pick<Config, "repos">;
}

/** A pull request as stored: what GitHub last said of it. */
export interface PullRequestRow extends GitHubPullRequest {
  repo: string;
  /** When a refresh first read it as it is now (its last change, as robot-army saw it). */
  seen_at: string;
}

/** Something a refresh saw change in a pull request of an item. */
export interface PullRequestChange {
  repo: string;
  number: number;
  item: number;
  /** `opened`: first seen (open); `merged`, `closed` (unmerged), `reopened`: its state changed, or it was first seen so. */
  change: "opened" | "merged" | "closed" | "reopened";
  html_url: string;
}

/** What a refresh did, over every repository it asked. */
export interface PullRequestRefresh {
  /** Repositories asked (those with items to refresh). */
  repos: number;
  /** Their names: what the feedback pass asks about after it (lib/intake/feedback.ts). */
  asked: string[];
  requests: number;
  notModified: number;
  /** Pull requests of items written (new or changed). */
  stored: number;
  /** Each repository that could not be read, with why: `owner/name: reason`. */
  failed: string[];
  /** Repositories not asked this pass because the rate limit is tight and they were refreshed less than five minutes ago. */
  slowed: number;
  /** Set when GitHub calls were held back for the rate limit: those repositories were not asked, and are asked after it. */
  deferredUntil: string | null;
  events: PullRequestChange[];
}

/** How long a done item's pull requests are still refreshed: a week. */
export const RECENTLY_DONE_MS = 7 * 24 * 3600 * 1000;

/**
 * Refreshes the pull requests of every configured repository that has active or recently
 * done items, one repository after another; one that fails is named in `failed` and the
 * others go on; calls held back for the rate limit are not a failure (`deferredUntil`).
 * A store that fails ends the refresh (it is the store's error, not GitHub's). A first
 * refresh of a repository reads back to its oldest tracked item's first session start.
 */
export async function refreshPullRequests(deps: PullRequestDeps): Promise<PullRequestRefresh> {
  const result: PullRequestRefresh = { repos: 0, asked: [], requests: 0, notModified: 0, stored: 0, slowed: 0, failed: [], deferredUntil: null, events: [] };
  const tracked = trackedBranches(deps.store, Object.keys(deps.config.repos));
  // An optional request: while the hosts' shared rate limit is tight, each repository is asked at most every five minutes.
  const tight = rateLimitTight(deps.github.rateLimit(), now());
  for (const [repo, { branches, since }] of tracked) {
    if (tight && refreshedWithin(deps.store, repo, TIGHT_PULL_REFRESH_MS)) {
      result.slowed++;
      continue;
    }
    result.repos++;
    result.asked.push(repo);
    // Recorded as the time of the question, not of the answer: a session started while it was asked was not covered.
    const askedAt = isoSeconds(now());
    try {
      const changes = await deps.github.pullChanges(repo, { since });
      result.requests += changes.requests;
      result.notModified += changes.notModified;
      const mine = changes.pulls.filter((pull) => branches.has(pull.head_branch));
      deps.store.transaction(() => {
        for (const pull of mine) {
          const change = storePull(deps.store, repo, pull);
          if (change === "unchanged") continue;
          result.stored++;
          if (change !== "moved") result.events.push({ repo, number: pull.number, item: branches.get(pull.head_branch)!, change, html_url: pull.html_url });
        }
        deps.store.statement(
          `INSERT INTO pull_request_refreshes (repo, refreshed_at) VALUES (?, ?)
           ON CONFLICT (repo) DO UPDATE SET refreshed_at = excluded.refreshed_at`,
        ).run(repo, askedAt);
      });
      // Only once they are stored: a crash before this reads them again.
      changes.commit();
    } catch (error) {
      repositoryFailed(result, repo, error);
    }
  }
  return result;
}

/**
 * What a pass over repositories does with one repository's failure: the store's own error ends
 * the pass; calls held back to spare the rate limit are no failure (the next pass after the
 * reset asks, `deferredUntil`); anything else is named in `failed` and the other repositories go on.
 */
export function repositoryFailed(result: { failed: string[]; deferredUntil: string | null }, repo: string, error: unknown): void {
  if (error instanceof StoreError) throw error;
  if (error instanceof RateLimitDeferred) result.deferredUntil = error.until;
  else result.failed.push(`${repo}: ${error instanceof Error ? error.message : String(error)}`);
}

/** Whether GitHub answered for the repository's pull requests less than `ms` ago. */
function refreshedWithin(store: Store, repo: string, ms: number): boolean {
  const row = store.statement("SELECT refreshed_at FROM pull_request_refreshes WHERE repo = ?").get(repo) as { refreshed_at: string } | undefined;
  return row !== undefined && now().getTime() - Date.parse(row.refreshed_at) < ms;
}

/**
 * The item's pull requests, lowest number first; `[]` when GitHub answered for its
 * repository after its first session started, while the item was refreshed, and none came
 * from its branches; "not checked" otherwise (never asked since, the item no longer
 * refreshed then, or no session, so no branch). The dashboard asks this of many items at
 * once: `pullRequestsOfItems`.
 */
export function pullRequestsOf(store: Store, itemId: number): PullRequestRow[] | "not checked" {
  const item = getItem(store, itemId);
  if (!item) return "not checked";
  return pullRequestsOfItems(store, [{ item, sessions: sessionsOf(store, itemId) }]).get(itemId)!;
}

/**
 * The pull requests of each of these items (given with their sessions), as `pullRequestsOf`
 * finds them, in two queries however many items (the dashboard's rows).
 */
export function pullRequestsOfItems(store: Store, known: ReadonlyArray<{ item: ItemSummary; sessions: readonly StoredSession[] }>): Map<number, PullRequestRow[] | "not checked"> {
  const pairs = [...new Set(known.flatMap(({ item, sessions }) => sessions.map((s) => JSON.stringify([item.repo, s.branch]))))];
  const rows = pairs.length === 0 ? [] : store.statement(
    `SELECT repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at FROM pull_requests
     WHERE (repo, head_branch) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)) ORDER BY number`,
  ).all(`[${pairs.join(",")}]`) as unknown as PullRequestRow[];
  const refreshes = new Map((store.statement("SELECT repo, refreshed_at FROM pull_request_refreshes").all() as Array<{ repo: string; refreshed_at: string }>)
    .map((row) => [row.repo, row.refreshed_at]));
  const result = new Map<number, PullRequestRow[] | "not checked">();
  for (const { item, sessions } of known) {
    const branches = new Set(sessions.map((s) => s.branch));
    if (!branches.size) {
      result.set(item.id, "not checked");
      continue;
    }
    const firstStarted = Math.min(...sessions.map((s) => Date.parse(s.started_at)));
    // A branch is named for its issue, so an earlier item of the same issue (the label put back) had it too:
    // a pull request merged, or last changed, before this item's first session is that one's, not this one's.
    const mine = rows.filter((row) => row.repo === item.repo && branches.has(row.head_branch) && Date.parse(row.merged_at ?? row.updated_at) >= firstStarted);
    if (mine.length) {
      result.set(item.id, mine.map((row) => ({ ...row })));
      continue;
    }
    const at = parseTimestamp(refreshes.get(item.repo))?.getTime();
    result.set(item.id, at !== undefined && at >= firstStarted && trackedAt(item, at) ? [] : "not checked");
  }
  return result;
}

/** Whether a refresh at `at` (ms) looked for the item's pull requests: it was not finished then, or done within the week before. */
function trackedAt(item: ItemSummary, at: number): boolean {
  if (item.state !== "done" && item.state !== "abandoned") return true;
  const finished = Date.parse(item.updated_at);
  return at <= finished || (item.state === "done" && at - finished < RECENTLY_DONE_MS);
}

/** The item's most recently merged pull request, or undefined when none merged (or none is known). */
export function mergedPullRequest(store: Store, itemId: number): PullRequestRow | undefined {
  const pulls = pullRequestsOf(store, itemId);
  if (pulls === "not checked") return undefined;
  return pulls.filter((pull) => pull.merged_at !== null).sort((a, b) => Date.parse(b.merged_at!) - Date.parse(a.merged_at!))[0];
}

/** How many stored pull requests (each one some item's) are open, merged, and closed unmerged (for `status`). */
export function countPullRequests(store: Store): { open: number; merged: number; closed: number } {
  const rows = store.statement(
    "SELECT state, merged_at IS NOT NULL AS merged, count(*) AS n FROM pull_requests GROUP BY state, merged",
  ).all() as Array<{ state: string; merged: number; n: number }>;
  const counts = { open: 0, merged: 0, closed: 0 };
  for (const row of rows) counts[row.merged ? "merged" : row.state === "open" ? "open" : "closed"] += row.n;
  return counts;
}

/** A repository's branches to refresh, each with its item (the newest, when two share it), and the oldest session start among them (how far back a first refresh reads). */
interface TrackedRepo {
  branches: Map<string, number>;
  since: string;
}

/**
 * The branches of the items whose pull requests a pass refreshes, by repository: items
 * not finished, and items done within the last week, that have a session (so a branch).
 */
function trackedBranches(store: Store, repos: string[]): Map<string, TrackedRepo> {
  const tracked = new Map<string, TrackedRepo>();
  if (!repos.length) return tracked;
  const doneSince = isoSeconds(new Date(now().getTime() - RECENTLY_DONE_MS));
  const rows = trackedSessionBranches(store, repos, doneSince);
  for (const { id, repo, branch, started_at } of rows) {
    const entry = tracked.get(repo) ?? { branches: new Map<string, number>(), since: started_at };
    entry.branches.set(branch, id);
    if (Date.parse(started_at) < Date.parse(entry.since)) entry.since = started_at;
    tracked.set(repo, entry);
  }
  return tracked;
}

/** Writes what GitHub said of a pull request; says what changed (`moved`: only its head or times). */
function storePull(store: Store, repo: string, pull: GitHubPullRequest): PullRequestChange["change"] | "moved" | "unchanged" {
  const before = store.statement("SELECT head_branch, head_sha, state, merged_at, updated_at, html_url FROM pull_requests WHERE repo = ? AND number = ?")
    .get(repo, pull.number) as Omit<GitHubPullRequest, "number"> | undefined;
  const same = before && before.head_branch === pull.head_branch && before.head_sha === pull.head_sha && before.state === pull.state &&
    before.merged_at === pull.merged_at && before.updated_at === pull.updated_at && before.html_url === pull.html_url;
  if (same) return "unchanged";
  store.statement(
    `INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (repo, number) DO UPDATE SET head_branch = excluded.head_branch, head_sha = excluded.head_sha, state = excluded.state,
       merged_at = excluded.merged_at, updated_at = excluded.updated_at, html_url = excluded.html_url, seen_at = excluded.seen_at`,
  ).run(repo, pull.number, pull.head_branch, pull.head_sha, pull.state, pull.merged_at, pull.updated_at, pull.html_url, isoSeconds(now()));
  const stateOf = (p: { state: string; merged_at: string | null }) => (p.merged_at !== null ? "merged" : p.state === "open" ? "opened" : "closed");
  const after = stateOf(pull);
  if (!before) return after;
  if (stateOf(before) === after) return "moved";
  return after === "opened" ? "reopened" : after;
}
