/** Setup `forge-with-notify-webhook-down`: `forge-with-notify-receivers` whose webhook answers every request with a 500; Pushover still takes them. */
import { withNotifyReceivers } from "./forge-with-notify-receivers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The receivers, the webhook failing. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withNotifyReceivers(ctx, { webhook: "fail" });
}
