/**
 * Setup `notify-config-mistakes`: a folder of config files with the mistakes people make
 * when they configure a notification channel, for scenarios to point `--config` at:
 * `half-pushover.toml` (a token file and no user key file), `loose-mode.toml` (both Pushover
 * files, the token's readable by others, 0644), `pushover-token.toml` (the token written
 * into the config), `webhook-query.toml` (a webhook URL carrying `?auth=` in its query),
 * `webhook-both.toml` (a webhook URL and a webhook URL file) and `good.toml` (both files
 * 0600). `${WORK}` is the folder.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SetupContext, SetupResult } from "../setup.ts";

const FILES: Record<string, string> = {
  "half-pushover.toml": `[pushover]\ntoken_file = "token"\n`,
  "loose-mode.toml": `[pushover]\ntoken_file = "loose-token"\nuser_key_file = "user"\n`,
  "pushover-token.toml": `[pushover]\ntoken = "azGDORePK8gMaC0QOYAMyEEuzJnyUi"\nuser_key_file = "user"\n`,
  "webhook-query.toml": `[health]\nwebhook_url = "https://ntfy.example/alerts?auth=c2VjcmV0LXRva2Vu"\n`,
  "webhook-both.toml": `[health]\nwebhook_url = "https://ntfy.example/alerts"\nwebhook_url_file = "webhook-url"\n`,
  "good.toml": `[health]\nwebhook_url = "https://ntfy.example/alerts"\n\n[pushover]\ntoken_file = "token"\nuser_key_file = "user"\n`,
};

/** Writes the config files and the credential files they name. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const work = join(ctx.dir, "work");
  mkdirSync(work, { recursive: true });
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(work, name), text);
  for (const [name, mode] of [["token", 0o600], ["user", 0o600], ["loose-token", 0o644], ["webhook-url", 0o600]] as const) {
    writeFileSync(join(work, name), `${name}-${"k".repeat(24)}\n`);
    chmodSync(join(work, name), mode);
  }
  return { cwd: work, vars: { WORK: work } };
}
