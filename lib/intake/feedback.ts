/**
 * Feedback: what the owner (`[github] author`) and the reviewers they list (`[github]
 * reviewers`) say on a work item after its worker started, gathered in the pass that refreshes
 * pull requests, for the repositories that pass asked: the comments made on its issue or its
 * pull request's conversation and on its pull request's lines (one conditional request per
 * list and repository, a 304 when none changed), and the reviews of a pull request, asked only
 * when the pull request moved since they were last read (so no request per item when nothing
 * changed). A review counts when it requests changes, or comments with words; an approval, or
 * the empty review GitHub wraps line comments in, does not.
 *
 * Nobody else's words are kept: a stranger's review or comment is counted and dropped, as a
 * stranger's issue is at intake. Robot-army's own comments (they carry its action marker) are
 * not feedback. Each piece is kept once, by its GitHub id (table `feedback`), however many
 * times it is read, across restarts; an edit does not make it new. Feedback on an item already
 * finished (done, abandoned) is kept to be shown, and given to no one.
 *
 * @example
 * const gathered = await gatherFeedback({ store, github, config }, refresh.asked);
 * for (const piece of gathered.taken) console.log(`item ${piece.item}: ${piece.what}`);
 */
import { RateLimitDeferred } from "../boundaries/github.ts";
import type { GitHubReader, GitHubReview } from "../boundaries/github-types.ts";
import { isoSeconds, now } from "../clock.ts";
import type { Config } from "../config.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "../work-items/queries.ts";
import { trackedSessionBranches } from "../work-items/sessions.ts";
import { RECENTLY_DONE_MS, repositoryFailed } from "./pull-requests.ts";
import { printable } from "../printable.ts";
import { pullChecks } from "./pull-checks.ts";
import type { FeedbackRow, FeedbackSource, NewFeedback, Tracked, TrackedPull } from "./feedback-types.ts";

export type { FeedbackRow, FeedbackSource, NewFeedback, Tracked, TrackedPull };

/** What gathering works with. */
export interface FeedbackDeps {
  store: Store;
  github: Pick<GitHubReader, "commentChanges" | "pullReviews" | "commitChecks" | "pullMergeability" | "branchTip">;
  config: Pick<Config, "github" | "repos">;
}



/** What a gathering did, over the repositories it asked. */
export interface FeedbackGathered {
  requests: number;
  notModified: number;
  /** The pieces kept this pass, new. */
  taken: FeedbackRow[];
  /** Pieces by someone who is neither the owner nor a listed reviewer, left out. */
  strangers: number;
  /** The owner's or a reviewer's comments edited after they were written, left out: who edited them cannot be told. */
  edited: number;
  /** Each repository that could not be read, with why: `owner/name: reason`. */
  failed: string[];
  deferredUntil: string | null;
}

/** How long after a pull request last moved its reviews are still asked each pass: its time is to the second, and clocks differ. */
export const REVIEWS_SETTLE_MS = 60_000;

/** The longest text kept of one piece: a review's words, not a file. */
export const FEEDBACK_BODY_LIMIT = 20_000;

/** The comments robot-army writes carry its action marker (lib/effects.ts commentMarker): never feedback. */
const OWN_COMMENT = /<!-- robot-army:action [0-9a-f-]+ -->/;

/**
 * What a worker's prompt asks it to end each of its own comments and reviews on GitHub with
 * (lib/dispatch/prompt.ts): a worker writes with the owner's login, and its words coming back
 * to it as the owner's would loop. Agents mostly follow it; one that does not is still
 * typed at most a message a minute.
 */
export const WORKER_SIGNATURE = "<!-- robot-army:worker -->";
const WORKER_COMMENT = /<!-- robot-army:worker -->/;

/** How long after its writing a comment's update is taken for its own saving, not an edit. */
const EDIT_SLACK_MS = 2_000;

/** Whose words reach a worker: the owner and the reviewers listed, by login, in lower case. */
export function feedbackAuthors(config: Pick<Config, "github">): Set<string> {
  return new Set([config.github.author, ...(config.github.reviewers ?? [])].filter((login): login is string => !!login).map((login) => login.toLowerCase()));
}


/**
 * Gathers the feedback of the items of `repos` (those the pull request refresh just asked):
 * items not finished, and items done within the last week, that have had a worker. A
 * repository that fails is named in `failed` and the others go on; a store that fails ends it.
 */
