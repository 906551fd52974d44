/**
 * The one redactor: every text robot-army stores or prints from outside (git and step
 * output, error messages, HTTP errors) passes through it before it is written, so a
 * secret never reaches the store's append-only audit log, an item's reason or a terminal.
 *
 * It knows two kinds of secret: the configured values (the GitHub token, and whatever
 * credential a later reader loads: each reader calls `rememberSecret` with what it read),
 * and GitHub's token formats, which are caught even when robot-army never read them.
 */
import { readFileSync, statSync } from "node:fs";

/** What a secret is replaced with. */
export const REDACTED = "[redacted]";

/**
 * GitHub's token formats: `ghp_`, `gho_`, `ghs_`, `ghu_`, `ghr_` and `github_pat_`, then their
 * token characters (real ones have 36 or more; 16 is enough to tell a token from a word).
 * Matched even glued to a word: a token pasted after `TOKEN` or inside a URL is still a token.
 */
const GITHUB_TOKEN = /(?:gh[opsur]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,})/g;

/** Shorter than this, a value is too common a string to hunt for (and no real credential is this short). */
const MIN_SECRET_LENGTH = 4;

const remembered = new Set<string>();

/**
 * `text` with every one of `secrets` and every GitHub token in it replaced by `[redacted]`.
 * Secrets are matched literally (a secret holding `.` or `*` means those characters);
 * empty ones are ignored.
 * @example redact("fatal: https://x:ghp_abc…@host", []) // "fatal: https://x:[redacted]@host"
 */
export function redact(text: string, secrets: Iterable<string> = remembered): string {
  return redactWith(text, longestFirst(secrets));
}

/** `value` with `redact` applied to every string in it, however deep (for an audit record's body, a page's data). */
export function redactAll<T>(value: T, secrets: Iterable<string> = remembered): T {
  const values = longestFirst(secrets);
  // Copied only where something was replaced: a page of 200 rows with no secret in it is
  // given back as it came, not rebuilt object by object on every request.
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactWith(v, values);
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const after = walk(v[i]);
        if (after !== v[i]) (copy ??= v.slice())[i] = after;
      }
      return copy ?? v;
    }
    if (typeof v === "object" && v !== null && !(v instanceof Date)) {
      let copy: Record<string, unknown> | undefined;
      for (const key of Object.keys(v)) {
        const before = (v as Record<string, unknown>)[key];
        const after = walk(before);
        if (after !== before) (copy ??= { ...v })[key] = after;
      }
      return copy ?? v;
    }
    return v;
  };
  return walk(value) as T;
}

/** The secrets worth replacing, longest first, so a secret that contains another is replaced whole. */
function longestFirst(secrets: Iterable<string>): string[] {
  return [...secrets].filter((s) => s.trim().length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

function redactWith(text: string, values: readonly string[]): string {
  let out = text;
  for (const secret of values) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  // Every token format holds "gh" or "github_pat_": most text holds neither, and is not searched further.
  return out.includes("gh") || out.includes("github_pat_") ? out.replace(GITHUB_TOKEN, REDACTED) : out;
}

/** Adds a credential this process has read to what `redact` replaces by default. */
export function rememberSecret(value: string | null | undefined): void {
  if (value && value.trim().length >= MIN_SECRET_LENGTH) remembered.add(value);
  const trimmed = value?.trim();
  if (trimmed && trimmed.length >= MIN_SECRET_LENGTH) remembered.add(trimmed);
}

/**
 * Remembers the credentials a config names, read quietly (a source that cannot be read
 * now is left to the reader that needs it, which says why): `github.token_file`'s
 * content and `github.token_env`'s value, Pushover's token and user key, and a webhook URL
 * kept in `health.webhook_url_file`. Later credentials (the web token) join here, so one
 * list knows them all.
 */
export function rememberConfiguredSecrets(
  config: {
    readonly github: { readonly token_file?: string; readonly token_env?: string };
    readonly pushover?: { readonly token_file?: string; readonly user_key_file?: string };
    readonly health?: { readonly webhook_url_file?: string };
    readonly web?: { readonly token_file?: string };
  },
  env: Record<string, string | undefined> = process.env,
): void {
  const { token_file, token_env } = config.github;
  for (const file of [token_file, config.pushover?.token_file, config.pushover?.user_key_file, config.health?.webhook_url_file, config.web?.token_file]) {
    if (file) rememberFile(file);
  }
  if (token_env) rememberSecret(env[token_env]);
}

function rememberFile(file: string): void {
  try {
    // A credential file is small; anything else (a folder, a huge file) is no credential to hunt for.
    if (statSync(file).isFile() && statSync(file).size < 4096) rememberSecret(readFileSync(file, "utf8"));
  } catch {
    // Missing, a folder, unreadable: the reader that needs it reports it.
  }
}
