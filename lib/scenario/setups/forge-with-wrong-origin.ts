/**
 * Setup `forge-with-wrong-origin`: `forge-with-clone`, except that the clone's `origin`
 * is another repository (`https://github.com/someone/widgets-fork.git`), so onboarding
 * `demo/widgets` from it must be refused.
 *
 * Variables: those of `forge-with-clone`, and `${WRONG_ORIGIN}`.
 */
import { git } from "../../testing/fixtures.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

const WRONG_ORIGIN = "https://github.com/someone/widgets-fork.git";

/** Builds `forge-with-clone`, then points the clone's origin elsewhere. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  try {
    git(made.vars!.CLONE, "remote", "set-url", "origin", WRONG_ORIGIN);
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
  return { ...made, vars: { ...made.vars, WRONG_ORIGIN } };
}