export async function gatherFeedback(deps: FeedbackDeps, repos: readonly string[]): Promise<FeedbackGathered> {
  const result: FeedbackGathered = { requests: 0, notModified: 0, taken: [], strangers: 0, edited: 0, failed: [], deferredUntil: null };
  if (!repos.length) return result;
  const authors = feedbackAuthors(deps.config);
  const doneSince = isoSeconds(new Date(now().getTime() - RECENTLY_DONE_MS));
  const rows = trackedSessionBranches(deps.store, repos, doneSince);
  for (const repo of repos) {
    const mine = rows.filter((row) => row.repo === repo);
    if (!mine.length) continue;
    const byId = new Map<number, Tracked>();
    const byIssue = new Map<number, Tracked>();
    const byBranch = new Map<string, Tracked>();
    // Oldest item first: an issue labelled again is a new item, and the newest one of an issue or a branch is the one at work.
    for (const row of mine) {
      let tracked = byId.get(row.id);
      if (!tracked) {
        const item = getItem(deps.store, row.id);
        if (!item) continue;
        tracked = { item: item.id, issue: item.issue, firstStarted: Date.parse(row.started_at), finished: item.state === "done" || item.state === "abandoned" };
        byId.set(row.id, tracked);
      }
      tracked.firstStarted = Math.min(tracked.firstStarted, Date.parse(row.started_at));
      byIssue.set(tracked.issue, tracked);
      byBranch.set(row.branch, tracked);
    }
    if (!byId.size) continue;
    const since = new Date(Math.min(...[...byId.values()].map((t) => t.firstStarted))).toISOString();
    try {
      const pulls = pullsOf(deps.store, repo, byBranch);
      const changes = await deps.github.commentChanges(repo, { since });
      result.requests += changes.requests;
      result.notModified += changes.notModified;
      const found: NewFeedback[] = [];
      const consider = (tracked: Tracked | undefined, author: string, at: string, piece: Omit<NewFeedback, "item" | "finished" | "author">, edited = false) => {
        if (!tracked || Date.parse(at) < tracked.firstStarted) return;
        if (!authors.has(author.toLowerCase())) {
          result.strangers++;
          return;
        }
        // Anyone with write access may edit a comment, and its list does not say who did: edited, its words may not be its author's.
        if (edited) {
          result.edited++;
          return;
        }
        found.push({ ...piece, item: tracked.item, finished: tracked.finished, author });
      };
      const edited = (c: { created_at: string; updated_at: string }) => Date.parse(c.updated_at) - Date.parse(c.created_at) > EDIT_SLACK_MS;
      for (const comment of changes.comments) {
        // Robot-army's own comments, and those its workers sign as the prompt asks (they write as the owner): never feedback.
        if (OWN_COMMENT.test(comment.body) || WORKER_COMMENT.test(comment.body)) continue;
        const pull = pulls.get(comment.issue);
        const tracked = pull?.tracked ?? byIssue.get(comment.issue);
        const where = pull ? `pull request #${comment.issue}` : `issue #${comment.issue}`;
        consider(tracked, comment.author, comment.created_at, {
          source: "comment", github_id: String(comment.id), pull_request: pull ? comment.issue : null,
          what: `commented on ${where}`, body: comment.body, url: comment.html_url, created_at: comment.created_at,
        }, edited(comment));
      }
      for (const comment of changes.reviewComments) {
        if (WORKER_COMMENT.test(comment.body)) continue;
        const line = comment.line === null ? "" : ` line ${comment.line}`;
        consider(pulls.get(comment.pull_request)?.tracked, comment.author, comment.created_at, {
          source: "review_comment", github_id: String(comment.id), pull_request: comment.pull_request,
          what: `commented on ${printable(comment.path)}${line} in pull request #${comment.pull_request}`, body: comment.body, url: comment.html_url, created_at: comment.created_at,
        }, edited(comment));
      }
      // Reviews have no list of a repository's own: asked per pull request, and only of one that moved since they were last read.
      const reviewsRead: Array<{ number: number; updated_at: string }> = [];
      for (const [number, pull] of pulls) {
        // GitHub's times are to the second: a review in the same second as the read is caught by asking again for a minute.
        if (pull.reviews_read_for === pull.updated_at && now().getTime() - Date.parse(pull.updated_at) > REVIEWS_SETTLE_MS) continue;
        // One pull request's reviews that cannot be read leave the others' and the comments taken; they are asked again next pass.
        let reviews: GitHubReview[];
        try {
          reviews = await deps.github.pullReviews(repo, number);
          result.requests++;
        } catch (error) {
          if (error instanceof RateLimitDeferred) throw error;
          result.failed.push(`${repo}#${number} reviews: ${error instanceof Error ? error.message : String(error)}`);
          continue;
        }
        for (const review of reviews) {
          const what = reviewWhat(review, number);
          if (!what || review.submitted_at === null || WORKER_COMMENT.test(review.body)) continue;
          consider(pull.tracked, review.author, review.submitted_at, {
            source: "review", github_id: String(review.id), pull_request: number, what, body: review.body, url: review.html_url, created_at: review.submitted_at,
          });
        }
        reviewsRead.push({ number, updated_at: pull.updated_at });
      }
      // A failed check, a conflict with the base: GitHub's own words of the open pull requests of items at work.
      const checks = await pullChecks(deps, repo, [...pulls.values()].filter((p) => p.state === "open" && p.merged_at === null && !p.tracked.finished));
      result.requests += checks.requests;
      result.failed.push(...checks.failed);
      found.push(...checks.found);
      deps.store.transaction(() => {
        for (const piece of found) {
          const kept = keepFeedback(deps.store, repo, piece);
          if (kept) result.taken.push(kept);
        }
        for (const read of reviewsRead) deps.store.statement("UPDATE pull_requests SET reviews_read_for = ? WHERE repo = ? AND number = ?").run(read.updated_at, repo, read.number);
        checks.remember();
      });
      // Only once kept: a crash before this reads them again, and their ids keep them once.
      changes.commit();
    } catch (error) {
      repositoryFailed(result, repo, error);
    }
  }
  return result;
}

