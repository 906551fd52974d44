/**
 * The one reader of a credential file (DESIGN rule 5): the GitHub token, Pushover's token
 * and user key, a webhook URL that carries its own secret. A file anyone but its owner can
 * read is refused before it is read; what it holds is remembered by the redactor, so it can
 * never reach the audit log, an item's reason or a terminal.
 */
import { readFileSync, statSync } from "node:fs";
import { PreconditionError } from "./errors.ts";
import { rememberSecret } from "./redact.ts";

/** Which credential a file holds, in the words its errors use. */
export interface SecretFileRole {
  /** The file as a sentence names it mid-way: `token file`, `Pushover token file`. */
  file: string;
  /** The config key that names it: `github.token_file`. */
  key: string;
  /** What it holds: `the token`. */
  holds: string;
}

/**
 * The file's content, trimmed, after checking it is a regular file only its owner can read
 * (0600, or tighter) and not empty; throws a PreconditionError naming the file otherwise.
 * @example readSecretFile("/home/me/.config/robot-army/token", { file: "token file", key: "github.token_file", holds: "the token" })
 */
export function readSecretFile(path: string, role: SecretFileRole): string {
  const File = role.file[0].toUpperCase() + role.file.slice(1);
  const fault = secretFileFault(path);
  if (fault?.fault === "unreadable") throw new PreconditionError(`Cannot read ${role.file} "${path}": ${fault.code}`);
  if (fault?.fault === "directory") throw new PreconditionError(`${File} "${path}" is a directory; ${role.key} must name the file holding ${role.holds}`);
  if (fault?.fault === "not_regular") throw new PreconditionError(`${File} "${path}" is not a regular file; ${role.key} must name the file holding ${role.holds}`);
  if (fault?.fault === "loose") throw new PreconditionError(`${File} "${path}" has mode ${fault.mode}; it must be 0600 (chmod 600 "${path}")`);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw cannotRead(path, role, error);
  }
  const secret = text.trim();
  if (!secret) throw new PreconditionError(`${File} "${path}" is empty`);
  rememberSecret(secret);
  return secret;
}

/** What keeps a file from holding a credential. */
export type SecretFileFault =
  | { fault: "unreadable"; code: string }
  | { fault: "directory" }
  | { fault: "not_regular" }
  /** Group or others may read or write it: `mode` as `0644`. */
  | { fault: "loose"; mode: string };

/**
 * Why `path` cannot hold a credential, or undefined when it can: it must be a regular file
 * only its owner can read or write (0600, or tighter: 0400). The config's load and every
 * reader of a credential ask this one question.
 */
export function secretFileFault(path: string): SecretFileFault | undefined {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    return { fault: "unreadable", code: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
  // Before the mode: chmod advice would not help a directory.
  if (stat.isDirectory()) return { fault: "directory" };
  if (!stat.isFile()) return { fault: "not_regular" };
  const mode = stat.mode & 0o777;
  // What matters is that group and others have nothing.
  if (mode & 0o077) return { fault: "loose", mode: "0" + mode.toString(8).padStart(3, "0") };
  return undefined;
}

function cannotRead(path: string, role: SecretFileRole, error: unknown): PreconditionError {
  return new PreconditionError(`Cannot read ${role.file} "${path}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
}
