/**
 * What intake does with one issue it read, given the live work item it has for that
 * issue (if any): a pure decision, so every rule of intake is testable without GitHub or
 * a store.
 */
import type { GitHubIssue } from "../boundaries/github-types.ts";
import type { WorkItem, WorkItemState } from "../work-items/queries.ts";

/** Who intake trusts and what it looks for (`github.author`, `github.label`). */
export interface IntakeRules {
  author: string;
  label: string;
}

/**
 * Why a labelled issue was not taken: opened by someone else (decided here), or labelled by
 * someone else (asked of GitHub by intake, once decide says `take`).
 */
export type IgnoreReason = "not opened by owner" | "labelled by someone else";

/** What to do with one issue. */
export type IntakeDecision =
  /** Open, labelled, by the author, and no live item: a new work item. */
  | { kind: "take" }
  /** The item lives on; only its snapshot of the issue is refreshed. */
  | { kind: "refresh" }
  /** The issue was closed while its item was live: the item is done. */
  | { kind: "done" }
  /** The label went before dispatch: the item leaves the queue. */
  | { kind: "abandon"; reason: string }
  /** The label went after dispatch: recorded as a fact, and the work goes on. */
  | { kind: "label-removed-after-dispatch" }
  /** Labelled, but not by someone intake trusts: counted so the owner sees it. */
  | { kind: "ignore"; reason: IgnoreReason }
  /** Nothing to do (unlabelled, or closed, with no item). */
  | { kind: "none" };

/** States before dispatch: an item in them leaves the queue when its label goes. */
const BEFORE_DISPATCH: readonly WorkItemState[] = ["discovered", "ready"];

/** The reason an item leaves the queue when its issue loses the label. */
export const LABEL_REMOVED = "label removed before dispatch";

/**
 * Decides what intake does with an issue. Logins and labels compare without case, as
 * GitHub treats them.
 * @example decide(issue, liveItemOf(store, repo, issue.number), { author: "owner", label: "robot-army" })
 */
export function decide(issue: GitHubIssue, live: WorkItem | undefined, rules: IntakeRules): IntakeDecision {
  const labelled = hasLabel(issue.labels, rules.label);
  if (live) {
    if (issue.state === "closed") return { kind: "done" };
    if (!labelled && BEFORE_DISPATCH.includes(live.state)) return { kind: "abandon", reason: LABEL_REMOVED };
    // Once per removal: the snapshot still has the label the first time it is seen gone.
    if (!labelled && hasLabel(live.labels, rules.label)) return { kind: "label-removed-after-dispatch" };
    return { kind: "refresh" };
  }
  if (issue.state !== "open" || !labelled) return { kind: "none" };
  if (issue.author.toLowerCase() !== rules.author.toLowerCase()) return { kind: "ignore", reason: "not opened by owner" };
  return { kind: "take" };
}

/** Whether a list of label names holds `label`, compared without case. */
export function hasLabel(labels: readonly string[], label: string): boolean {
  const wanted = label.toLowerCase();
  return labels.some((name) => name.toLowerCase() === wanted);
}
