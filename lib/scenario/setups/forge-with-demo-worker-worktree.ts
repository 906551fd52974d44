/**
 * Setup `forge-with-demo-worker-worktree`: the demo worker dispatched for issue 1 at live (one
 * session per repository), which committed, pushed, opened its pull request and went idle at
 * its prompt; its item is active. The steps run in the worker's worktree, where the worker
 * itself (or its agent's hooks) would run `robot-army episode ...`; the daemon's commands find
 * the config and the state dir as they do from anywhere.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { withIdleDemoWorkers } from "./_demo-workers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withIdleDemoWorkers(ctx, { issues: 1, owner: async () => {} });
  const root = join(ctx.env.RA_STATE_DIR, "worktrees", "demo", "widgets");
  const [worktree, ...more] = readdirSync(root);
  if (!worktree || more.length) {
    await made.cleanup?.();
    throw new Error(`setup: expected one worktree under ${root}, found ${[worktree, ...more].filter(Boolean).join(", ") || "none"}`);
  }
  return { ...made, cwd: join(root, worktree) };
}
