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
  store.statement("UPDATE work_items SET blocked_by_total = ? WHERE id = ?").run(issue.blocked_by?.total ?? null, item);
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

/** Asks again what blocks each ready item that has a blocker (GitHub's or its owner's words); raises the cycles found. */
export async function refreshBlockers(deps: DependencyDeps, options: { includeSimulated: boolean }): Promise<BlockersRefreshed> {
  const result: BlockersRefreshed = { asked: 0, blocked: 0, released: 0, failed: [], events: [] };
  const owner = deps.config.github.author?.toLowerCase();
  for (const item of listItems(deps.store, { states: ["ready"], includeSimulated: options.includeSimulated })) {
    const named = owner !== undefined && item.author.toLowerCase() === owner ? textBlockers(`${item.title}\n${item.body}`, item.repo) : [];
    const total = (deps.store.statement("SELECT blocked_by_total AS n FROM work_items WHERE id = ?").get(item.id) as { n: number | null }).n ?? 0;
    const before = blockersOf(deps.store, item.id);
    if (!named.length && total === 0 && !before.length) continue;
    result.asked++;
    const at = isoSeconds(now());
    const found: Blocker[] = [];
    try {
      if (total > 0) {
        for (const b of await deps.github.issueBlockers(item.repo, item.issue)) found.push({ repo: b.repo, issue: b.number, source: "github", state: b.state, checked_at: at });
      }
      for (const b of named) {
        const state = await deps.github.getIssue(b.repo, b.issue).then((issue) => issue.state, () => "unknown" as const);
        found.push({ ...b, source: "text", state, checked_at: at });
      }
    } catch (error) {
      result.failed.push(`item ${item.id} (${item.repo}#${item.issue}): ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const wasBlocked = before.some(blocks);
    deps.store.transaction(() => {
      deps.store.statement("DELETE FROM item_blockers WHERE item = ?").run(item.id);
      for (const b of found) {
        deps.store.statement("INSERT OR REPLACE INTO item_blockers (item, repo, issue, source, state, checked_at) VALUES (?, ?, ?, ?, ?, ?)")
          .run(item.id, b.repo, b.issue, b.source, b.state, b.checked_at);
      }
    });
    const blocked = found.some(blocks);
    if (blocked) result.blocked++;
    if (wasBlocked && !blocked) {
      result.released++;
      result.events.push({ event: "unblocked", line: `item ${item.id} (${item.repo}#${item.issue}) is no longer blocked: ${[...new Set(before.filter(blocks).map((b) => `${b.repo}#${b.issue}`))].join(", ")} closed`, item: item.id });
    } else if (blocked && !wasBlocked) {
      result.events.push({ event: "blocked", line: `item ${item.id} (${item.repo}#${item.issue}) waits: ${blockedReason(deps.store, item)!}`, item: item.id });
    }
  }
  for (const cycle of dependencyCycles(deps.store)) {
    const path = [...cycle, cycle[0]].map((i) => `${i.repo}#${i.issue}`).join(" → ");
    const { raised } = raiseAnomaly(deps.store, {
      kind: "dependency_cycle", actionId: cycle.map((i) => `${i.repo}#${i.issue}`).sort().join(" "), repo: cycle[0].repo, item: cycle[0].id,
      detail: `issues ${path} block each other: robot-army does not wait on them, and dispatches them as if unblocked; check their dependencies on GitHub`,
    });
    if (raised) result.events.push({ event: "dependency_cycle", line: `dependency cycle: ${path}; not waited on`, items: cycle.map((i) => i.id) });
  }
  return result;
}

/** The item's blockers as last asked. */
export function blockersOf(store: Store, item: number): Blocker[] {
  return (store.statement("SELECT repo, issue, source, state, checked_at FROM item_blockers WHERE item = ? ORDER BY repo, issue, source").all(item) as unknown as Blocker[]).map((b) => ({ ...b }));
}

/** Whether a blocker keeps its item waiting: open, or not known to be closed. */
function blocks(b: Pick<Blocker, "state">): boolean {
  return b.state !== "closed";
}

/**
 * Why a ready item waits for other issues (`blocked by demo/widgets#3 (open)`), or null when
 * nothing blocks it, or when it is in a dependency cycle (reported, not waited on).
 */
export function blockedReason(store: Store, item: Pick<WorkItem, "id">): string | null {
  const open = blockersOf(store, item.id).filter(blocks);
  if (!open.length) return null;
  if (dependencyCycles(store).some((cycle) => cycle.some((i) => i.id === item.id))) return null;
  return `blocked by ${describeBlockers(open)}; dispatched once ${open.length === 1 ? "it closes" : "they close"}`;
}

function describeBlockers(blockers: readonly Blocker[]): string {
  const unique = new Map(blockers.map((b) => [`${b.repo}#${b.issue}`, b]));
  return [...unique.values()].map((b) => `${b.repo}#${b.issue} (${b.state === "unknown" ? "could not be read" : b.state}${b.source === "text" ? ", named in its words" : ""})`).join(", ");
}

/**
 * The cycles among ready items: each a list of items, every one blocked (open, or unread) by
 * the next's issue, the last by the first's. Each cycle once, starting at its lowest item.
 */
export function dependencyCycles(store: Store): Array<Array<{ id: number; repo: string; issue: number }>> {
  const rows = store.statement(
    `SELECT w.id AS id, w.repo AS repo, w.issue AS issue, b.repo AS blocker_repo, b.issue AS blocker FROM item_blockers b JOIN work_items w ON w.id = b.item
     WHERE w.state = 'ready' AND b.state <> 'closed' ORDER BY w.id`,
  ).all() as Array<{ id: number; repo: string; issue: number; blocker_repo: string; blocker: number }>;
  if (!rows.length) return [];
  const key = (repo: string, issue: number) => `${repo.toLowerCase()}#${issue}`;
  const nodes = new Map<string, { id: number; repo: string; issue: number; next: string[] }>();
  for (const row of rows) {
    const node = nodes.get(key(row.repo, row.issue)) ?? { id: row.id, repo: row.repo, issue: row.issue, next: [] };
    node.next.push(key(row.blocker_repo, row.blocker));
    nodes.set(key(row.repo, row.issue), node);
  }
  const cycles = new Map<string, Array<{ id: number; repo: string; issue: number }>>();
  const walk = (start: string, at: string, path: string[]) => {
    for (const next of nodes.get(at)?.next ?? []) {
      if (next === start) {
        const members = path.map((k) => nodes.get(k)!);
        const lowest = members.reduce((low, m, i) => (m.id < members[low].id ? i : low), 0);
        const ordered = [...members.slice(lowest), ...members.slice(0, lowest)].map(({ id, repo, issue }) => ({ id, repo, issue }));
        cycles.set(ordered.map((m) => m.id).join(","), ordered);
      } else if (!path.includes(next) && nodes.has(next)) walk(start, next, [...path, next]);
    }
  };
  for (const start of nodes.keys()) walk(start, start, [start]);
  return [...cycles.values()];
}
