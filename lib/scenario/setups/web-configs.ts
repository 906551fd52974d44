/**
 * Setup `web-configs`: a folder of config files for the dashboard, for scenarios to point
 * `--config` at: `open-no-token.toml` (bound to 0.0.0.0 with no token file),
 * `loose-token.toml` (a token file others can read, 0644), `token-in-config.toml` (the
 * token written into the config) and `good.toml` (bound to 0.0.0.0 with a 0600 token file
 * and an allowed host name). `${WORK}` is the folder.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SetupContext, SetupResult } from "../setup.ts";

const FILES: Record<string, string> = {
  "open-no-token.toml": `[web]\nbind = "0.0.0.0"\n`,
  "loose-token.toml": `[web]\nbind = "0.0.0.0"\ntoken_file = "loose-web-token"\n`,
  "token-in-config.toml": `[web]\nbind = "0.0.0.0"\ntoken = "3f9a1c77b2e04d5a8c6f1e2d3b4a59687f0e1d2c3b4a5968"\n`,
  "good.toml": `[web]\nbind = "0.0.0.0"\ntoken_file = "web-token"\nallowed_hosts = ["robot.lan"]\n`,
};

/** Writes the config files and the token files they name. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const work = join(ctx.dir, "work");
  mkdirSync(work, { recursive: true });
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(work, name), text);
  for (const [name, mode] of [["web-token", 0o600], ["loose-web-token", 0o644]] as const) {
    writeFileSync(join(work, name), `${"7c".repeat(32)}\n`);
    chmodSync(join(work, name), mode);
  }
  return { cwd: work, vars: { WORK: work } };
}
