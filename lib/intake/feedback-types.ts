/**
 * The shapes of feedback (lib/intake/feedback.ts): a piece as kept, a piece found before it is
 * kept, and the items and pull requests it is read for; shared with the checks pass
 * (lib/intake/pull-checks.ts) so neither imports the other.
 */

/** Where a piece of feedback came from. */
export type FeedbackSource = "review" | "review_comment" | "comment" | "check" | "conflict";

/** A piece of feedback as kept. */
export interface FeedbackRow {
  id: number;
  item: number;
  repo: string;
  source: FeedbackSource;
  github_id: string;
  pull_request: number | null;
  author: string;
  /** What it is, in a few words: `requested changes on pull request #13`, `commented on src/a.ts line 4`. */
  what: string;
  body: string;
  url: string;
  created_at: string;
  seen_at: string;
  delivery_action: string | null;
  delivered_at: string | null;
  /** How it reached the worker; `not delivered` for an item already finished, `superseded` for a check or conflict of a head since moved on from. */
  delivered_how: "typed" | "resume" | "prompt" | "not delivered" | "superseded" | null;
  delivered_session: string | null;
}

/** An item feedback may be about: its issue, its pull requests, and when its first worker started. */
export interface Tracked {
  item: number;
  issue: number;
  firstStarted: number;
  finished: boolean;
}

/** A piece found, before it is kept: what GitHub said of it, and whether its item is finished (kept to be shown, given to no one). */
export type NewFeedback = Pick<FeedbackRow, "item" | "source" | "github_id" | "pull_request" | "author" | "what" | "body" | "url" | "created_at"> & { finished: boolean };

/** A tracked item's pull request as stored, with what its feedback was last read for. */
export interface TrackedPull {
  number: number;
  tracked: Tracked;
  state: "open" | "closed";
  head_sha: string;
  updated_at: string;
  merged_at: string | null;
  html_url: string;
  seen_at: string;
  reviews_read_for: string | null;
  checks_final_for: string | null;
  mergeability_read_for: string | null;
}
