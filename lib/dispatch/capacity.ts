/**
 * Capacity: how many worker sessions run on this machine and in each repository, from
 * the managed-session root, against `daemon.max_concurrent_sessions` and each
 * repository's `max_sessions`. A worker session is one tagged `ra_item`; it is ours when
 * that names an item of this store (and its `ra_store` tag, when it has one, names this
 * store), else another's. Kept sessions count like any other and are reported apart: a
 * worker is kept when its item's keep covers it (it is the item's current session,
 * lib/ending/keeps.ts) or its managed session carries the `keep` tag, and a reason that a
 * kept session fills names the command that releases it.
 *
 * A session whose liveness cannot be known, or a root or record that cannot be read,
 * makes the count unobservable, and nothing may be dispatched on it (DESIGN rule 1).
 */
import { readdirSync } from "node:fs";
import { samePath } from "../same-path.ts";
import type { Config } from "../config.ts";
import { keyLines } from "../config.ts";
import { keptSession } from "../ending/keeps.ts";
import { isKept, readRecord } from "../sessions/records.ts";
import type { SessionRecord } from "../sessions/records.ts";
import { commandRuns, sessionState, workerRuns } from "../sessions/state.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "../work-items/queries.ts";
import { ITEM_TAG, STORE_TAG } from "../sessions/worker-tags.ts";

export { ITEM_TAG, STORE_TAG };

/** Where a repository's limit comes from. */
export type LimitSource = "configured" | "worker.max_sessions";

/** One repository's live worker sessions (ours) against its limit. */
export interface RepoCapacity {
  live: number;
  kept: number;
  max: number;
  source: LimitSource;
}

/** A worker session that counts: live (starting or running), or with a child still running. */
export interface LiveWorker {
  id: string;
  name: string;
  item: string;
  ours: boolean;
  /** The item's repository, when the item is ours and in the store. */
  repo: string | null;
  /** Whether a keep holds it: its item's keep covers it, or its managed session is tagged `keep`. */
  kept: boolean;
  /** The command that releases its keep (`robot-army unkeep <id>`, or untagging the session); null when not kept. */
  release: string | null;
}

/** Whether one more worker may start in a repository, and why (not). */
export interface DispatchAnswer {
  ok: boolean;
  reason: string;
}

/** The counts, and the one question dispatch asks of them. */
export interface Capacity {
  /** False when any worker session's liveness, or the root itself, could not be read. */
  observable: boolean;
  /** Why the count cannot be observed; set only when `observable` is false. */
  why?: string;
  /** Live worker sessions on this machine: ours (of which kept) and others'. */
  machine: { ours: number; kept: number; other: number; max: number };
  /** Our live workers by their item's repository: every configured repository, and any other one a worker of ours runs in. */
  repos: Record<string, RepoCapacity>;
  /** The live workers counted; when not observable, only those that could be read. */
  workers: LiveWorker[];
  /** Whether a worker for `repo` may start now. Always no when the count is not observable. */
  canDispatch(repo: string): DispatchAnswer;
}

/** What `observeCapacity` reads. */
export interface CapacityInput {
  sessionRoot: string;
  config: Config;
  /** The store whose items are ours; without one, every worker is another's. */
  store: Store | undefined;
  /**
   * Repositories whose config table sets `max_sessions` itself (see `configuredLimits`).
   * Without it, a limit equal to `worker.max_sessions` is reported as coming from there.
   */
  configuredLimits?: ReadonlySet<string>;
}

/**
 * Counts the live worker sessions in the session root.
 * @example
 * const capacity = observeCapacity({ sessionRoot: sessionRoot(), config, store });
 * const { ok, reason } = capacity.canDispatch("demo/widgets");
 */
export function observeCapacity(input: CapacityInput): Capacity {
  const { config, store } = input;
  const problems: string[] = [];
  const workers: LiveWorker[] = [];
  for (const record of readRecords(input.sessionRoot, problems)) {
    const item = record.tags[ITEM_TAG];
    if (item === undefined) continue;
    const live = isLive(input.sessionRoot, record, problems);
    if (!live) continue;
    const owner = ownership(record, store);
    workers.push({ id: record.id, name: record.name, item, ...owner, ...keptBy(record, owner.repo !== null ? store : undefined) });
  }
  const repos: Record<string, RepoCapacity> = {};
  const limitOf = (repo: string): RepoCapacity => {
    const max = Object.hasOwn(config.repos, repo) ? config.repos[repo].max_sessions : config.worker.max_sessions;
    const configured = input.configuredLimits?.has(repo) ?? (Object.hasOwn(config.repos, repo) && max !== config.worker.max_sessions);
    return { live: 0, kept: 0, max, source: configured ? "configured" : "worker.max_sessions" };
  };
  for (const repo of Object.keys(config.repos).sort()) repos[repo] = limitOf(repo);
  const ours = workers.filter((w) => w.ours);
  for (const worker of ours) {
    if (worker.repo === null) continue;
    const entry = (repos[worker.repo] ??= limitOf(worker.repo));
    entry.live++;
    if (worker.kept) entry.kept++;
  }
  const machine = {
    ours: ours.length,
    kept: ours.filter((w) => w.kept).length,
    other: workers.length - ours.length,
    max: config.daemon.max_concurrent_sessions,
  };
  const why = problems.length ? summarise(problems) : undefined;
  return {
    observable: why === undefined,
    ...(why === undefined ? {} : { why }),
    machine,
    repos,
    workers,
    canDispatch(repo) {
      if (why !== undefined) return { ok: false, reason: `capacity cannot be observed: ${why}` };
      const total = machine.ours + machine.other;
      if (total >= machine.max) {
        const split = machine.kept ? `: ${machine.ours} ours (${machine.kept} kept), ${machine.other} other${releaseHint(ours)}` : "";
        return { ok: false, reason: `this machine runs ${total} of ${machine.max} worker sessions (daemon.max_concurrent_sessions)${split}` };
      }
      const entry = repos[repo] ?? limitOf(repo);
      if (entry.live >= entry.max) {
        const kept = entry.kept ? `, ${entry.kept} kept${releaseHint(ours.filter((w) => w.repo === repo))}` : "";
        return { ok: false, reason: `repository ${repo} runs ${entry.live} of ${entry.max} sessions (${entry.source})${kept}` };
      }
      return { ok: true, reason: `a slot is free: ${total} of ${machine.max} sessions on this machine, ${entry.live} of ${entry.max} in ${repo}` };
    },
  };
}

