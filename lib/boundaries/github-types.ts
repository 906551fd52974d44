/**
 * What robot-army reads from and writes to GitHub (or the sandbox forge), as the rest of
 * the code sees it. `lib/boundaries/github.ts` implements it with @octokit/rest;
 * `lib/effects.ts` chooses real or simulated writes once, from the effect level.
 */

/** An issue as intake reads it. */
export interface GitHubIssue {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  /** The login of the user who opened it. */
  author: string;
  labels: string[];
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  html_url: string;
  /**
   * What GitHub's issue dependencies say blocks it (`issue_dependencies_summary`): the issues
   * blocking it that are open, and all of them; absent when GitHub does not say.
   */
  blocked_by?: { open: number; total: number };
}

/** An issue blocking another, as GitHub's dependencies list it. */
export interface BlockingIssue {
  repo: string;
  number: number;
  state: "open" | "closed";
  html_url: string;
}

/** A repository's metadata: what onboarding fingerprints and dispatch needs. */
export interface GitHubRepository {
  full_name: string;
  default_branch: string;
  clone_url: string;
  html_url: string;
  private: boolean;
  /** Settings whose change makes onboarding ask for approval again. */
  settings: Record<string, unknown>;
  /** What the token's user may do in it, as GitHub answers it (`permissions`); null when GitHub does not say. */
  permissions?: { pull: boolean; triage: boolean; push: boolean; maintain: boolean; admin: boolean } | null;
}

/** What the last answer said of the rate limit, and whether calls are being held back. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** ISO time when the limit resets. */
  reset: string;
  /** ISO time until which calls are deferred, when robot-army chose to wait. */
  deferredUntil: string | null;
  /**
   * Why they are: `floor`, too little left (claims and heartbeats may spend the rest);
   * `used up`, nothing left; `slow down`, GitHub's secondary rate limit asked for a pause.
   */
  deferredFor: "floor" | "used up" | "slow down" | null;
}

/** The issues of a repository that changed since the last poll (one conditional request when nothing did). */
export interface IssueChanges {
  /** False when GitHub answered 304 to every request: nothing changed. */
  changed: boolean;
  /** Issues (not pull requests) updated since the last poll, newest first; all of them on a first poll. */
  issues: GitHubIssue[];
  /** How many HTTP requests it took, and how many were answered 304. */
  requests: number;
  notModified: number;
  /**
   * Remembers this answer (the list's ETag and the newest update seen) so the next call
   * asks only for what changed since. Call it once the issues are processed: a crash
   * before it makes the next poll read them again.
   */
  commit(): void;
}

/**
 * The issues the token's own user opened, in every polled repository, that changed since
 * the last poll: one conditional request for them all when none did.
 */
export interface OwnIssueChanges {
  /** False when GitHub answered 304: no issue the user opened changed anywhere. */
  changed: boolean;
  /** Each repository asked about (spelt as asked), with its changed issues (not pull requests), newest first; empty when none. */
  issues: Record<string, GitHubIssue[]>;
  /** How many HTTP requests it took, and how many were answered 304. */
  requests: number;
  notModified: number;
  /** Remembers this answer for the next call; call it once every repository's issues are processed. */
  commit(): void;
}

/**
 * A pull request as the refresh of pull requests reads it (lib/intake/pull-requests.ts).
 * `mergeable` is deliberately not read: GitHub answers null until a background job has
 * computed it, and robot-army concludes nothing from a pull request's mergeability.
 */
export interface GitHubPullRequest {
  number: number;
  /** The head branch's name (`head.ref`): how a pull request is matched to a work item. */
  head_branch: string;
  head_sha: string;
  state: "open" | "closed";
  /** When it merged; null when it has not (a closed one with null was closed unmerged). */
  merged_at: string | null;
  updated_at: string;
  html_url: string;
}

