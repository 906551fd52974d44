/**
 * Where robot-army's GitHub token comes from: a file only its owner can read
 * (`github.token_file`), or the environment variable `github.token_env` names. Never
 * both, and never config.toml itself (config.ts refuses that on load).
 */
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import { rememberSecret } from "../redact.ts";
import { readSecretFile } from "../secret-file.ts";

type Env = Record<string, string | undefined>;

/** The token, or null when the config names no source (reads are then anonymous). */
export function readToken(github: Config["github"], env: Env = process.env): string | null {
  if (github.token_file && github.token_env) {
    throw new PreconditionError(
      `The config sets both github.token_file ("${github.token_file}") and github.token_env ("${github.token_env}"); keep one, so it is clear which token robot-army uses`,
    );
  }
  if (github.token_file) return readTokenFile(github.token_file);
  if (github.token_env) {
    const token = env[github.token_env]?.trim();
    if (!token) throw new PreconditionError(`github.token_env names the environment variable "${github.token_env}", which is not set or empty`);
    rememberSecret(token);
    return token;
  }
  return null;
}

/** Reads a token file after checking nobody but its owner can read it (DESIGN rule 5). */
export function readTokenFile(path: string): string {
  return readSecretFile(path, { file: "token file", key: "github.token_file", holds: "the token" });
}
