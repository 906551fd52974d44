/**
 * Work waits for what it depends on. A ready item whose issue is blocked by another open
 * issue stays ready, with the reason, and is dispatched once its blockers close. What blocks
 * it is read from two places: GitHub's issue dependencies (the poll keeps the issue's
 * `issue_dependencies_summary`; the blocking issues are asked only of an item that has some),
 * and "blocked by #N" or "depends on #N" in the owner's own words (the body, when its author
 * is the owner). Each blocker's state is asked again every pass while the item is ready,
 * one request per blocked item (and one per issue its words name), nothing for the others.
 *
 * A blocker that cannot be read blocks, and says so: unknown is never taken for closed. A
 * cycle (ready items that block each other) is reported as the `dependency_cycle` anomaly and
 * not waited on: robot-army cannot tell which should go first, so none of its items waits on
 * the others.
 *
 * @example
 * await refreshBlockers({ store, github, config }, { includeSimulated: false });
 * blockedReason(store, item) // "blocked by demo/widgets#3 (open)"
 */
import type { GitHubIssue, GitHubReader } from "../boundaries/github-types.ts";
import { isoSeconds, now } from "../clock.ts";
import type { Config } from "../config.ts";
import type { DaemonEvent } from "../events.ts";
import { raiseAnomaly } from "../store/anomalies.ts";
import type { Store } from "../store/open.ts";
import { listItems } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";

/** One issue blocking an item, and whether it is open as last asked. */
export interface Blocker {
  repo: string;
  issue: number;
  source: "github" | "text";
  state: "open" | "closed" | "unknown";
  checked_at: string;
}

/** What refreshing the blockers works with. */
export interface DependencyDeps {
  store: Store;
  github: Pick<GitHubReader, "issueBlockers" | "getIssue">;
  config: Pick<Config, "github">;
}

/** Notes what GitHub says blocks the item's issue, as the poll read it (the blockers are asked only of an item with some). */
export function noteGitHubBlockers(store: Store, item: number, issue: Pick<GitHubIssue, "blocked_by">): void {
  store.statement("UPDATE work_items SET blocked_by_open = ? WHERE id = ?").run(issue.blocked_by?.open ?? null, item);
}

/**
 * The issues "blocked by #N" or "depends on #N" names in `text` (also `owner/name#N`, and
 * lists: "depends on #3, #4 and #5"), each once, in the order named.
 * @example textBlockers("Depends on #3 and other/repo#4.", "demo/widgets") // [{ repo: "demo/widgets", issue: 3 }, { repo: "other/repo", issue: 4 }]
 */
