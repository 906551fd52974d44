/**
 * Setup `forge-label-removed`: `forge-with-clone` with demo/widgets onboarded and polled
 * once (issues 1-3 are ready work items, simulated since the level is plan), then the
 * `robot-army` label removed from issue 3 on the forge. No item has been dispatched.
 */
import { afterFirstPoll } from "./_forge-intake.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Onboards, polls, and takes the label off issue 3. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return afterFirstPoll(ctx, async (api) => void (await api.owner("DELETE", "/repos/demo/widgets/issues/3/labels/robot-army")));
}
