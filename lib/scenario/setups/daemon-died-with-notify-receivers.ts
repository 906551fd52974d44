/**
 * Setup `daemon-died-with-notify-receivers`: `daemon-died` (a lock naming a process that has
 * exited, its last heartbeat 40 minutes old) with the daemon's store, and loopback
 * imitations of a JSON webhook and Pushover's messages API configured as the two channels,
 * at effect level plan. What each received is in `${RECEIVED}/webhook.jsonl` and
 * `${RECEIVED}/pushover.jsonl`; the webhook's address shows as `<webhook>`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../store/open.ts";
import { startNotifyReceivers } from "../../testing/notify-receivers.ts";
import { setup as daemonDied } from "./daemon-died.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The dead daemon's files and store, both receivers, and a config pointing at them. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await daemonDied(ctx);
  (await openStore(ctx.env.RA_STATE_DIR)).close();
  const receivers = await startNotifyReceivers(join(ctx.dir, "receivers"));
  const configDir = join(ctx.env.XDG_CONFIG_HOME, "robot-army");
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(configDir, "config.toml"), ['[daemon]', 'effect_level = "plan"', receivers.configToml].join("\n"));
  return {
    ...made,
    vars: { ...made.vars, RECEIVED: receivers.receivedDir },
    placeholders: { [new URL(receivers.webhookUrl).host]: "<webhook>", [new URL(receivers.pushoverUrl).host]: "<pushover>" },
    cleanup: async () => {
      await receivers.close();
      await made.cleanup?.();
    },
  };
}