export function textBlockers(text: string, repo: string): Array<{ repo: string; issue: number }> {
  const found = new Map<string, { repo: string; issue: number }>();
  const ref = String.raw`(?:[\w.-]+\/[\w.-]+)?#\d+`;
  const phrase = new RegExp(String.raw`\b(?:blocked\s+by|depends\s+on)\s*:?\s*(${ref}(?:\s*(?:,|and|&)\s*${ref})*)`, "gi");
  for (const match of text.matchAll(phrase)) {
    for (const one of match[1].matchAll(/([\w.-]+\/[\w.-]+)?#(\d+)/g)) {
      const blocker = { repo: one[1] ?? repo, issue: Number(one[2]) };
      found.set(`${blocker.repo.toLowerCase()}#${blocker.issue}`, blocker);
    }
  }
  return [...found.values()];
}

/** What a refresh did. */
export interface BlockersRefreshed {
  /** Ready items whose blockers were asked. */
  asked: number;
  /** Ready items waiting on an open (or unreadable) blocker after it. */
  blocked: number;
  /** Items whose wait ended this pass: their blockers closed. */
  released: number;
  /** Each item whose blockers could not be read, with why. */
  failed: string[];
  events: DaemonEvent[];
}

/**
 * Asks again what blocks each ready item that may have a blocker: GitHub says it has open ones
 * (or was never asked: an item from before they were kept), one was open when last asked, or
 * its owner's words name one not known closed. Raises the cycles found.
 */
export async function refreshBlockers(deps: DependencyDeps, options: { includeSimulated: boolean }): Promise<BlockersRefreshed> {
  const result: BlockersRefreshed = { asked: 0, blocked: 0, released: 0, failed: [], events: [] };
  const owner = deps.config.github.author?.toLowerCase();
  for (const item of listItems(deps.store, { states: ["ready"], includeSimulated: options.includeSimulated })) {
    const named = owner !== undefined && item.author.toLowerCase() === owner ? textBlockers(`${item.title}\n${item.body}`, item.repo) : [];
    const open = githubOpen(deps.store, item.id);
    const before = blockersOf(deps.store, item.id);
    const knownClosed = (b: { repo: string; issue: number }, source: Blocker["source"]) =>
      before.some((x) => x.source === source && x.repo.toLowerCase() === b.repo.toLowerCase() && x.issue === b.issue && x.state === "closed");
    const askGitHub = open === null || open > 0 || before.some((b) => b.source === "github" && blocks(b));
    const askWords = named.filter((b) => !knownClosed(b, "text"));
    if (!askGitHub && !askWords.length && named.length === before.filter((b) => b.source === "text").length) continue;
    result.asked++;
    const at = isoSeconds(now());
    let found: Blocker[] = [];
    try {
      if (askGitHub) {
        const listed = await deps.github.issueBlockers(item.repo, item.issue).catch((error: unknown) => {
          // A GitHub without issue dependencies has no such list: nothing blocks the item there.
          if ((error as { status?: number }).status === 404) return [];
          throw error;
        });
        found.push(...listed.map((b) => ({ repo: b.repo, issue: b.number, source: "github" as const, state: b.state, checked_at: at })));
      } else found.push(...before.filter((b) => b.source === "github"));
      for (const b of named) {
        const state = knownClosed(b, "text") ? "closed" as const : await deps.github.getIssue(b.repo, b.issue).then((issue) => issue.state, () => "unknown" as const);
        found.push({ ...b, source: "text", state, checked_at: at });
      }
    } catch (error) {
      // Unread, an item GitHub says is blocked stays blocked (blockedReason): unknown is never taken for free.
      result.failed.push(`item ${item.id} (${item.repo}#${item.issue}): ${error instanceof Error ? error.message : String(error)}`);
      if (blockedReason(deps.store, item)) result.blocked++;
      continue;
    }
    found = [...new Map(found.map((b) => [`${b.source} ${b.repo.toLowerCase()}#${b.issue}`, b])).values()];
    const wasBlocked = before.some(blocks) || (open ?? 0) > 0;
    deps.store.transaction(() => {
      deps.store.statement("DELETE FROM item_blockers WHERE item = ?").run(item.id);
      for (const b of found) {
        deps.store.statement("INSERT INTO item_blockers (item, repo, issue, source, state, checked_at) VALUES (?, ?, ?, ?, ?, ?)")
          .run(item.id, b.repo, b.issue, b.source, b.state, b.checked_at);
      }
      // What the list just said is newer than the issue the poll read.
      if (askGitHub) deps.store.statement("UPDATE work_items SET blocked_by_open = ? WHERE id = ?").run(found.filter((b) => b.source === "github" && b.state === "open").length, item.id);
    });
    const blocked = blockedReason(deps.store, item) !== null;
    if (blocked) result.blocked++;
    if (wasBlocked && !blocked && before.some(blocks)) {
      result.released++;
      result.events.push({ event: "unblocked", line: `item ${item.id} (${item.repo}#${item.issue}) is no longer blocked: ${[...new Set(before.filter(blocks).map((b) => `${b.repo}#${b.issue}`))].join(", ")} closed`, item: item.id });
    } else if (blocked && !before.some(blocks)) {
      result.events.push({ event: "blocked", line: `item ${item.id} (${item.repo}#${item.issue}) waits: ${blockedReason(deps.store, item)!}`, item: item.id });
    }
  }
  for (const cycle of dependencyCycles(deps.store)) {
    const path = cycle.map((i) => `${i.repo}#${i.issue}`).join(", ");
    const { raised } = raiseAnomaly(deps.store, {
      kind: "dependency_cycle", actionId: cycle.map((i) => `${i.repo}#${i.issue}`).sort().join(" "), repo: cycle[0].repo, item: cycle[0].id,
      detail: `issues ${path} block each other: robot-army does not wait on them for one another (other blockers still count); check their dependencies on GitHub`,
    });
    if (raised) result.events.push({ event: "dependency_cycle", line: `dependency cycle: ${path} block each other; not waited on for one another`, items: cycle.map((i) => i.id) });
  }
  return result;
}

/** How many open issues GitHub last said block the item's issue; null when never read. */
function githubOpen(store: Store, item: number): number | null {
  return (store.statement("SELECT blocked_by_open AS n FROM work_items WHERE id = ?").get(item) as { n: number | null } | undefined)?.n ?? null;
}

/** The item's blockers as last asked. */
export function blockersOf(store: Store, item: number): Blocker[] {
  return (store.statement("SELECT repo, issue, source, state, checked_at FROM item_blockers WHERE item = ? ORDER BY repo, issue, source").all(item) as unknown as Blocker[]).map((b) => ({ ...b }));
}

/** Whether a blocker keeps its item waiting: open, or not known to be closed. */
function blocks(b: Pick<Blocker, "state">): boolean {
  return b.state !== "closed";
}

/** The ready items that may be blocked (a blocker not known closed, or GitHub saying some are open): only these are asked why. */
export function itemsMaybeBlocked(store: Store): Set<number> {
  return new Set((store.statement(
    `SELECT item AS id FROM item_blockers WHERE state <> 'closed'
     UNION SELECT id FROM work_items WHERE state = 'ready' AND blocked_by_open > 0`,
  ).all() as Array<{ id: number }>).map((row) => row.id));
}

/**
 * Why a ready item waits for other issues (`blocked by demo/widgets#3 (open)`), or null when
 * nothing blocks it. Blockers in a dependency cycle with the item (reported, not waited on)
 * do not count; any other does. GitHub saying it has open blockers not listed yet blocks it.
 */
export function blockedReason(store: Store, item: Pick<WorkItem, "id">): string | null {
  const rows = blockersOf(store, item.id);
  const open = rows.filter(blocks);
  const unread = (githubOpen(store, item.id) ?? 0) > 0 && !rows.some((b) => b.source === "github");
  if (!open.length && !unread) return null;
  const cycle = dependencyCycles(store).find((c) => c.some((i) => i.id === item.id)) ?? [];
  const inCycle = (b: Blocker) => cycle.some((i) => i.repo.toLowerCase() === b.repo.toLowerCase() && i.issue === b.issue);
  const waiting = open.filter((b) => !inCycle(b));
  if (!waiting.length && !unread) return null;
  const named = [...(waiting.length ? [describeBlockers(waiting)] : []), ...(unread ? ["issues GitHub's dependencies name, not read yet"] : [])].join(", ");
  return `blocked by ${named}; dispatched once ${waiting.length + (unread ? 2 : 0) === 1 ? "it closes" : "they close"}`;
}

function describeBlockers(blockers: readonly Blocker[]): string {
  const unique = new Map(blockers.map((b) => [`${b.repo}#${b.issue}`, b]));
  return [...unique.values()].map((b) => `${b.repo}#${b.issue} (${b.state === "unknown" ? "could not be read" : b.state}${b.source === "text" ? ", named in its words" : ""})`).join(", ");
}

/**
 * The cycles among ready items: each a strongly connected set of items (of two or more, or one
 * blocked by itself) whose issues block one another, open or unread, found in one pass
 * (Tarjan's), lowest item first.
 */
export function dependencyCycles(store: Store): Array<Array<{ id: number; repo: string; issue: number }>> {
  const rows = store.statement(
    `SELECT w.id AS id, w.repo AS repo, w.issue AS issue, b.repo AS blocker_repo, b.issue AS blocker FROM item_blockers b JOIN work_items w ON w.id = b.item
     WHERE w.state = 'ready' AND b.state <> 'closed' ORDER BY w.id`,
  ).all() as Array<{ id: number; repo: string; issue: number; blocker_repo: string; blocker: number }>;
  if (!rows.length) return [];
  const key = (repo: string, issue: number) => `${repo.toLowerCase()}#${issue}`;
  const nodes = new Map<string, { id: number; repo: string; issue: number; next: Set<string> }>();
  for (const row of rows) {
    const node = nodes.get(key(row.repo, row.issue)) ?? { id: row.id, repo: row.repo, issue: row.issue, next: new Set<string>() };
    node.next.add(key(row.blocker_repo, row.blocker));
    nodes.set(key(row.repo, row.issue), node);
  }
  // Tarjan's strongly connected components, iteratively: no recursion to overflow on a long chain.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: Array<Array<{ id: number; repo: string; issue: number }>> = [];
  let counter = 0;
  for (const root of nodes.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: Iterator<string> }> = [];
    const visit = (node: string) => {
      index.set(node, counter);
      low.set(node, counter++);
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: [...(nodes.get(node)?.next ?? [])].filter((n) => nodes.has(n))[Symbol.iterator]() });
    };
    visit(root);
    while (work.length) {
      const top = work.at(-1)!;
      const step = top.next.next();
      if (!step.done) {
        const next = step.value;
        if (!index.has(next)) visit(next);
        else if (onStack.has(next)) low.set(top.node, Math.min(low.get(top.node)!, index.get(next)!));
        continue;
      }
      work.pop();
      if (work.length) low.set(work.at(-1)!.node, Math.min(low.get(work.at(-1)!.node)!, low.get(top.node)!));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const members: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        members.push(member);
      } while (member !== top.node);
      const selfBlocked = members.length === 1 && nodes.get(members[0])!.next.has(members[0]);
      if (members.length > 1 || selfBlocked) {
        cycles.push(members.map((k) => nodes.get(k)!).map(({ id, repo, issue }) => ({ id, repo, issue })).sort((a, b) => a.id - b.id));
      }
    }
  }
  return cycles.sort((a, b) => a[0].id - b[0].id);
}
