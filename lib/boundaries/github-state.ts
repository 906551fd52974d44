/**
 * What the GitHub boundary remembers between runs: the ETag and high-water mark of each
 * list it polls (table `etags`), the login a token belongs to (a row of `etags` keyed by
 * the token's fingerprint, so a new token is asked about again), and the last rate-limit state it saw (table
 * `github_rate_limit`). Without a store (a check that must leave nothing behind) it
 * remembers in memory for the life of the connection. A store that cannot be read or
 * written fails as the store (`StoreError`, naming the file), never as GitHub.
 */
import { isoSeconds, now } from "../clock.ts";
import type { Store } from "../store/open.ts";
import { storeError } from "../store/store-file.ts";
import type { GitHubMemory, ListMark, RateLimitState } from "./github-types.ts";
import { pullListKey } from "./_github-lists.ts";

/**
 * Forgets the mark of a repository's pull request list, so the next refresh reads it whole
 * back to its tracked sessions' start, not just what changed since: for a branch that became
 * tracked after the last read (a worker recorded late, after a crash), whose pull request
 * that read passed over and a 304 would never show again.
 */
export function forgetPullList(store: Store, apiBase: string, repo: string): void {
  try {
    store.statement("DELETE FROM etags WHERE url = ?").run(pullListKey(apiBase, repo));
  } catch (error) {
    throw storeError(store.path, error);
  }
}

/** The boundary's memory in the store, or in this process when there is no store. */
export function gitHubMemory(store: Store | null, apiBase: string): GitHubMemory {
  return store ? storeMemory(store, apiBase) : processMemory();
}

/**
 * The rate-limit state last recorded for an API (for `robot-army status`), or null when
 * robot-army has not talked to it yet.
 */
export function readRateLimitState(store: Store, apiBase: string): RateLimitState | null {
  const row = store.statement(
    "SELECT rate_limit, remaining, reset, deferred_until, deferred_for FROM github_rate_limit WHERE api_base = ?",
  ).get(apiBase) as { rate_limit: number; remaining: number; reset: string; deferred_until: string | null; deferred_for: RateLimitState["deferredFor"] } | undefined;
  return row ? { limit: row.rate_limit, remaining: row.remaining, reset: row.reset, deferredUntil: row.deferred_until, deferredFor: row.deferred_for } : null;
}

function storeMemory(store: Store, apiBase: string): GitHubMemory {
  const memory: GitHubMemory = {
    mark(url) {
      const row = store.statement("SELECT etag, body, fetched_at FROM etags WHERE url = ?").get(url) as { etag: string; body: string; fetched_at: string } | undefined;
      if (!row) return undefined;
      const body = JSON.parse(row.body) as { high_water?: string | null };
      return { etag: row.etag, highWater: body.high_water ?? null, readAt: row.fetched_at };
    },
    touchMark(url) {
      store.statement("UPDATE etags SET fetched_at = ? WHERE url = ?").run(isoSeconds(now()), url);
    },
    saveMark(url, mark) {
      store.statement(
        `INSERT INTO etags (url, etag, body, fetched_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, body = excluded.body, fetched_at = excluded.fetched_at`,
      ).run(url, mark.etag, JSON.stringify({ high_water: mark.highWater }), isoSeconds(now()));
    },
    login(key) {
      const row = store.statement("SELECT body FROM etags WHERE url = ?").get(key) as { body: string } | undefined;
      const login = row ? (JSON.parse(row.body) as { login?: unknown }).login : undefined;
      return typeof login === "string" ? login : undefined;
    },
    saveLogin(key, login) {
      store.statement(
        `INSERT INTO etags (url, etag, body, fetched_at) VALUES (?, '', ?, ?)
         ON CONFLICT (url) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at`,
      ).run(key, JSON.stringify({ login }), isoSeconds(now()));
    },
    rateLimit: () => readRateLimitState(store, apiBase),
    saveRateLimit(state) {
      store.statement(
        `INSERT INTO github_rate_limit (api_base, rate_limit, remaining, reset, deferred_until, deferred_for, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (api_base) DO UPDATE SET rate_limit = excluded.rate_limit, remaining = excluded.remaining,
           reset = excluded.reset, deferred_until = excluded.deferred_until, deferred_for = excluded.deferred_for, updated_at = excluded.updated_at`,
      ).run(apiBase, state.limit, state.remaining, state.reset, state.deferredUntil, state.deferredFor, isoSeconds(now()));
    },
  };
  return asTheStore(store, memory);
}

/** `memory` with each failure of the store's own thrown as the store's error. */
function asTheStore(store: Store, memory: GitHubMemory): GitHubMemory {
  const guarded = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A): R => {
    try {
      return fn(...args);
    } catch (error) {
      throw storeError(store.path, error);
    }
  };
  return {
    mark: guarded(memory.mark), saveMark: guarded(memory.saveMark), touchMark: guarded(memory.touchMark), rateLimit: guarded(memory.rateLimit), saveRateLimit: guarded(memory.saveRateLimit),
    login: guarded(memory.login), saveLogin: guarded(memory.saveLogin),
  };
}

function processMemory(): GitHubMemory {
  const marks = new Map<string, ListMark>();
  const logins = new Map<string, string>();
  let rate: RateLimitState | null = null;
  return {
    login: (key) => logins.get(key),
    saveLogin: (key, login) => void logins.set(key, login),
    mark: (url) => marks.get(url),
    saveMark: (url, mark) => void marks.set(url, { ...mark, readAt: isoSeconds(now()) }),
    touchMark(url) {
      const mark = marks.get(url);
      if (mark) marks.set(url, { ...mark, readAt: isoSeconds(now()) });
    },
    rateLimit: () => rate,
    saveRateLimit: (state) => void (rate = state),
  };
}
