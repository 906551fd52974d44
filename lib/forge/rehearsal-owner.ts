/**
 * The owner's part in a rehearsal: it watches a forge repository's pull requests, says
 * each one as it opens, and merges it a few seconds later through the forge's API with the
 * owner's token (`PUT /repos/{o}/{r}/pulls/{n}/merge`), as an owner reviewing the work
 * would; the forge then closes the issue the pull request's body names. It merges both
 * ways, in turn: the first pull request with a merge commit, the next squashed, and so
 * on; after a squash it deletes the head branch (`DELETE /repos/{o}/{r}/git/refs/heads/..`),
 * as an owner clicking "Delete branch" would, so only the pull request's
 * `refs/pull/<n>/head` still holds that branch's commits on the remote. Each thing it does
 * as the owner is said as the owner's (`owner (rehearsal): merged demo/widgets#6 (merge
 * commit)`), so a newcomer watching can tell what robot-army did from what the rehearsal
 * did for them.
 *
 * Asked to (`review`), it first reviews the first pull request it sees, asking for a change,
 * and merges that one only once its head has moved (the worker's answer) or the wait is over:
 * the loop of review coming back to the worker, as robot-army types the review into it. The
 * review is a comment review: GitHub lets no one request changes on their own pull request,
 * and a rehearsal's worker opens its pull requests with the owner's token.
 *
 * It is the rehearsal's stand-in for a person, not one of robot-army's effects: robot-army
 * only sees what it does the way it would see a real owner's merge, on its next poll.
 */
import type { Write } from "../cli.ts";
import { asLines } from "../cli.ts";
import { printable, quoted } from "../printable.ts";
import type { MergeMethod } from "./git.ts";

/** How the owner says what it does. */
export const OWNER_PREFIX = "owner (rehearsal): ";

/** A pull request as the owner sees it in the repository's list. */
export interface SeenPull {
  number: number;
  title: string;
  body: string | null;
  state: string;
  merged_at: string | null;
  head: { ref: string; sha: string };
}

/** What the owner plays on, and how fast. */
export interface OwnerPlayOptions {
  /** The forge's API base. */
  apiBase: string;
  /** The owner's token. */
  token: string;
  /** `owner/name` of the repository. */
  repo: string;
  /** How long after a pull request is first seen the owner merges it (default 3 s). */
  mergeAfterMs?: number;
  /** How often the owner looks at the list (default every second). */
  lookEveryMs?: number;
  /**
   * Runs just before a pull request is merged; a line it returns is said as the owner's.
   * The rehearsal keeps one item here, so its worker is still there after the merge.
   */
  beforeMerge?: (pull: SeenPull) => Promise<string | undefined> | string | undefined;
  /** The review the first pull request gets before its merge, and how long its head is waited on to move. */
  review?: { body: string; waitMs: number };
  write: Write;
}

/** How the owner merged one pull request. */
export interface OwnerMerge {
  method: MergeMethod;
  /** The head branch it merged. */
  head: string;
  /** After a squash: whether the owner deleted the head branch on the forge. */
  branchDeleted: boolean;
}

/** How a merge method is said: `merge commit`, `squash`. */
export const METHOD_WORDS: Record<MergeMethod, string> = { merge: "merge commit", squash: "squash" };

/** The owner at play: `stop` ends the watch once the look or merge under way is done. */
export interface OwnerPlay {
  /** The pull requests the owner merged, by number, and how. */
  readonly merged: ReadonlyMap<number, OwnerMerge>;
  stop(): Promise<void>;
}

/**
 * Starts the owner's play. The method alternates over the merges done (a refused merge
 * does not take its turn); a merge the forge refuses is said once and tried again on a
 * later look; a pull request closed or merged by someone else is left alone. A branch
 * the forge would not delete is said and left.
 * @example
 * const owner = playTheOwner({ apiBase: forge.url, token, repo: "demo/widgets", write });
 * // ... later
 * await owner.stop();
 */