/** The pull requests of a repository that changed since the last refresh (one conditional request when nothing did). */
export interface PullChanges {
  /** False when GitHub answered 304: nothing changed. */
  changed: boolean;
  /** Pull requests (open and closed) updated since the last refresh, newest first, with the rest of page 1. */
  pulls: GitHubPullRequest[];
  /** How many HTTP requests it took, and how many were answered 304. */
  requests: number;
  notModified: number;
  /**
   * Remembers this answer (the list's ETag and the newest update seen) so the next call
   * asks only for what changed since. Call it once the pull requests are stored: a crash
   * before it makes the next refresh read them again.
   */
  commit(): void;
}

/** A comment on an issue or a pull request's conversation, as the feedback pass reads it (lib/intake/feedback.ts). */
export interface GitHubIssueComment {
  id: number;
  /** The number of the issue or pull request it is on. */
  issue: number;
  author: string;
  body: string;
  html_url: string;
  created_at: string;
  updated_at: string;
}

/** A comment on a pull request's lines (a review comment). */
export interface GitHubReviewComment {
  id: number;
  pull_request: number;
  /** The review it belongs to; null when GitHub names none. */
  review: number | null;
  author: string;
  body: string;
  path: string;
  /** The line it is on; null for a comment on a whole file or an outdated line. */
  line: number | null;
  html_url: string;
  created_at: string;
  updated_at: string;
}

/** A pull request's review, as GitHub lists it. */
export interface GitHubReview {
  id: number;
  author: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";
  body: string;
  html_url: string;
  /** Null while pending (never submitted). */
  submitted_at: string | null;
  commit_id: string | null;
}

/** What GitHub says of a commit's checks: its check runs (the newest of each name) and its statuses (the newest of each context). */
export interface CommitChecks {
  runs: Array<{ id: number; name: string; status: "queued" | "in_progress" | "completed" | string; conclusion: string | null; url: string; title: string | null; app: string | null }>;
  statuses: Array<{ context: string; state: "error" | "failure" | "pending" | "success" | string; url: string | null; description: string | null; creator: string | null }>;
}

/** A pull request's mergeability as its own page says it: null while GitHub is still computing it. */
export interface PullMergeability {
  mergeable: boolean | null;
  head_sha: string;
  base_branch: string;
  base_sha: string;
}

/** The comments of a repository that changed since the last read: its issues' and pull requests' conversations, and its pull requests' lines. */
export interface CommentChanges {
  /** False when GitHub answered 304 to both lists. */
  changed: boolean;
  comments: GitHubIssueComment[];
  reviewComments: GitHubReviewComment[];
  requests: number;
  notModified: number;
  /** Remembers both lists' answers; call it once their comments are stored. */
  commit(): void;
}

/** A comment on an issue, as the unfinished-effect sweep reads it (to find a comment's marker). */
export interface GitHubComment {
  id: number;
  body: string;
  /** The login of the user who wrote it. */
  author: string;
  html_url: string;
  created_at: string;
}

