/**
 * Setup `forge-with-hand-closed-demo-worker`: the demo worker dispatched for issue 1 at live,
 * its pull request opened and the worker idle at its prompt; then the owner closed issue 1 by
 * hand, without merging anything (the pull request stays open). Nothing has ended the worker.
 * The worker went idle at the scenario's clock.
 */
import { withIdleDemoWorkers } from "./_demo-workers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withIdleDemoWorkers(ctx, {
    issues: 1,
    owner: async (api) => void (await api.owner("PATCH", "/repos/demo/widgets/issues/1", { state: "closed", state_reason: "not_planned" })),
  });
}