/** What a review says, as feedback: null for one that is not (an approval, a dismissed or pending one, the empty wrapper of line comments). */
function reviewWhat(review: GitHubReview, number: number): string | null {
  if (review.state === "CHANGES_REQUESTED") return `requested changes on pull request #${number}`;
  if (review.state === "COMMENTED" && review.body.trim() !== "") return `reviewed pull request #${number} with comments`;
  return null;
}


/**
 * Keeps a piece unless it is kept already (by repository, source and GitHub id); an item
 * finished has it marked `not delivered` at once. Returns it when it is new.
 */
export function keepFeedback(store: Store, repo: string, piece: NewFeedback): FeedbackRow | undefined {
  const at = isoSeconds(now());
  const body = piece.body.length > FEEDBACK_BODY_LIMIT ? `${piece.body.slice(0, FEEDBACK_BODY_LIMIT)}…` : piece.body;
  const row = store.statement(
    `INSERT INTO feedback (item, repo, source, github_id, pull_request, author, what, body, url, created_at, seen_at, delivered_at, delivered_how)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo, source, github_id) DO NOTHING RETURNING *`,
  ).get(piece.item, repo, piece.source, piece.github_id, piece.pull_request, piece.author, piece.what, body, piece.url, piece.created_at, at,
    piece.finished ? at : null, piece.finished ? "not delivered" : null);
  return row ? ({ ...(row as unknown as FeedbackRow) }) : undefined;
}


/** The pull requests of the tracked items, by number, with what their feedback was last read for. */
function pullsOf(store: Store, repo: string, byBranch: Map<string, Tracked>): Map<number, TrackedPull> {
  const rows = store.statement(
    "SELECT number, head_branch, head_sha, state, updated_at, merged_at, html_url, seen_at, reviews_read_for, checks_final_for, mergeability_read_for FROM pull_requests WHERE repo = ? ORDER BY number",
  ).all(repo) as unknown as Array<Omit<TrackedPull, "tracked"> & { head_branch: string }>;
  const pulls = new Map<number, TrackedPull>();
  for (const { head_branch: branch, ...row } of rows) {
    const tracked = byBranch.get(branch);
    // A branch is named for its issue: a pull request last changed before the item's first worker is an earlier item's.
    if (!tracked || Date.parse(row.merged_at ?? row.updated_at) < tracked.firstStarted) continue;
    pulls.set(row.number, { ...row, tracked });
  }
  return pulls;
}

/** The item's feedback, oldest first. */
export function feedbackOf(store: Store, item: number): FeedbackRow[] {
  return (store.statement("SELECT * FROM feedback WHERE item = ? ORDER BY created_at, id").all(item) as unknown as FeedbackRow[]).map((row) => ({ ...row }));
}

/** The item's feedback not given to its worker yet (nor cut short while being given), oldest first. */
export function waitingFeedback(store: Store, item: number): FeedbackRow[] {
  return (store.statement("SELECT * FROM feedback WHERE item = ? AND delivered_at IS NULL AND delivery_action IS NULL ORDER BY created_at, id").all(item) as unknown as FeedbackRow[])
    .map((row) => ({ ...row }));
}

/** The items with feedback waiting, by id. */
export function itemsWithWaitingFeedback(store: Store): number[] {
  return (store.statement("SELECT DISTINCT item FROM feedback WHERE delivered_at IS NULL AND delivery_action IS NULL ORDER BY item").all() as Array<{ item: number }>).map((row) => row.item);
}
