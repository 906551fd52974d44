/**
 * How a rehearsal (`robot-army start` with no config) ends: where each of its issues
 * stands, read from the store (the work item's state, its session rows and their end
 * reasons, the keeps); when every issue is finished; the summary said at the end; and the
 * wait for it, which gives up after a limit naming what is still not finished rather than
 * hang.
 *
 * An issue is finished when its work item is `done` and each of the item's workers is
 * retired or kept, or when the item is `failed` or `abandoned` (those keep their workers,
 * which the rehearsal stops at its end). An issue with no work item yet, or an item on its
 * way, is not.
 *
 * The rehearsal runs with `[cleanup] on_issue_close = true`, so after that it waits until
 * each done item's worktree has a cleanup decision that is not `skipped` (its latest record,
 * lib/cleanup/records.ts), and the summary says, per item, how it was merged and what
 * became of its worktree.
 */
import { latestCleanup, worktreeGone } from "../cleanup/records.ts";
import { printable } from "../printable.ts";
import type { CleanupRecord } from "../cleanup/records.ts";
import type { Store } from "../store/open.ts";
import { intentsWithoutOutcome } from "../store/audit.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import { sessionsOf } from "../work-items/sessions.ts";
import { listItems } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";

/** The item's session a keep is on, while that session is open (lib/ending/keeps.ts `keptSession`). */
export type KeptSession = (store: Store, item: number) => StoredSession | undefined;

/** Where one of the rehearsal's issues stands. */
export interface IssueProgress {
  issue: number;
  /** Its newest work item, if it has become one. */
  item: WorkItem | undefined;
  /** The item's sessions, oldest first. */
  sessions: StoredSession[];
  /** The item's open session a keep is on. */
  kept: StoredSession | undefined;
  finished: boolean;
  /** What is not finished yet, in the owner's words (empty when finished). */
  waiting: string[];
}

/** Where the whole rehearsal stands. */
export interface RehearsalProgress {
  repo: string;
  issues: IssueProgress[];
  /** Every issue is finished. */
  finished: boolean;
  done: number;
  failed: number;
  abandoned: number;
  /** Session rows closed as `retired`. */
  retired: number;
  /** Open sessions a keep is on. */
  kept: StoredSession[];
  /** Open sessions of failed or abandoned items, which keep their workers. */
  leftToTheOwner: StoredSession[];
}

/**
 * Reads where each of `issues` of `repo` stands from the store.
 * @example
 * const progress = rehearsalProgress(store, "demo/widgets", [1, 2, 3], keptSession);
 * if (!progress.finished) console.log(notFinished(progress));
 */
export function rehearsalProgress(store: Store, repo: string, issues: readonly number[], keptSession: KeptSession): RehearsalProgress {
  const items = listItems(store, { repo });
  const progress: RehearsalProgress = { repo, issues: [], finished: true, done: 0, failed: 0, abandoned: 0, retired: 0, kept: [], leftToTheOwner: [] };
  // A worker's launch a crash cut short may have started a worker no row records yet: its item is not finished until it is settled.
  const unsettled = new Set(intentsWithoutOutcome(store).filter((i) => i.kind === "session.launch" && i.item !== null).map((i) => i.item!));
  for (const issue of issues) {
    const item = items.filter((i) => i.issue === issue).at(-1);
    const sessions = item ? sessionsOf(store, item.id) : [];
    const kept = item ? keptSession(store, item.id) : undefined;
    const open = sessions.filter((s) => s.ended_at === null);
    const waiting: string[] = [];
    if (!item) waiting.push(`${repo}#${issue} is not a work item yet`);
    else if (unsettled.has(item.id)) waiting.push(`item ${item.id}'s worker launch was cut short and is not settled yet`);
    else if (item.state === "done") {
      progress.done++;
      for (const session of open) {
        if (session.id === kept?.id) progress.kept.push(session);
        else waiting.push(`item ${item.id}'s worker ${session.name} is still running (not retired)`);
      }
    } else if (item.state === "failed" || item.state === "abandoned") {
      progress[item.state]++;
      progress.leftToTheOwner.push(...open);
    } else waiting.push(`item ${item.id} (${repo}#${issue}) is ${item.state}`);
    progress.retired += sessions.filter((s) => s.end_reason === "retired").length;
    progress.issues.push({ issue, item, sessions, kept: kept && open.some((s) => s.id === kept.id) ? kept : undefined, finished: waiting.length === 0, waiting });
    if (waiting.length) progress.finished = false;
  }
  return progress;
}

/** What is still not finished, one clause each: `item 3 (demo/widgets#3) is active; ...`. */
export function notFinished(progress: RehearsalProgress): string {
  return progress.issues.flatMap((i) => i.waiting).join("; ");
}

/** What the rehearsal did to the workers still running at its end. */
export interface Ending {
  /** The rehearsal stopped the workers still running (its end), or leaves them (`--watch` runs on). */
  stoppedNow: boolean;
  /** The names of workers still running after the stop, from the session records. */
  leftRunning: string[];
}

/**
 * The counts of a summary: `3 items done, 2 workers retired, 1 kept (stopped now), nothing
 * left running`; failed and abandoned items, and their workers, only when there are some.
 */