/** The tags a worker session for an item of this store carries. */
export function workerTags(store: Store, item: number): Record<string, string> {
  return { [ITEM_TAG]: String(item), [STORE_TAG]: store.path };
}

/**
 * The repositories whose table in a config file's text sets `max_sessions` itself; the
 * loaded config fills the rest from `worker.max_sessions` and no longer tells them apart.
 */
export function configuredLimits(configText: string, repos: Iterable<string>): Set<string> {
  const keys = keyLines(configText);
  return new Set([...repos].filter((repo) => keys.has(`repos.${repo}.max_sessions`)));
}

/** Every record in the root; what cannot be read is a problem, never "no session". */
function readRecords(root: string, problems: string[]): SessionRecord[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch (error) {
    // No root yet: no session was ever recorded in it, so none runs.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    problems.push(`the session root "${root}" cannot be read: ${(error as Error).message}`);
    return [];
  }
  const records: SessionRecord[] = [];
  for (const name of names.filter((n) => n.endsWith(".json") && !n.startsWith(".")).sort()) {
    let record: SessionRecord | undefined;
    try {
      record = readRecord(root, name.slice(0, -5));
    } catch (error) {
      problems.push(lowerFirst((error as Error).message));
      continue;
    }
    if (record === undefined) continue; // reaped between the listing and the read
    if (typeof record.tags !== "object" || record.tags === null) {
      problems.push(`session record "${root}/${name}" has no tags, so whether it is a worker is not known`);
      continue;
    }
    records.push(record);
  }
  return records;
}

/** Whether a worker session takes a slot; an unknown answer is noted as a problem and counts as no slot known. */
function isLive(root: string, record: SessionRecord, problems: string[]): boolean {
  const state = sessionState(root, record);
  if (state === "starting" || state === "running") return true;
  // An exit recorded while what the command started still ran holds its slot until those are proven gone.
  if (state === "exited") return record.membersAtExit ? workerRuns(root, record) !== false : false;
  const label = `worker session "${record.name}" (${ITEM_TAG}=${record.tags[ITEM_TAG]})`;
  if (state === "unknown") {
    const holder = record.holderPid === null ? "its record's age cannot be read" : `its holder (pid ${record.holderPid}) cannot be proven running or gone`;
    problems.push(`${label} cannot be checked: ${holder}`);
    return false;
  }
  // Vanished: its holder is gone without recording an exit, but what its command started may live on.
  const child = commandRuns(record);
  if (child === undefined) {
    problems.push(`${label} lost its holder and its command (pid ${record.childPid}) cannot be checked`);
    return false;
  }
  return child;
}

/**
 * What a kept worker's slot waits for, naming the commands that release the keeps.
 * @example releaseHint(workers) // '; a kept session holds its slot until its keep is released: "robot-army unkeep 3"'
 */
export function releaseHint(workers: readonly LiveWorker[]): string {
  const commands = [...new Set(workers.flatMap((w) => (w.release ? [w.release] : [])))].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  return commands.length ? `; a kept session holds its slot until its keep is released: ${commands.map((c) => `"${c}"`).join(", ")}` : "";
}

/**
 * Whether a worker is kept, and what releases it: its item's keep when that covers this
 * session, or its own `keep` tag. `store` is given only when the worker's item is ours and on record.
 */
function keptBy(record: SessionRecord, store: Store | undefined): { kept: boolean; release: string | null } {
  const releases: string[] = [];
  const raw = record.tags[ITEM_TAG];
  // A keep covers its item's current session only: an earlier attempt's worker is not kept by it.
  if (store && keptSession(store, Number(raw))?.id === record.id) {
    releases.push(`robot-army unkeep ${raw}`);
  }
  if (isKept(record)) releases.push(`robot-army session tag ${record.name} --rm keep`);
  return { kept: releases.length > 0, release: releases.length ? releases.join(" and ") : null };
}

function ownership(record: SessionRecord, store: Store | undefined): { ours: boolean; repo: string | null } {
  if (!store) return { ours: false, repo: null };
  const storeTag = record.tags[STORE_TAG];
  if (storeTag !== undefined && !samePath(storeTag, store.path)) return { ours: false, repo: null };
  const raw = record.tags[ITEM_TAG];
  const item = /^\d+$/.test(raw) ? getItem(store, Number(raw)) : undefined;
  // Tagged with this store: ours even when the item is not (or no longer) on record.
  return { ours: item !== undefined || storeTag !== undefined, repo: item?.repo ?? null };
}


function summarise(problems: string[]): string {
  const shown = problems.slice(0, 3).join("; ");
  return problems.length > 3 ? `${shown}; and ${problems.length - 3} more` : shown;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