/** Reads from GitHub. */
export interface GitHubReader {
  getRepository(repo: string): Promise<GitHubRepository>;
  getIssue(repo: string, number: number): Promise<GitHubIssue>;
  /**
   * Issues changed since the previous call for this repository (state all, labels not
   * filtered). Simulated passes (below live) remember what they saw apart from real ones,
   * so a rehearsal never makes a later live poll think it has seen everything.
   */
  issueChanges(repo: string, options?: { simulated?: boolean }): Promise<IssueChanges>;
  /**
   * Pull requests changed since the previous call for this repository: one conditional
   * list request sorted by last update, later pages only back to the previous call's
   * newest update. With no previous call, pages are read back to `since` (an ISO time;
   * every page without it).
   */
  pullChanges(repo: string, options?: { since?: string }): Promise<PullChanges>;
  /**
   * The comments made or edited on this repository's issues and pull requests, and on its pull
   * requests' lines, since the previous call: one conditional request per list, 304 when none
   * changed. With no previous call, read back to `since` (an ISO time).
   */
  commentChanges(repo: string, options?: { since?: string }): Promise<CommentChanges>;
  /** Every review of a pull request, oldest first (one request per hundred). */
  pullReviews(repo: string, number: number): Promise<GitHubReview[]>;
  /** The issues GitHub's issue dependencies say block an issue, with their states (one request per hundred). */
  issueBlockers(repo: string, number: number): Promise<BlockingIssue[]>;
  /** A commit's check runs and statuses (two requests). */
  commitChecks(repo: string, sha: string): Promise<CommitChecks>;
  /** The commit a branch's tip is at (null when there is no such branch): one conditional request, answered 304 while it stands. */
  branchTip(repo: string, branch: string): Promise<string | null>;
  /** Whether a pull request merges into its base, as its own page says (GitHub computes it in the background: null until then). */
  pullMergeability(repo: string, number: number): Promise<PullMergeability>;
  /**
   * When this repository's own issue list (`issueChanges`) was last read, a 304 or a read it
   * committed; undefined when it never was.
   */
  issueListReadAt(repo: string, options?: { simulated?: boolean }): string | undefined;
  /**
   * The issues the token's own user opened in any of `repos` that changed since the previous
   * call (`GET /user/issues?filter=created`): one request for every repository, where
   * `issueChanges` costs one each. Only for intake whose author is the token's own user
   * (`tokenLogin`); simulated passes remember apart, as with `issueChanges`.
   */
  ownIssueChanges(repos: readonly string[], options?: { simulated?: boolean }): Promise<OwnIssueChanges>;
  /** The login the token belongs to (doctor's check), asked every time; null when reading anonymously. */
  whoami(): Promise<string | null>;
  /** The login the token belongs to, asked once and then remembered with the token's fingerprint; null when reading anonymously. */
  tokenLogin(): Promise<string | null>;
  /** Every comment on an issue, oldest first; with `since` (an ISO time), those updated at or after it. */
  listComments(repo: string, issue: number, since?: string): Promise<GitHubComment[]>;
  rateLimit(): RateLimitState | null;
  // Trust: who labelled an issue, who renamed it and who edited its body (kept together, apart from other reads).
  /** Every label added to or taken off an issue and every change of its title, oldest first, with who did it (GitHub's issue events). */
  issueEvents(repo: string, number: number): Promise<IssueEvent[]>;
  /** Who wrote an issue's body and who edited it, and its title and body now, from GitHub's GraphQL API (its REST issue names no editor). */
  bodyAuthorship(repo: string, number: number): Promise<BodyAuthorship>;
  /**
   * What `issueEvents` and `bodyAuthorship` would say of each of `numbers` (at most
   * TRUST_BATCH issues of `repo`), asked in one GraphQL request. An issue is in the answer
   * only when GitHub answered it whole and as those two would read it; any other (an error
   * naming it, gone, more events than one page, an actor that is not a user, a label changed
   * since it was added) is left out, to be asked alone.
   */
  issuesTrust(repo: string, numbers: readonly number[]): Promise<Map<number, IssueTrustAnswer>>;
  /** HTTP requests this connection has sent so far (retries included), so a pass reports what it cost. */
  requestsSent(): number;
  /** The commit the git reference `ref` (fully qualified: `refs/robot-army/claims/12`) points at; null when the repository has no such reference. */
  readRef(repo: string, ref: string): Promise<string | null>;
  /** A commit's message. */
  readCommitMessage(repo: string, sha: string): Promise<string>;
  /** A commit's message and its parents' commits. */
  readCommit(repo: string, sha: string): Promise<{ message: string; parents: string[] }>;
  /** Every reference whose name starts with `prefix` (fully qualified: `refs/robot-army/hosts/`), with the commit it points at: one request a hundred. */
  matchingRefs(repo: string, prefix: string): Promise<Array<{ ref: string; sha: string }>>;
}

/** What robot-army reads of an issue's events: a label added or taken off, or its title changed. */
export type IssueEvent = LabelEvent | RenameEvent;

