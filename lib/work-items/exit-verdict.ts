/**
 * What a worker's exit says of its item's work, read from how the worker ended and the
 * pull requests of the item's branches, so an exit means what it says:
 *
 * | how the worker ended                         | the item            | its reason                                      |
 * |----------------------------------------------|---------------------|-------------------------------------------------|
 * | exit 0, a pull request open (or merged)       | `awaiting_review`   | `worker exited 0; pull request #7 is open`      |
 * | exit 0, none open or merged                   | `interrupted`       | `worker exited 0 with no pull request`          |
 * | exit 1                                        | `failed`            | `worker exited (code 1)`                        |
 * | exit 126                                      | `failed`            | `worker "claude" exited (code 126): not executable` |
 * | exit 127                                      | `failed`            | `worker "claude" exited (code 127): command not found` |
 * | the command could not be started at all       | `failed`            | `worker "claude" failed to start`               |
 * | a signal, or exit 128+N (N a signal's number) | `interrupted`       | `worker ended by SIGTERM`                       |
 * | stopped from outside (`session kill`, a stop) | `interrupted`       | `worker was killed`                             |
 * | any other code                                | `interrupted`       | `worker exited (code 3)`                        |
 *
 * Exit 0 with pull requests GitHub was not asked about yet is `interrupted` too, saying so:
 * unknown is not "none", and the refresh that finds one open moves the item on
 * (lib/intake/review.ts).
 */
import { constants } from "node:os";
import type { GitHubPullRequest } from "../boundaries/github-types.ts";
import type { Exit } from "../sessions/spool.ts";

/** How the reason of an item whose worker a signal ended begins: `worker ended by SIGTERM`. */
export const ENDED_BY_SIGNAL = "worker ended by ";

/** Where a worker's exit moves its item, and why (the item's reason). */
export interface ExitVerdict {
  to: "awaiting_review" | "interrupted" | "failed";
  why: string;
}

/** The pull requests of an item as `pullRequestsOf` reads them: a list once GitHub answered, else "not checked". */
export type ItemPullRequests = readonly Pick<GitHubPullRequest, "number" | "state" | "merged_at">[] | "not checked";

/**
 * Reads a worker's exit: the state its item moves to and why.
 * @example exitVerdict({ ended: "exited", code: 127, signal: null, at, command: "claude" }, []) // { to: "failed", why: 'worker "claude" exited (code 127): command not found' }
 */
export function exitVerdict(exit: Exit, pulls: ItemPullRequests): ExitVerdict {
  const worker = exit.command ? `worker "${exit.command}"` : "worker";
  if (exit.ended === "killed") return { to: "interrupted", why: "worker was killed" };
  // The holder could not start the command at all (not found, not executable): nothing a retry without a change mends.
  if (exit.ended === "failed-to-start") return { to: "failed", why: `${worker} failed to start` };
  const signal = signalOf(exit);
  if (signal) return { to: "interrupted", why: endedBy(signal, exit) };
  switch (exit.code) {
    case 0:
      return afterSuccess(pulls);
    case 1:
      return { to: "failed", why: "worker exited (code 1)" };
    case 126:
      return { to: "failed", why: `${worker} exited (code 126): not executable` };
    case 127:
      return { to: "failed", why: `${worker} exited (code 127): command not found` };
    default:
      return { to: "interrupted", why: `worker exited (code ${exit.code ?? "unknown"})` };
  }
}

/**
 * How a worker ended, in a few words, whatever its item makes of it: `worker exited (code 0)`,
 * `worker ended by SIGTERM`, `worker was killed`, `worker failed to start`.
 */
export function exitReason(exit: Exit): string {
  if (exit.ended === "killed") return "worker was killed";
  if (exit.ended === "failed-to-start") return "worker failed to start";
  const signal = signalOf(exit);
  if (signal) return endedBy(signal, exit);
  return `worker exited (code ${exit.code ?? "unknown"})`;
}

/** Exit 0: the work is the owner's to review when a pull request of it is open or merged. */
function afterSuccess(pulls: ItemPullRequests): ExitVerdict {
  if (pulls === "not checked") return { to: "interrupted", why: "worker exited 0 with no pull request known yet" };
  const open = pulls.find((pull) => pull.state === "open" && pull.merged_at === null);
  if (open) return { to: "awaiting_review", why: `worker exited 0; pull request #${open.number} is open` };
  const merged = pulls.find((pull) => pull.merged_at !== null);
  if (merged) return { to: "awaiting_review", why: `worker exited 0; pull request #${merged.number} is merged` };
  const closed = pulls.at(-1);
  return { to: "interrupted", why: closed ? `worker exited 0 with no pull request open (#${closed.number} was closed unmerged)` : "worker exited 0 with no pull request" };
}

/** `worker ended by SIGTERM`, with the exit code that said so when it was a code (128+N). */
function endedBy(signal: string, exit: Exit): string {
  return `${ENDED_BY_SIGNAL}${signal}${exit.code === null ? "" : ` (exit code ${exit.code})`}`;
}

/** The signal that ended the worker: the one recorded, or N of an exit code 128+N (a shell's way of saying so). */
function signalOf(exit: Exit): string | undefined {
  if (exit.code === null) return exit.signal ?? (exit.ended === "crashed" ? "an unknown signal" : undefined);
  if (exit.signal) return exit.signal;
  return exit.code > 128 ? SIGNAL_NAMES.get(exit.code - 128) : undefined;
}

/** Each signal's name by number; the first name of a number that has two (SIGABRT, not SIGIOT). */
const SIGNAL_NAMES: ReadonlyMap<number, string> = (() => {
  const names = new Map<number, string>();
  for (const [name, number] of Object.entries(constants.signals as Record<string, number>)) if (!names.has(number)) names.set(number, name);
  return names;
})();
