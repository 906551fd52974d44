/**
 * Setup `forge-candidate-unreadable`: `forge-with-clone` with demo/widgets onboarded and
 * polled once while issue 1 had no label (issues 2 and 3 are ready work items, simulated
 * since the level is plan); then the owner labelled issue 1 again and closed issue 3, and
 * the forge answers the next two GraphQL requests with 502: the poll's question about its
 * new issues together, then the one about issue 1 alone, which the poll asks when the first fails.
 */
import { forgeApi } from "./_forge-intake.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Unlabels issue 1, onboards and polls, then labels it again, closes issue 3 and asks for two GraphQL 502s. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  try {
    const api = forgeApi(made);
    await api.owner("DELETE", "/repos/demo/widgets/issues/1/labels/robot-army");
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    const poll = await ctx.robotArmy(["poll"], { cwd: made.cwd, env: made.env });
    if (poll.code !== 0) throw new Error(`robot-army poll exited ${poll.code}: ${poll.stderr.trim()}`);
    await api.owner("POST", "/repos/demo/widgets/issues/1/labels", { labels: ["robot-army"] });
    await api.owner("PATCH", "/repos/demo/widgets/issues/3", { state: "closed" });
    await api.hook("POST", "/_forge/faults", { method: "POST", path: "/graphql", status: 502, times: 2 });
    return made;
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
}
