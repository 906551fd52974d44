/**
 * Setup `forge-with-c1-title`: `forge-with-clone` where the owner has given issue 1 a title
 * holding C1 control characters: U+009B (CSI, which a terminal takes as `ESC [`) before
 * `2J` (clear the screen), and U+0085 (next line). JSON's quoting, which titles used to be
 * printed in, leaves both as they are; a scenario shows they are printed escaped.
 */
import { forgeApi } from "./_forge-intake.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Issue 1's title: a CSI that clears the screen, and a next-line. */
export const C1_TITLE = "Fix \u009b2Jthe widget\u0085now";

/** The forge, the clone and config, and issue 1 with C1 controls in its title. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  try {
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { title: C1_TITLE });
    return made;
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
}
