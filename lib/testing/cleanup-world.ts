/**
 * The world the cleanup tests stand on: a store, a bare origin and an onboarded clone of it
 * (demo/widgets, base main), the worktree root under the state dir, and helpers that add
 * real worktrees there, claimed by an item's session row or by none. Test support only.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { defaultConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { SIMULATED_GITHUB, wireEffects } from "../effects.ts";
import type { Effects } from "../effects.ts";
import { recordApproval } from "../repos/records.ts";
import type { Store } from "../store/open.ts";
import { git, makeGitRepo } from "./fixtures.ts";
import { makeItem, withStore } from "./items.ts";
import type { WorkItemState } from "../work-items/queries.ts";
import { recordSession } from "../work-items/sessions.ts";

/** What a cleanup test works with. */
export interface CleanupWorld {
  store: Store;
  config: Config;
  stateDir: string;
  sessionRoot: string;
  effects: Effects;
  dir: string;
  clone: string;
  root: string;
  /** A real worktree of the clone at `<root>/demo/widgets/<name>` on a new branch from main. */
  addWorktree(name: string, branch: string): string;
  /** A work item in `state` whose session row claims `path` on `branch`. */
  claim(issue: number, path: string, branch: string, state?: WorkItemState): number;
}

/** Runs `fn` in a fresh world at effect level `local` unless told otherwise. */
export async function withCleanupWorld(fn: (w: CleanupWorld) => Promise<void>, level: "plan" | "local" = "local"): Promise<void> {
  await withStore(async (store, stateDir) => {
    const dir = dirname(stateDir);
    const source = makeGitRepo(join(dir, "source"));
    git(dir, "clone", "--quiet", "--bare", source, join(dir, "origin.git"));
    const clone = join(dir, "widgets");
    git(dir, "clone", "--quiet", join(dir, "origin.git"), clone);
    const base = await defaultConfig();
    const config: Config = { ...base, repos: { "demo/widgets": { path: clone, base_branch: "main", max_sessions: 1, priority: 0 } as Config["repos"][string] } };
    recordApproval(store, "demo/widgets", clone, { path: clone, private: false });
    const sessionRoot = join(dir, "sessions");
    mkdirSync(sessionRoot, { mode: 0o700 });
    const root = join(stateDir, "worktrees");
    const world: CleanupWorld = {
      store, config, stateDir, sessionRoot, dir, clone, root,
      effects: wireEffects(level, { github: SIMULATED_GITHUB }),
      addWorktree(name, branch) {
        const path = join(root, "demo", "widgets", name);
        mkdirSync(dirname(path), { recursive: true });
        git(clone, "worktree", "add", "--quiet", "-b", branch, path, "origin/main");
        return path;
      },
      claim(issue, path, branch, state = "active") {
        const item = makeItem(store, { issue, state });
        recordSession(store, {
          id: `5e551011-0000-4000-8000-${String(issue).padStart(12, "0")}`, item: item.id, name: `ra-widgets-${issue}`, host: "testhost",
          launcher: "process", marker: "", worktree: path, branch, started_at: "", simulated: false,
        });
        return item.id;
      },
    };
    await fn(world);
  });
}