export function summaryCounts(progress: RehearsalProgress, ending: Ending): string {
  const parts = [plural(progress.done, "item") + " done"];
  if (progress.failed) parts.push(`${progress.failed} failed`);
  if (progress.abandoned) parts.push(`${progress.abandoned} abandoned`);
  parts.push(`${plural(progress.retired, "worker")} retired`);
  const now = ending.stoppedNow ? " (stopped now)" : ", still running";
  if (progress.kept.length) parts.push(`${progress.kept.length} kept${now}`);
  if (progress.leftToTheOwner.length) parts.push(`${plural(progress.leftToTheOwner.length, "worker")} of failed or abandoned items${now}`);
  if (ending.stoppedNow) parts.push(ending.leftRunning.length ? `still running after the stop: ${ending.leftRunning.join(", ")}` : "nothing left running");
  return parts.join(", ");
}

/** How the wait for the end ended, and where the rehearsal stood then. */
export type WaitResult<P = RehearsalProgress> = { how: "finished" | "gave-up" | "stopped"; progress: P | undefined };

/** What the wait reads, how long it waits, and what cuts it short. */
export interface WaitOptions<P extends { finished: boolean } = RehearsalProgress> {
  /** Reads where the rehearsal stands (it may throw: that look counts as not finished). */
  check: () => P;
  /** Gives up after this long (Infinity: never). */
  limitMs: number;
  /** How often it looks (default every second). */
  everyMs?: number;
  /** True once the rehearsal is being stopped otherwise (Ctrl-C, the daemon ended). */
  stopped: () => boolean;
}

/**
 * Waits until every issue is finished, the rehearsal is stopped otherwise, or `limitMs`
 * have passed; it looks once more at the limit, so an end reached meanwhile is an end.
 */
export async function waitForTheEnd<P extends { finished: boolean } = RehearsalProgress>(options: WaitOptions<P>): Promise<WaitResult<P>> {
  const everyMs = options.everyMs ?? 1000;
  const deadline = Date.now() + options.limitMs;
  let progress: P | undefined;
  for (;;) {
    if (options.stopped()) return { how: "stopped", progress };
    try {
      progress = options.check();
      if (progress.finished) return { how: "finished", progress };
    } catch {
      // The store could not be read this time (the daemon writing, say): not finished, look again.
    }
    if (Date.now() >= deadline) return { how: "gave-up", progress };
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(everyMs, deadline - Date.now()))));
  }
}

/** Where one done item's worktree stands: its latest cleanup decision, if it has one. */
export interface ItemCleanup {
  issue: number;
  item: WorkItem;
  cleanup: CleanupRecord | undefined;
}

/** Where the reclaiming of the rehearsal's done items stands. */
export interface CleanupProgress {
  items: ItemCleanup[];
  /** Every done item has a decision that is not `skipped`. */
  finished: boolean;
  /** What is not decided yet, one clause each. */
  waiting: string[];
}

/**
 * Reads each done item's latest cleanup decision from the store: the rehearsal is reclaimed
 * once every one that had a worker has a decision other than `skipped` (the one state the
 * pass comes back to).
 * @example
 * const reclaimed = cleanupProgress(store, rehearsalProgress(store, repo, issues, keptSession));
 * if (!reclaimed.finished) console.log(reclaimed.waiting.join("; "));
 */
export function cleanupProgress(store: Store, progress: RehearsalProgress): CleanupProgress {
  const items: ItemCleanup[] = [];
  const waiting: string[] = [];
  for (const { issue, item, sessions } of progress.issues) {
    // An item done before any worker started for it (its issue closed first, or another host worked it) has nothing to reclaim.
    if (item?.state !== "done" || sessions.length === 0) continue;
    const cleanup = latestCleanup(store, item.id);
    items.push({ issue, item, cleanup });
    if (!cleanup) waiting.push(`item ${item.id} (${progress.repo}#${issue}) has no cleanup decision yet`);
    else if (cleanup.state === "skipped") waiting.push(`item ${item.id}'s cleanup was skipped: ${printable(cleanup.reason)}`);
  }
  return { items, finished: waiting.length === 0, waiting };
}

/**
 * The summary's line for each issue: its item's state, how the owner merged its pull
 * request (`merged` says it: `merge commit`, `squash`, or nothing when it was not merged),
 * and its worktree's cleanup state:
 * `#1 done · merged (merge commit) · worktree reclaimed: done`.
 */
export function issueLines(progress: RehearsalProgress, reclaimed: CleanupProgress | undefined, merged: (item: WorkItem) => string | undefined): string[] {
  return progress.issues.map(({ issue, item }) => {
    if (!item) return `#${issue} not a work item`;
    const how = merged(item);
    const parts = [`#${issue} ${item.state}`, how ? `merged (${how})` : "not merged by the owner"];
    const cleanup = reclaimed?.items.find((i) => i.item.id === item.id)?.cleanup;
    if (item.state === "done") parts.push(worktreeWords(cleanup));
    return parts.join(" · ");
  });
}

/** What became of a done item's worktree, from its latest cleanup decision. */
function worktreeWords(cleanup: CleanupRecord | undefined): string {
  if (!cleanup) return "worktree not reclaimed: no cleanup decision";
  if (cleanup.state === "done") return "worktree reclaimed: done";
  if (worktreeGone(cleanup)) return `worktree reclaimed: ${cleanup.state} (${printable(cleanup.reason)})`;
  return `worktree kept: ${cleanup.state} (${printable(cleanup.reason)})`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
