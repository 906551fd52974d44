/**
 * Setup `forge-with-repo-instructions`: `forge-with-worker` whose repository commits its own
 * instructions to its workers on `main`, pushed by a maintainer before the owner onboards it:
 * `.claude/robot-army.md` (the name the original tool used) and `.robot-army/instructions.md`.
 * The clone has not fetched them: robot-army reads them from origin's base branch.
 */
import { join } from "node:path";
import { commitFile, git } from "../../testing/fixtures.ts";
import { withWorker, SLEEPING_WORKER } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Builds `forge-with-worker`, then pushes both instruction files to main. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withWorker(ctx, SLEEPING_WORKER);
  try {
    const pusher = join(ctx.dir, "pusher");
    git(ctx.dir, "clone", "--quiet", join(made.vars!.FORGE_DIR, "git", "demo", "widgets.git"), pusher);
    commitFile(pusher, ".claude/robot-army.md", "Run `npm test` before every commit.\n", "Tell workers to test");
    commitFile(pusher, ".robot-army/instructions.md", "Write every commit message in the imperative.\n", "Tell workers how to write commits");
    git(pusher, "push", "--quiet", "origin", "HEAD:main");
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
  return made;
}
