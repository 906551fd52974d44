/**
 * Setup `forge-labelled-by-collaborator`: `forge-with-clone` where `stranger` has push
 * access to demo/widgets and added the `robot-army` label to issue 5, which `owner`
 * opened and left unlabelled. Nothing is onboarded or polled yet.
 *
 * Variables: those of `forge-with-clone`.
 */
import { strangerAsCollaborator } from "./_forge-collaborator.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Builds `forge-with-clone`, then labels the owner's issue 5 as the collaborator. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  try {
    const asStranger = strangerAsCollaborator(made);
    await asStranger("POST", "/repos/demo/widgets/issues/5/labels", { labels: ["robot-army"] });
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
  return made;
}
