/**
 * Setup `forge-with-changed-settings`: `forge-with-clone` with `demo/widgets` onboarded
 * (by the real `robot-army onboard`), and then made private on the forge, so the settings
 * GitHub reports no longer match the fingerprint the owner approved.
 *
 * Variables: those of `forge-with-clone`.
 */
import { findRepo, loadForgeData, saveForgeData } from "../../forge/state.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Builds `forge-with-clone`, onboards the repository, then changes its visibility. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  try {
    await onboardHere({ env: ctx.env }, "demo/widgets");
    // The forge reads its state file again when it changes on disk.
    const data = loadForgeData(made.vars!.FORGE_DIR);
    findRepo(data, "demo", "widgets")!.private = true;
    saveForgeData(made.vars!.FORGE_DIR, data);
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
  return made;
}
