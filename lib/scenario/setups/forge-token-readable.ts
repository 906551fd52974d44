/**
 * Setup `forge-token-readable`: `forge-with-clone`, but the owner's token file, which the
 * config names as `github.token_file`, is readable by everyone (mode 0644), as after a
 * careless copy.
 */
import { chmodSync } from "node:fs";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Starts the forge and opens up the token file's mode. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  chmodSync(made.vars!.OWNER_TOKEN, 0o644);
  return made;
}
