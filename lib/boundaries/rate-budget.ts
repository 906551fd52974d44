/**
 * What is left of GitHub's hourly rate limit, as the daemon's optional requests see it.
 * Every host of one owner spends the same user's limit (5,000 requests an hour on
 * github.com), and each learns what is left from the `x-ratelimit-*` headers of its own
 * answers, so the hosts slow down together without asking one another.
 *
 * Two thresholds:
 * - **tight**: under a quarter of the limit left before its reset. Optional requests slow:
 *   pull requests are refreshed at most every five minutes per repository, and heartbeats
 *   stretch from a third of the lease to half of it (lib/daemon/host-heartbeats.ts).
 * - **the floor** (`rateLimitFloor`, at most a tenth of the limit): ordinary calls wait for
 *   the reset (lib/boundaries/_github-transport.ts); claims and heartbeats, sent with
 *   `request: { reserve: true }`, spend what is left, so a host short of requests still
 *   holds, takes and releases its claims.
 */
import type { RateLimitState } from "./github-types.ts";

/** Under this share of the limit left, optional requests slow down. */
export const TIGHT_SHARE = 0.25;

/** How often a repository's pull requests are refreshed while the limit is tight. */
export const TIGHT_PULL_REFRESH_MS = 5 * 60_000;

/** Whether the limit last seen is tight at `at`: under a quarter left, and its reset still ahead. */
export function rateLimitTight(state: RateLimitState | null, at: Date): boolean {
  return state !== null && state.limit > 0 && Date.parse(state.reset) > at.getTime() && state.remaining < state.limit * TIGHT_SHARE;
}

/**
 * Whether a call that may spend the reserve goes although calls are deferred: only when
 * the deferral is the floor's and requests are left, never when the limit is used up or
 * GitHub asked robot-army to slow down (a secondary limit).
 */
export function reserveLeft(held: RateLimitState): boolean {
  return held.deferredFor === "floor" && held.remaining > 0;
}
