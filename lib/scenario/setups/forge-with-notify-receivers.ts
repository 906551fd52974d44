/**
 * Setup `forge-with-notify-receivers`: `forge-with-worker` with both notification channels
 * pointed at loopback imitations of their services (lib/testing/notify-receivers.ts): the
 * config gains `[health] webhook_url`, `[pushover]` (its two 0600 files and `api_url`) and
 * `[notifications] events` naming all five kinds, so every notification a step causes
 * reaches both. The imitations stop when the scenario ends, after its workers.
 *
 * Variables: those of `forge-with-worker`, and `${RECEIVED}` (the folder whose
 * `webhook.jsonl` and `pushover.jsonl` hold every request received, one JSON line each, for
 * `files_contain`), `${WEBHOOK_URL}`, `${PUSHOVER_URL}`, `${PUSHOVER_TOKEN_FILE}`,
 * `${PUSHOVER_USER_FILE}`, `${PUSHOVER_TOKEN}` and `${PUSHOVER_USER}`. The imitations'
 * addresses (their ports change every run) are shown as `<webhook>` and `<pushover>`.
 *
 * Its variants: `forge-with-notify-webhook-down` (the webhook answers 500) and
 * `forge-with-notify-webhook-hanging` (the webhook never answers).
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { NOTIFICATION_EVENTS } from "../../config.ts";
import { startNotifyReceivers } from "../../testing/notify-receivers.ts";
import type { ReceiverMode } from "../../testing/notify-receivers.ts";
import { setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** How the receivers answer, and lines added to the `[notifications]` table (e.g. `max_per_cycle = 2`). */
export interface NotifyReceiverOptions {
  webhook?: ReceiverMode;
  pushover?: ReceiverMode;
  notifications?: string[];
}

/** Both services answering as they should. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withNotifyReceivers(ctx);
}

/** `forge-with-worker` whose config sends every notification to both imitations, which answer as `options` say. */
export async function withNotifyReceivers(ctx: SetupContext, options: NotifyReceiverOptions = {}): Promise<SetupResult> {
  const base = await forgeWithWorker(ctx);
  const receivers = await startNotifyReceivers(join(ctx.dir, "notify"), { webhook: options.webhook, pushover: options.pushover })
    .catch(async (error) => {
      await base.cleanup?.();
      throw error;
    });
  appendFileSync(base.vars!.CONFIG, [
    receivers.configToml,
    "[notifications]",
    `events = ${JSON.stringify(NOTIFICATION_EVENTS)}`,
    ...(options.notifications ?? []),
    "",
  ].join("\n"));
  return {
    ...base,
    vars: {
      ...base.vars,
      RECEIVED: receivers.receivedDir,
      WEBHOOK_URL: receivers.webhookUrl,
      PUSHOVER_URL: receivers.pushoverUrl,
      PUSHOVER_TOKEN_FILE: receivers.tokenFile,
      PUSHOVER_USER_FILE: receivers.userKeyFile,
      PUSHOVER_TOKEN: receivers.token,
      PUSHOVER_USER: receivers.user,
    },
    placeholders: {
      ...base.placeholders,
      [new URL(receivers.webhookUrl).host]: "<webhook>",
      [new URL(receivers.pushoverUrl).host]: "<pushover>",
    },
    cleanup: async () => {
      try {
        await base.cleanup?.();
      } finally {
        await receivers.close();
      }
    },
  };
}
