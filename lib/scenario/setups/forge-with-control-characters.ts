/**
 * Setup `forge-with-control-characters`: `forge-with-clone` where the owner has given issue
 * 1 a title and a body holding terminal escape sequences: a window-title change and a colour
 * in the title, a clear-screen and a carriage return that would overwrite its line in the
 * body. Printed as they are, they would act on the owner's terminal; a scenario shows they
 * are printed escaped.
 */
import { forgeApi } from "./_forge-intake.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Issue 1's title: retitles the terminal window, then turns the text red. */
export const ESCAPING_TITLE = "\x1b]0;pwned\x07Fix \x1b[31mthe widget";

/** Issue 1's body: clears the screen, and hides its first line behind a carriage return. */
export const ESCAPING_BODY = "First line\x1b[2J\nrm -rf ~\rlooks harmless\n";

/** The forge, the clone and config, and issue 1 with escape sequences in its title and body. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  try {
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { title: ESCAPING_TITLE, body: ESCAPING_BODY });
    return made;
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
}
