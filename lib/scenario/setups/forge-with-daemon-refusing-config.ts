/**
 * Setup `forge-with-daemon-refusing-config`: `forge-with-daemon`, then its config.toml
 * changed twice while it runs, each time followed by SIGHUP (the daemon's "read the config
 * now"): first a valid change (`[daemon] poll_seconds = 45`), which it applies, then a typo
 * in that key (`pol_seconds`), which it refuses; the setup returns once the daemon's log says
 * so. The daemon is still running on the last good config. Its log is `${DAEMON_LOG}`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withDaemon } from "./forge-with-daemon.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const { made, stop } = await withDaemon(ctx);
  try {
    const config = made.vars!.CONFIG;
    const log = made.vars!.DAEMON_LOG;
    const { pid } = JSON.parse(readFileSync(join(ctx.env.RA_STATE_DIR, "heartbeat.json"), "utf8")) as { pid: number };
    const good = `${readFileSync(config, "utf8").trimEnd()}\n\n[daemon]\npoll_seconds = 45\n`;
    await changeAndWait(config, good, pid, log, "config applied from");
    await changeAndWait(config, good.replace("poll_seconds = 45", "pol_seconds = 45"), pid, log, "config not applied");
  } catch (error) {
    await stop();
    await made.cleanup?.();
    throw error;
  }
  return { ...made, cleanup: async () => {
    await stop();
    await made.cleanup?.();
  } };
}

/** Writes the config, sends the daemon SIGHUP, and waits (up to 20 s) for its log to say `words`. */
async function changeAndWait(config: string, text: string, pid: number, log: string, words: string): Promise<void> {
  const before = readFileSync(log, "utf8").split(words).length;
  writeFileSync(config, text);
  process.kill(pid, "SIGHUP");
  const deadline = Date.now() + 20_000;
  while (readFileSync(log, "utf8").split(words).length === before) {
    if (Date.now() > deadline) throw new Error(`the daemon's log never said "${words}": ${readFileSync(log, "utf8").trim()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