/** A label added to or taken off an issue, and who did it. */
export interface LabelEvent {
  event: "labeled" | "unlabeled";
  label: string;
  /** The login that acted (GitHub's "ghost" for a deleted account). */
  actor: string;
  at: string;
}

/** An issue's title changed, by whom, from what to what (GitHub's `renamed` event). */
export interface RenameEvent {
  event: "renamed";
  from: string;
  to: string;
  /** The login that acted (GitHub's "ghost" for a deleted account). */
  actor: string;
  at: string;
}

/**
 * The most issues one `issuesTrust` call asks about, in one GraphQL query: 50 x (100
 * revisions + 100 events) is 10,000 nodes, far below the 500,000 GitHub allows a query, and
 * an answer small enough to come well within its time limit.
 */
export const TRUST_BATCH = 50;

/** What GitHub's GraphQL API tells of one issue's words, for many issues at once (`issuesTrust`). */
export interface IssueTrustAnswer {
  /** The labels added (`labeled`) and the title's changes (`renamed`), oldest first, as `issueEvents` lists them; labels taken off are not asked. */
  events: IssueEvent[];
  authorship: BodyAuthorship;
}

/** Who wrote an issue's body, as GitHub's GraphQL API reports it. */
export interface BodyAuthorship {
  /** The login of who opened the issue. */
  author: string;
  /** The title and the body as they read now. */
  title: string;
  body: string;
  /** Each revision's editor, newest first (the original, by the author, among them once it was edited); empty when never edited. */
  editors: string[];
  lastEditedAt: string | null;
  /** False when the issue has more revisions than one answer lists: the editors of the rest are unknown. */
  complete: boolean;
}

/** Writes to GitHub; simulated below the `live` effect level. */
export interface GitHubWriter {
  /** True when the writes only say what they would do. */
  readonly simulated: boolean;
  comment(repo: string, issue: number, body: string): Promise<{ id: number | null; url: string | null }>;
  addLabels(repo: string, issue: number, labels: string[]): Promise<void>;
  removeLabel(repo: string, issue: number, label: string): Promise<void>;
  /**
   * Creates the reference `ref` (an issue's claim, or a host's heartbeat) at a new commit
   * with `message` (its tree the empty tree, no parent): `created` with the commit when the reference was made, not when GitHub refused it
   * (a reference of that name exists); sha null below `live`, where nothing is written.
   */
  createClaim(repo: string, ref: string, message: string): Promise<{ created: boolean; sha: string | null }>;
  /**
   * Moves the reference `ref` from the commit `from` to a new commit with `message` whose
   * parent is `from`, as a fast-forward only: `moved` false when GitHub refused it (the
   * reference is no longer at `from`, or is gone). Below `live` nothing is written.
   */
  advanceClaim(repo: string, ref: string, from: string, message: string): Promise<{ moved: boolean; sha: string | null }>;
  /** Deletes the reference `ref`: `gone` when it was not there. */
  deleteClaim(repo: string, ref: string): Promise<"deleted" | "gone">;
}

// What the GitHub boundary remembers between runs; lib/boundaries/github-state.ts keeps it.
/** A list's conditional-request state: its page-1 ETag and the newest `updated_at` processed. */
export interface ListMark {
  etag: string;
  /** The newest `updated_at` among the items of the poll that stored this mark. */
  highWater: string | null;
  /** When the list was last read with this mark: its commit, or since then a 304 (`touchMark`). */
  readAt?: string;
}

/** Where the boundary keeps list marks and rate-limit state. */
export interface GitHubMemory {
  mark(url: string): ListMark | undefined;
  saveMark(url: string, mark: ListMark): void;
  /** Notes that the list was read and found unchanged (a 304) now: its mark stands, read again. */
  touchMark(url: string): void;
  rateLimit(): RateLimitState | null;
  saveRateLimit(state: RateLimitState): void;
  /** The login remembered under `key` (a token's fingerprint), if any. */
  login(key: string): string | undefined;
  saveLogin(key: string, login: string): void;
}
