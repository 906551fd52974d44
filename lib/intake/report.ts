/**
 * What `robot-army poll` prints: per issue, what happened (and `would comment ...` below
 * `live`); per repository, one line of counts; ignored issues with their reason (and who
 * labelled them), so the owner sees a stranger's label was not taken; items held for the
 * owner; and the queue.
 */
import { printable } from "../printable.ts";
import type { PollEvent, RepoPoll } from "./poll.ts";

/** Ready items after the pass: real ones, and simulated ones (counted in only with `--include-simulated`). */
export interface QueueCount {
  ready: number;
  simulated: number;
  include_simulated: boolean;
}

/** The lines of a pass's report, in order. */
export function reportLines(results: readonly RepoPoll[], queue: QueueCount, simulated: boolean, level: string): string[] {
  const lines: string[] = [];
  if (simulated) lines.push(`effect level ${level}: nothing is written to GitHub; writes are printed as "would ..."`);
  for (const result of results) {
    lines.push(...eventLines(result));
    lines.push(summaryLine(result));
    lines.push(...ignoredLines(result));
    const waiting = result.events.some((e) => e.event === "new" && e.state === "discovered");
    if (result.needs_reapproval) {
      lines.push(`  ${result.repo} needs reapproval (${result.needs_reapproval.join("; ")}): nothing is queued until "robot-army onboard ${result.repo} --reapprove"`);
    } else if (!result.onboarded && waiting) lines.push(`  ${result.repo} is not onboarded: its items wait in discovered until "robot-army onboard ${result.repo}"`);
  }
  lines.push(queueLine(queue));
  return lines;
}

/** `demo/widgets: 3 new, 0 done, 0 abandoned, 1 ignored; 1 request, 0 not modified` (or why it was not read, or what was left for the next poll). */
export function summaryLine(result: RepoPoll): string {
  if (result.unread > 0) {
    const counts = `${result.new} new, ${result.done} done, ${result.abandoned} abandoned, ${result.ignored} ignored, ${result.unread} left for the next poll`;
    return `${result.repo}: ${counts}; ${plural(result.requests, "request")}, ${result.not_modified} not modified`;
  }
  if (result.deferred_until) return `${result.repo}: not read: GitHub calls are deferred until ${result.deferred_until} to spare the rate limit; a poll after that reads it`;
  if (result.error) return `${result.repo}: failed: ${result.error}`;
  const counts = `${result.new} new, ${result.done} done, ${result.abandoned} abandoned, ${result.ignored} ignored`;
  return `${result.repo}: ${counts}; ${plural(result.requests, "request")}, ${result.not_modified} not modified`;
}

function eventLines(result: RepoPoll): string[] {
  const lines: string[] = [];
  const at = (issue: number) => `${result.repo}#${issue}`;
  const events = result.events;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const next = events[i + 1];
    switch (e.event) {
      case "new":
        // A new item queued at once reads as one line.
        if (next?.event === "ready" && next.item === e.item) {
          lines.push(`${at(e.issue)}: new work item ${e.item}, ready`);
          i++;
        } else {
          lines.push(`${at(e.issue)}: new work item ${e.item}, ${e.state}`);
        }
        break;
      case "ready":
        lines.push(`${at(e.issue)}: work item ${e.item} ready (${e.reason})`);
        break;
      case "done":
      case "abandoned":
        lines.push(`${at(e.issue)}: work item ${e.item} ${e.event} (${e.reason})`);
        break;
      case "superseded":
        lines.push(`${at(e.issue)}: simulated work item ${e.item} abandoned (${e.reason})`);
        break;
      case "label_removed":
        lines.push(`${at(e.issue)}: label removed from work item ${e.item} (${e.state}); the work goes on`);
        break;
      case "comment":
        lines.push(commentLine(at(e.issue), e));
        break;
      case "held":
        lines.push(`${at(e.issue)}: work item ${e.item} is held for you: ${e.reason}`);
        break;
      case "cleared":
        lines.push(`${at(e.issue)}: work item ${e.item} is no longer held for you: GitHub, asked again, shows its label and words are yours`);
        break;
      case "unread":
        lines.push(`${at(e.issue)}: left for the next poll: GitHub could not say who labelled and edited it (${e.reason})`);
        break;
      case "ignored":
        break;
    }
  }
  return lines;
}

function commentLine(where: string, e: Extract<PollEvent, { event: "comment" }>): string {
  if (e.error) return `could not comment on ${where}: ${e.error}`;
  if (e.simulated) return `would comment on ${where}: ${e.body}`;
  return `commented on ${where}: ${e.url ?? e.body}`;
}

/** `  ignored 1 issue not opened by owner: #4`, one line per reason; who labelled it, when that was the reason: `#6 (by mallory)`. */
function ignoredLines(result: RepoPoll): string[] {
  const byReason = new Map<string, string[]>();
  for (const e of result.events) {
    if (e.event !== "ignored") continue;
    const by = e.by === undefined ? "" : ` (by ${e.by === null ? "someone GitHub does not name" : printable(e.by)})`;
    byReason.set(e.reason, [...(byReason.get(e.reason) ?? []), `#${e.issue}${by}`]);
  }
  return [...byReason].map(([reason, issues]) => `  ignored ${plural(issues.length, "issue")} ${reason}: ${issues.join(", ")}`);
}

function queueLine(queue: QueueCount): string {
  if (!queue.simulated) return `queue: ${queue.ready} ready`;
  if (queue.include_simulated) return `queue: ${queue.ready + queue.simulated} ready (${queue.simulated} simulated)`;
  return `queue: ${queue.ready} ready (${queue.simulated} simulated left out; --include-simulated counts them)`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
