/**
 * Setup `config-mistakes`: an empty folder holding config files with the mistakes people
 * make, for scenarios to point `--config` at: `token.toml` (a token written into the
 * config), `token-value.toml` (a GitHub token pasted under an innocent key),
 * `url-credentials.toml` (an api_base with a user and token in it),
 * `unknown-key.toml` (a misspelt key), `bad-type.toml` (a number written as text),
 * `inexact-number.toml` (a whole number too large to be exact) and
 * `bad-repo.toml` (a repository table without owner/name). `${WORK}` is the folder.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SetupContext, SetupResult } from "../setup.ts";

const FILES: Record<string, string> = {
  "token.toml": `[github]\napi_base = "https://api.github.com"\ntoken = "not-a-real-token"\n`,
  "token-value.toml": `[github]\nlabel = "ghp_${"x".repeat(36)}"\n`,
  "url-credentials.toml": `[github]\napi_base = "http://x:ghp_${"y".repeat(36)}@127.0.0.1:8080"\n`,
  "unknown-key.toml": `[daemon]\ntick_seconds = 30\ntick_second = 30\n`,
  "bad-type.toml": `[daemon]\n\ntick_seconds = "sixty"\n`,
  "inexact-number.toml": `[worker]\nmax_sessions = 1e16\n`,
  "bad-repo.toml": `[repos.widgets]\npath = "~/src/widgets"\n`,
};

/** Writes the config files. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const work = join(ctx.dir, "work");
  mkdirSync(work, { recursive: true });
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(work, name), text);
  return { cwd: work, vars: { WORK: work } };
}
