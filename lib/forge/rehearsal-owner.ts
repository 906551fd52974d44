/**
 * The owner's part in a rehearsal: it watches a forge repository's pull requests, says
 * each one as it opens, and merges it a few seconds later through the forge's API with the
 * owner's token (`PUT /repos/{o}/{r}/pulls/{n}/merge`), as an owner reviewing the work
 * would; the forge then closes the issue the pull request's body names. Each thing it does
 * as the owner is said as the owner's (`owner (rehearsal): merged demo/widgets#6`), so a
 * newcomer watching can tell what robot-army did from what the rehearsal did for them.
 *
 * It is the rehearsal's stand-in for a person, not one of robot-army's effects: robot-army
 * only sees what it does the way it would see a real owner's merge, on its next poll.
 */
import type { Write } from "../cli.ts";
import { asLines } from "../cli.ts";
import { printable, quoted } from "../printable.ts";

/** How the owner says what it does. */
export const OWNER_PREFIX = "owner (rehearsal): ";

/** A pull request as the owner sees it in the repository's list. */
export interface SeenPull {
  number: number;
  title: string;
  body: string | null;
  state: string;
  merged_at: string | null;
  head: { ref: string };
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
  write: Write;
}

/** The owner at play: `stop` ends the watch once the look or merge under way is done. */
export interface OwnerPlay {
  /** The pull requests the owner merged, by number. */
  readonly merged: ReadonlySet<number>;
  stop(): Promise<void>;
}

/**
 * Starts the owner's play. A merge the forge refuses is said once and tried again on a
 * later look; a pull request closed or merged by someone else is left alone.
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
  const merged = new Set<number>();
  const refusals = new Map<number, string>();
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
      const before = await options.beforeMerge?.(pull);
      if (before) say(OWNER_PREFIX + before);
      try {
        await github.rest.pulls.merge({ owner, repo: name, pull_number: pull.number });
        merged.add(pull.number);
        say(`${OWNER_PREFIX}merged ${repo}#${pull.number}`);
      } catch (error) {
        const e = error as { status?: number; message?: string };
        const why = `${e.status ? `${e.status} ` : ""}${printable(e.message ?? String(error))}`;
        if (refusals.get(pull.number) !== why) say(`${OWNER_PREFIX}could not merge ${repo}#${pull.number}: ${why}; trying again`);
        refusals.set(pull.number, why);
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

async function client(apiBase: string, token: string) {
  const { Octokit } = await import("@octokit/rest");
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  return new Octokit({ baseUrl: apiBase, auth: token, log: silent });
}
