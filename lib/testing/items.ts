/**
 * Test scaffolding for the read commands: a store in a temp dir and work items made at
 * a given time and walked to a given state through the one transition function, as
 * intake and dispatch would (every step audited).
 */
import { join } from "node:path";
import { defaultConfig } from "../config.ts";
import type { Config, RepoConfig } from "../config.ts";
import { withTempDir } from "./fixtures.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import { createItem } from "../work-items/queries.ts";
import type { WorkItem, WorkItemState } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import { endSession, recordSession } from "../work-items/sessions.ts";
import type { EndReason } from "../work-items/sessions.ts";
import { recordApproval } from "../repos/records.ts";

/** Runs `fn` with a fresh store in a temp dir (`stateDir` is where it lives). */
export async function withStore(fn: (store: Store, stateDir: string) => void | Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const stateDir = join(dir, "state");
    const store = await openStore(stateDir);
    try {
      await fn(store, stateDir);
    } finally {
      store.close();
    }
  });
}

/** Runs `fn` with the clock fixed at `at` (RA_NOW), then puts the clock back. */
export function atTime<T>(at: string, fn: () => T): T {
  const before = process.env.RA_NOW;
  process.env.RA_NOW = at;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.RA_NOW;
    else process.env.RA_NOW = before;
  }
}

/** Runs an async `fn` with the clock fixed at `when` (RA_NOW) until it settles, then puts the clock back. */
export async function atTimeAsync<T>(when: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.RA_NOW;
  process.env.RA_NOW = when;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.RA_NOW;
    else process.env.RA_NOW = before;
  }
}

/** The moves that bring a new item to each state, with the reasons a pass would give. */
const PATHS: Partial<Record<WorkItemState, Array<[WorkItemState, string]>>> = {
  discovered: [],
  ready: [["ready", "repository onboarded"]],
  dispatching: [["ready", "repository onboarded"], ["dispatching", "a slot is free"]],
  active: [["ready", "repository onboarded"], ["dispatching", "a slot is free"], ["active", "session started"]],
  done: [["ready", "repository onboarded"], ["dispatching", "a slot is free"], ["active", "session started"], ["done", "issue closed"]],
  failed: [["ready", "repository onboarded"], ["dispatching", "a slot is free"], ["failed", "worktree could not be made: disk full"]],
  abandoned: [["abandoned", "label removed before dispatch"]],
};

/** What to make: the issue, when, the state to walk to, and whether it is simulated. */
export interface ItemSpec {
  repo?: string;
  issue: number;
  at?: string;
  state?: WorkItemState;
  simulated?: boolean;
  title?: string;
}

/** Makes a work item at `spec.at` and walks it to `spec.state` (default `ready`). */
export function makeItem(store: Store, spec: ItemSpec): WorkItem {
  const at = spec.at ?? "2026-01-15T09:00:00Z";
  return atTime(at, () => {
    const item = createItem(store, {
      repo: spec.repo ?? "demo/widgets", issue: spec.issue, title: spec.title ?? `Issue ${spec.issue}`, body: "Do the thing",
      author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: at,
    }, { simulated: spec.simulated ?? false });
    const path = PATHS[spec.state ?? "ready"];
    if (!path) throw new RangeError(`No test path to state "${spec.state}"`);
    let last = item;
    // As the pass that observed the issue closed writes done (the only writer of it).
    for (const [to, reason] of path) last = transition(store, item.id, to, { reason, issueClosedObserved: to === "done" });
    return last;
  });
}

/** A config naming repositories with these priorities (paths under /src). */
export async function configWithRepos(priorities: Record<string, number>): Promise<Config> {
  const base = await defaultConfig();
  const repos: Record<string, RepoConfig> = {};
  for (const [name, priority] of Object.entries(priorities)) {
    repos[name] = { path: `/src/${name.split("/")[1]}`, base_branch: "main", max_sessions: 1, priority };
  }
  return { ...base, repos };
}

/** Marks repositories onboarded with a minimal fingerprint. */
export function onboard(store: Store, ...names: string[]): void {
  for (const name of names) recordApproval(store, name, `/src/${name.split("/")[1]}`, { path: `/src/${name.split("/")[1]}`, private: false });
}

/**
 * An item of demo/widgets interrupted after its one session (`s-1`, in `worktree` on `branch`)
 * ended as `ended` says: what an interrupted item's decision facts are read from; its id.
 */
export function interruptedItem(store: Store, spec: { issue: number; worktree: string; branch: string; ended: { reason: EndReason; code: number | null; at: string } }): number {
  const id = makeItem(store, { issue: spec.issue, state: "active" }).id;
  recordSession(store, {
    id: "s-1", item: id, name: `ra-widgets-${spec.issue}`, host: "testhost", launcher: "tmux", marker: `@ra_item=${id}`,
    worktree: spec.worktree, branch: spec.branch, started_at: "2026-01-15T09:00:00Z", simulated: false, terminal: null,
  });
  endSession(store, "s-1", spec.ended.reason, { code: spec.ended.code, at: spec.ended.at });
  transition(store, id, "interrupted", { reason: `worker ${spec.ended.reason}` });
  return id;
}
