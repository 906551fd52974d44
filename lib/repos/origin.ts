/**
 * Whether a clone's `origin` is the repository GitHub (or the sandbox forge) describes.
 * The usual spellings of one repository are the same: `https://github.com/o/n`, with or
 * without `.git` or a trailing slash, `git@github.com:o/n.git`, `ssh://git@github.com/o/n`,
 * and, for the forge, a plain path or `file://` URL of its bare repository.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { GitHubRepository } from "../boundaries/github-types.ts";

/** Where a remote URL points, reduced to what tells repositories apart. */
export type RemoteTarget =
  | { kind: "hosted"; host: string; path: string }
  | { kind: "local"; path: string };

/**
 * Reads a remote URL, or undefined when it is not a spelling this module knows.
 * Hosts and owner/name compare without case, as GitHub treats them; ports, users and
 * credentials in the URL are left out.
 * @example remoteTarget("git@github.com:Demo/widgets.git") // { kind: "hosted", host: "github.com", path: "demo/widgets" }
 */
export function remoteTarget(url: string, base: string = process.cwd()): RemoteTarget | undefined {
  const text = url.trim();
  if (text === "") return undefined;
  // scp-like syntax, `[user@]host:owner/name`: a colon before any slash, as git reads it.
  // A one-letter "host" would be a drive letter, so a host has at least two characters.
  const scp = text.includes("://") ? null : /^(?:[^@/\s]+@)?([^:/\s]{2,}):(.+)$/.exec(text);
  if (scp) return hosted(scp[1], scp[2]);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return undefined;
    }
    if (parsed.protocol === "file:") return local(fileURLToPath(parsed));
    if (!["https:", "http:", "ssh:", "git:", "git+ssh:", "ssh+git:"].includes(parsed.protocol)) return undefined;
    return hosted(parsed.hostname, decodeURIComponent(parsed.pathname));
  }
  return local(isAbsolute(text) ? text : resolve(base, text));
}

/**
 * Whether `origin` names the repository GitHub described: its clone URL or its web URL
 * (both are what owners clone from). A relative local origin is read from `base`, the clone.
 */
export function originMatches(origin: string, repository: Pick<GitHubRepository, "clone_url" | "html_url">, base?: string): boolean {
  const found = remoteTarget(origin, base);
  if (!found) return false;
  return expectedRemotes(repository).some((url) => sameTarget(found, remoteTarget(url)));
}

/** The URLs an origin may name for this repository: its clone URL and its web URL, once each. */
export function expectedRemotes(repository: Pick<GitHubRepository, "clone_url" | "html_url">): string[] {
  return [...new Set([repository.clone_url, repository.html_url].filter((url) => url))];
}

/**
 * A remote URL fit to print: a password or token written into it (`https://x:TOKEN@host/`,
 * `https://ghp_...@host/`) is replaced, so a refusal never echoes a credential. A plain
 * user name such as `git` stays.
 */
export function redactedRemote(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/\s]*)@/i, (whole, scheme: string, user: string) =>
    PLAIN_USER.test(user) && !TOKEN_PREFIX.test(user) ? whole : `${scheme}***@`);
}

/** A user name as hosts allow them; anything else in that place may be a credential. */
const PLAIN_USER = /^[A-Za-z0-9._-]{1,39}$/;
const TOKEN_PREFIX = /^(gh[opusr]_|github_pat_)/;

function hosted(host: string, path: string): RemoteTarget | undefined {
  const name = path.replace(/^\/+/, "").replace(/\/+$/, "").replace(/\.git$/i, "");
  if (!/^[^/\s]+\/[^/\s]+$/.test(name)) return undefined;
  // GitHub's SSH-over-443 host is github.com by another name.
  const lower = host.toLowerCase();
  return { kind: "hosted", host: lower === "ssh.github.com" ? "github.com" : lower, path: name.toLowerCase() };
}

function local(path: string): RemoteTarget {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // A path that does not exist still names a place; compare it as written.
  }
  return { kind: "local", path: real.length > 1 ? real.replace(/\/+$/, "") : real };
}

function sameTarget(a: RemoteTarget, b: RemoteTarget | undefined): boolean {
  if (!b || a.kind !== b.kind) return false;
  if (a.kind === "local") return a.path === b.path || a.path.replace(/\.git$/, "") === b.path.replace(/\.git$/, "");
  return a.path === b.path && a.host === (b as { host: string }).host;
}
