/**
 * Setup `vanished-session`: an empty folder (`<dir>/work`) and one detached managed
 * session, `lost1`, whose holder has been SIGKILLed, so no exit was ever recorded. Its
 * command (`sleep 4`) lives on a few seconds after its holder and then ends by itself, so a
 * later gc can prove it gone.
 */
import type { SetupContext, SetupResult } from "../setup.ts";
import { setup as emptyDir } from "./empty-dir.ts";
import { startThenSignalHolder } from "./_signal-holder.ts";

/** The session's name; `${SESSION}` names it in the steps. */
const NAME = "lost1";

/** Starts the session through the real command, then SIGKILLs its holder by its recorded pid. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await emptyDir(ctx);
  await startThenSignalHolder(ctx, made.cwd, { name: NAME, argv: ["sleep", "4"] }, "SIGKILL");
  return { cwd: made.cwd, vars: { ...made.vars, SESSION: NAME } };
}