export function playTheOwner(options: OwnerPlayOptions): OwnerPlay {
  const { repo, write } = options;
  const mergeAfterMs = options.mergeAfterMs ?? 3000;
  const lookEveryMs = options.lookEveryMs ?? 1000;
  const [owner, name] = repo.split("/");
  const firstSeen = new Map<number, number>();
  const merged = new Map<number, OwnerMerge>();
  const refusals = new Map<number, string>();
  /** The pull request reviewed (the first one seen), the head it had, and when. */
  let reviewed: { number: number; head: string; at: number; answered: boolean } | undefined;
  let stopped = false;
  let wake: (() => void) | undefined;
  const say = (line: string) => write(asLines(line));

  const look = async (github: Awaited<ReturnType<typeof client>>) => {
    const pulls = (await github.rest.pulls.list({ owner, repo: name, state: "all", per_page: 100 })).data as SeenPull[];
    for (const pull of pulls.sort((a, b) => a.number - b.number)) {
      if (!firstSeen.has(pull.number)) {
        firstSeen.set(pull.number, Date.now());
        say(`pull request opened: ${repo}#${pull.number} ${quoted(pull.title)} (${printable((pull.body ?? "").split("\n")[0])})`);
      }
      if (stopped || merged.has(pull.number) || pull.state !== "open" || pull.merged_at) continue;
      if (Date.now() - firstSeen.get(pull.number)! < mergeAfterMs) continue;
      if (options.review && !reviewed) {
        await github.rest.pulls.createReview({ owner, repo: name, pull_number: pull.number, event: "COMMENT", body: options.review.body });
        reviewed = { number: pull.number, head: pull.head.sha, at: Date.now(), answered: false };
        say(`${OWNER_PREFIX}reviewed ${repo}#${pull.number}, asking for a change: ${quoted(options.review.body)}; it is merged once the worker answers`);
        continue;
      }
      if (reviewed?.number === pull.number && !reviewed.answered) {
        if (pull.head.sha !== reviewed.head) {
          reviewed.answered = true;
          say(`${OWNER_PREFIX}${repo}#${pull.number} has a new commit, ${pull.head.sha.slice(0, 7)}: the worker answered the review`);
        } else if (Date.now() - reviewed.at < options.review!.waitMs) continue;
        else {
          reviewed.answered = true;
          say(`${OWNER_PREFIX}no answer to the review of ${repo}#${pull.number} within ${Math.round(options.review!.waitMs / 1000)}s; merging it as it is`);
        }
      }
      const before = await options.beforeMerge?.(pull);
      if (before) say(OWNER_PREFIX + before);
      const method: MergeMethod = merged.size % 2 === 0 ? "merge" : "squash";
      try {
        await github.rest.pulls.merge({ owner, repo: name, pull_number: pull.number, merge_method: method });
      } catch (error) {
        const why = refusal(error);
        if (refusals.get(pull.number) !== why) say(`${OWNER_PREFIX}could not merge ${repo}#${pull.number}: ${why}; trying again`);
        refusals.set(pull.number, why);
        continue;
      }
      const done: OwnerMerge = { method, head: pull.head.ref, branchDeleted: false };
      merged.set(pull.number, done);
      say(`${OWNER_PREFIX}merged ${repo}#${pull.number} (${METHOD_WORDS[method]})`);
      if (method !== "squash") continue;
      try {
        await github.rest.git.deleteRef({ owner, repo: name, ref: `heads/${pull.head.ref}` });
        done.branchDeleted = true;
        say(`${OWNER_PREFIX}deleted branch ${printable(pull.head.ref)}: only refs/pull/${pull.number}/head holds its commits on the forge now`);
      } catch (error) {
        say(`${OWNER_PREFIX}could not delete branch ${printable(pull.head.ref)}: ${refusal(error)}`);
      }
    }
  };

  const playing = (async () => {
    const github = await client(options.apiBase, options.token);
    while (!stopped) {
      try {
        await look(github);
      } catch {
        // The forge did not answer this look (it may be stopping); the next look asks again.
      }
      if (!stopped) await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, lookEveryMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();

  return {
    merged,
    async stop() {
      stopped = true;
      wake?.();
      await playing;
    },
  };
}

/** A refused call in one line: `405 Pull Request is not mergeable`. */
function refusal(error: unknown): string {
  const e = error as { status?: number; message?: string };
  return `${e.status ? `${e.status} ` : ""}${printable(e.message ?? String(error))}`;
}

async function client(apiBase: string, token: string) {
  const { Octokit } = await import("@octokit/rest");
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  return new Octokit({ baseUrl: apiBase, auth: token, log: silent });
}
