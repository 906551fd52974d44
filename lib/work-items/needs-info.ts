/**
 * The tick step that lets an item follow its worker's word: a worker that waits for its
 * owner (its registry says `needs_info`: `robot-army episode needs-info`, or its agent's
 * permission or question prompt) moves its `active` item to `needs_info`, with the question
 * as the reason (`worker asks: <reason>`), which `status` lists under "needs you"; once the
 * worker is at work again (its registry no longer says `needs_info`), the item is `active`
 * again. A worker that was answered and asked again between two passes (its question newer
 * than the item's move) has its item answered and asked again, so the owner reads the
 * question it asks now.
 *
 * Only the item's current session speaks for it, and only while its row is open on this
 * host. The registry is read as retirement reads it (lib/work-items/idleness.ts `readRegistry`):
 * unknown (no episode, an unreadable file, a profile with no registry) changes nothing, and
 * is asked again next pass. Idle never replaces `needs_info` in the registry (a worker that
 * asked and ended its turn still waits), so a registry that says idle or busy means the
 * question was answered. Nothing is sent from here: the `state.work_item` record of the
 * move is what the notification pass reads.
 */
import { now, parseTimestamp } from "../clock.ts";
import type { Config } from "../config.ts";
import type { DaemonEvent } from "../events.ts";
import { readRegistry } from "./idleness.ts";
import { needsInfoReason } from "../episodes/lifecycle.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "./queries.ts";
import type { WorkItem, WorkItemState } from "./queries.ts";
import { latestSession, openSessions } from "./sessions.ts";
import type { StoredSession } from "./sessions.ts";
import { transition } from "./transition.ts";

/** What the step works with: the store, the worker profile rows without one were started with, and this machine. */
export interface NeedsInfoDeps {
  store: Store;
  config: Pick<Config, "worker">;
  /** Rows of another host name a worktree that is not here: they are that machine's to read. */
  host: string;
}

/** What one pass did: items that now wait for their owner, items whose workers are at work again, one event each. */
export interface NeedsInfoResult {
  asked: number;
  answered: number;
  events: DaemonEvent[];
}

/** The reason an item answered is given when its worker is at work again. */
export const ANSWERED_REASON = "the worker is at work again";

/** The reason an item answered is given when its worker's turn ended and it waits at its prompt (a permission refused, a question answered by ending the turn). */
export const ANSWERED_WAITING_REASON = "the worker's question was answered; it waits at its prompt";

/** Moves `active` items whose workers wait for their owner to `needs_info`, and back once they are at work again. */
export async function followNeedsInfo(deps: NeedsInfoDeps): Promise<NeedsInfoResult> {
  const result: NeedsInfoResult = { asked: 0, answered: 0, events: [] };
  // Read before any item moves: an item asked for on this pass is not looked at again.
  const waiting = currentSessions(deps, "needs_info");
  for (const row of currentSessions(deps, "active")) {
    const registry = await readRegistry(row, row.profile ?? deps.config.worker.profile);
    if (registry.known && registry.status === "needs_info") ask(deps, row, registry.reason, registry.changedAt, result);
  }
  for (const row of waiting) {
    const registry = await readRegistry(row, row.profile ?? deps.config.worker.profile);
    if (!registry.known) continue;
    const item = getItem(deps.store, row.item)!;
    if (registry.status === "needs_info" && !askedSince(registry.changedAt, item.updated_at)) continue;
    // "Active again" only of a worker that works again: one whose turn ended on the answer waits at its prompt.
    const working = registry.status === "busy";
    const why = working ? ANSWERED_REASON : ANSWERED_WAITING_REASON;
    const answered = move(deps.store, row, "needs_info", "active", why, { registry: registry.status });
    if (!answered) continue;
    result.answered++;
    result.events.push({
      event: "needs_info_answered", line: `item ${answered.id} (${answered.repo}#${answered.issue}) ${working ? "is active again" : "was answered"}: ${why}`,
      item: answered.id, repo: answered.repo, issue: answered.issue, session: row.id,
    });
    // Answered and asked again since the item was moved: the owner is told the question the worker asks now.
    if (registry.status === "needs_info") ask(deps, row, registry.reason, registry.changedAt, result);
  }
  return result;
}

/** Moves the row's active item to needs_info with the worker's question, and says so. */
function ask(deps: NeedsInfoDeps, row: StoredSession, question: string | null, askedAt: string, result: NeedsInfoResult): void {
  const reason = `worker asks: ${needsInfoReason(question ?? "") || "(no question given)"}`;
  const item = move(deps.store, row, "active", "needs_info", reason, { asked_at: askedAt });
  if (!item) return;
  result.asked++;
  result.events.push({
    event: "needs_info", line: `item ${item.id} (${item.repo}#${item.issue}) needs you: ${item.reason}; "robot-army attach ${item.id}" to answer`,
    item: item.id, repo: item.repo, issue: item.issue, session: row.id, reason: item.reason,
  });
}

/**
 * Whether the registry's question was asked after the item went needs_info: a new one. A time
 * that cannot be read, or one in the future, is not, so no pass can ask the same question again.
 */
function askedSince(askedAt: string, itemChangedAt: string): boolean {
  const asked = parseTimestamp(askedAt);
  const moved = parseTimestamp(itemChangedAt);
  return asked !== undefined && moved !== undefined && asked > moved && asked <= now();
}

/** The open rows on this host that are their item's current session, of items in `state`. */
function currentSessions(deps: NeedsInfoDeps, state: WorkItemState): StoredSession[] {
  return openSessions(deps.store, { state }).filter((row) => row.host === deps.host && latestSession(deps.store, row.item)?.id === row.id);
}

/**
 * Moves the row's item from `from` to `to` when it is still so and this is still its current
 * session (an owner's command may have moved it while the registry was read); null when not.
 */
function move(store: Store, row: StoredSession, from: WorkItemState, to: WorkItemState, reason: string, details: Record<string, unknown>): WorkItem | null {
  return store.transaction(() => {
    const item = getItem(store, row.item);
    if (item?.state !== from || latestSession(store, row.item)?.id !== row.id) return null;
    return transition(store, row.item, to, { reason, details: { session: row.id, episode: row.episode_key, ...details } });
  });
}
