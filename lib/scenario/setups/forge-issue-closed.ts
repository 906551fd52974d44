/**
 * Setup `forge-issue-closed`: `forge-with-clone` with demo/widgets onboarded and polled
 * once (issues 1-3 are ready work items, simulated since the level is plan), then issue 2
 * closed on the forge by its owner. The next poll should find it closed.
 */
import { afterFirstPoll } from "./_forge-intake.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Onboards, polls, and closes issue 2. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return afterFirstPoll(ctx, async (api) => void (await api.owner("PATCH", "/repos/demo/widgets/issues/2", { state: "closed" })));
}
