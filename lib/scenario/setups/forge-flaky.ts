/**
 * Setup `forge-flaky`: `forge-with-clone` whose forge answers the next request for
 * demo/widgets' issue list with 502 Bad Gateway, once, as a proxy in front of GitHub
 * sometimes does.
 */
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import { forgeApi } from "./_forge-intake.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Starts the forge and asks it for one 502. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  await forgeApi(made).hook("POST", "/_forge/faults", { method: "GET", path: "/repos/demo/widgets/issues", status: 502, times: 1 });
  return made;
}
