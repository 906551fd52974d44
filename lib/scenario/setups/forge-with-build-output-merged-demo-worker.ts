/**
 * Setup `forge-with-build-output-merged-demo-worker`: `forge-with-ignored-work-merged-demo-worker`
 * without the owner's `prod.env`: the only thing git ignores in item 1's worktree is the
 * `node_modules/` the worker's tests installed (hidden by the owner's global ignore file).
 */
import { withIgnoredWork } from "./forge-with-ignored-work-merged-demo-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withIgnoredWork(ctx, { ownersFile: false });
}
