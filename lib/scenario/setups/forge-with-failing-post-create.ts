/**
 * Setup `forge-with-failing-post-create`: `forge-with-worker` with a post-create step that
 * fails in issue 1's worktree only, printing an error that names a private host and
 * address, as an install step can fail on one branch. Other worktrees pass it.
 */
import { appendFileSync } from "node:fs";
import { setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The step's script: fails, loudly, only where the worktree is issue 1's. */
const STEP = 'case "$PWD" in */issue-1) echo "npm ERR! cannot reach registry.internal.example (10.0.0.5)" >&2; exit 7;; esac';

/** The forge, the clone, the worker config, and the post-create step. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  appendFileSync(made.vars!.CONFIG, ["[worktrees]", `post_create = [["sh", "-c", ${JSON.stringify(STEP)}]]`, ""].join("\n"));
  return made;
}
