/**
 * Setup `forge-held-label-put-back`: `forge-with-clone` with demo/widgets onboarded and
 * polled once (issues 1-3 are ready work items, simulated since the level is plan); then
 * `stranger`, a collaborator, took issue 2's label off and put it back, `robot-army approve 2`
 * asked GitHub who labelled it (so item 2 is held for the owner), and the owner took the
 * label off and put it back themselves, with no poll since.
 */
import { strangerAsCollaborator } from "./_forge-collaborator.ts";
import { forgeApi } from "./_forge-intake.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

const LABELS = "/repos/demo/widgets/issues/2/labels";

/** Onboards and polls, relabels issue 2 as the collaborator, records the hold, then relabels it as the owner. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  const robotArmy = async (argv: string[]) => {
    const run = await ctx.robotArmy(argv, { cwd: made.cwd, env: made.env });
    if (run.code !== 0) throw new Error(`robot-army ${argv.join(" ")} exited ${run.code}: ${run.stderr.trim()}`);
    return run.stdout;
  };
  try {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    await robotArmy(["poll"]);
    const asStranger = strangerAsCollaborator(made);
    await asStranger("DELETE", `${LABELS}/robot-army`);
    await asStranger("POST", LABELS, { labels: ["robot-army"] });
    const asked = await robotArmy(["approve", "2"]);
    if (!asked.includes("still held for you")) throw new Error(`robot-army approve 2 did not hold item 2: ${asked}`);
    const api = forgeApi(made);
    await api.owner("DELETE", `${LABELS}/robot-army`);
    await api.owner("POST", LABELS, { labels: ["robot-army"] });
    return made;
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
}
