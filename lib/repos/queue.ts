/**
 * The dispatch queue: work items in `ready`, in the order dispatch takes them (the
 * repository's `priority` from the config, higher first, then the oldest item first).
 * An item whose repository may not receive work now (not in the config, not onboarded,
 * or waiting for reapproval) is held, with the reason, and takes no place in the queue.
 */
import type { Config } from "../config.ts";
import type { Store } from "../store/open.ts";
import { listItems } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { getRepoRecord } from "./records.ts";

/** A ready item in the queue, with its place. */
export interface QueuedItem {
  /** 1 for the item dispatched next. */
  position: number;
  item: WorkItem;
  priority: number;
}

/** A ready item that waits on its repository, and why. */
export interface HeldItem {
  item: WorkItem;
  priority: number;
  reason: "not in the config" | "not onboarded" | "needs reapproval";
}

/** The queue and the held items, both in dispatch order. */
export interface DispatchQueue {
  queue: QueuedItem[];
  held: HeldItem[];
}

/**
 * Ready items in dispatch order; simulated ones only when asked for.
 * @example for (const { item } of dispatchQueue(store, config).queue) await dispatch(item);
 */
export function dispatchQueue(store: Store, config: Config, options: { includeSimulated?: boolean } = {}): DispatchQueue {
  const priority = (repo: string) => (Object.hasOwn(config.repos, repo) ? config.repos[repo].priority : 0);
  const ready = listItems(store, { states: ["ready"], includeSimulated: options.includeSimulated })
    .map((item) => ({ item, priority: priority(item.repo) }))
    // [dispatch] order: "priority" puts higher repository priority first; "oldest" is by age alone.
    .sort((a, b) => (config.dispatch.order === "priority" ? b.priority - a.priority : 0) || compare(a.item.created_at, b.item.created_at) || a.item.id - b.item.id);
  const queue: QueuedItem[] = [];
  const held: HeldItem[] = [];
  const holds = new Map<string, HeldItem["reason"] | null>();
  for (const entry of ready) {
    if (!holds.has(entry.item.repo)) holds.set(entry.item.repo, holdOf(store, config, entry.item.repo));
    const reason = holds.get(entry.item.repo);
    if (reason) held.push({ ...entry, reason });
    else queue.push({ ...entry, position: queue.length + 1 });
  }
  return { queue, held };
}

function holdOf(store: Store, config: Config, repo: string): HeldItem["reason"] | null {
  if (!Object.hasOwn(config.repos, repo)) return "not in the config";
  const state = getRepoRecord(store, repo)?.state;
  if (state === undefined) return "not onboarded";
  return state === "needs_reapproval" ? "needs reapproval" : null;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
