/**
 * Setup `forge-with-trunk-default`: `forge-with-worker`, but the forge's demo/widgets has
 * `trunk` as its default branch and no `main` at all; the config names no base_branch, and
 * the repository is not onboarded yet.
 */
import { SLEEPING_WORKER, withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withWorker(ctx, SLEEPING_WORKER, { defaultBranch: "trunk" });
}
