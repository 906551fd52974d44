/**
 * Setup `forge-with-three-merged-demo-workers`: four labelled issues on the forge (the seeded
 * three and a fourth the owner opened), a config allowing three sessions on the machine
 * (`daemon.max_concurrent_sessions = 3`) and in the repository, and one tick at live that
 * dispatched the demo worker for issues 1-3 while issue 4 waits for a slot. Each worker opened
 * its pull request and went idle at its prompt, and the owner merged all three, which closed
 * issues 1-3. Nothing has ended the workers: the machine is full.
 */
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withIdleDemoWorkers(ctx, {
    issues: 3,
    configLines: ["[daemon]", "max_concurrent_sessions = 3", ""],
    before: async (api) => void (await api.owner("POST", "/repos/demo/widgets/issues", { title: "Add a widget colour option", body: "Widgets in three colours.", labels: ["robot-army"] })),
    owner: mergeAll,
  });
}
