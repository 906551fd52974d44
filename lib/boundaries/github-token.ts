/**
 * Where robot-army's GitHub token comes from: a file only its owner can read
 * (`github.token_file`), or the environment variable `github.token_env` names. Never
 * both, and never config.toml itself (config.ts refuses that on load).
 */
import { readFileSync, statSync } from "node:fs";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import { rememberSecret } from "../redact.ts";

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
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    throw cannotRead(path, error);
  }
  // Before the mode: chmod advice would not help a directory.
  if (stat.isDirectory()) throw new PreconditionError(`Token file "${path}" is a directory; github.token_file must name the file holding the token`);
  if (!stat.isFile()) throw new PreconditionError(`Token file "${path}" is not a regular file; github.token_file must name the file holding the token`);
  const mode = stat.mode & 0o777;
  // 0600 as asked, or tighter (0400): what matters is that group and others have nothing.
  if (mode & 0o077) {
    throw new PreconditionError(`Token file "${path}" has mode ${octal(mode)}; it must be 0600 (chmod 600 "${path}")`);
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw cannotRead(path, error);
  }
  const token = text.trim();
  if (!token) throw new PreconditionError(`Token file "${path}" is empty`);
  rememberSecret(token);
  return token;
}

function cannotRead(path: string, error: unknown): PreconditionError {
  return new PreconditionError(`Cannot read token file "${path}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
}

function octal(mode: number): string {
  return "0" + mode.toString(8).padStart(3, "0");
}
