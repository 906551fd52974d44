/**
 * Setup `forge-with-notify-webhook-hanging`: `forge-with-notify-receivers` whose webhook
 * takes every request and never answers (until the scenario ends); Pushover still takes
 * them. With `[notifications] timeout = "2s"`, so a scenario waits two seconds, not ten.
 */
import { withNotifyReceivers } from "./forge-with-notify-receivers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The receivers, the webhook hanging; deliveries time out after two seconds. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withNotifyReceivers(ctx, { webhook: "hang", notifications: ['timeout = "2s"'] });
}
