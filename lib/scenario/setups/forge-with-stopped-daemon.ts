/**
 * Setup `forge-with-stopped-daemon`: `forge-with-daemon` whose daemon, once its first tick
 * dispatched issue 1, was sent SIGTERM and has exited, as `systemctl stop` or Ctrl-C in
 * its terminal would stop it. Its output is in `${DAEMON_LOG}`.
 */
import { withDaemon } from "./forge-with-daemon.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Starts the daemon, lets it tick once, then stops it with SIGTERM. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const { made, stop } = await withDaemon(ctx);
  try {
    await stop();
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
  return made;
}
