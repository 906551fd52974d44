/**
 * How every call to GitHub travels: a timeout on each attempt, retries with exponential
 * backoff where a retry is safe, the rate-limit headers read from every answer, and calls
 * held back (`RateLimitDeferred`) while too little of the limit is left. Installed as an
 * Octokit `request` hook, so every Octokit call goes through it. A call made with
 * `request: { reserve: true }` (claims and heartbeats) may spend the last requests that
 * hold the others back (lib/boundaries/rate-budget.ts).
 */
import { isoSeconds } from "../clock.ts";
import { EXIT, RobotArmyError } from "../errors.ts";
import type { GitHubMemory, RateLimitState } from "./github-types.ts";
import { reserveLeft } from "./rate-budget.ts";

/** A call GitHub refused or never answered; `status` is null for a timeout or a network error. */
export class GitHubError extends RobotArmyError {
  status: number | null;
  method: string;
  path: string;
  constructor(method: string, path: string, status: number | null, problem: string) {
    super(`GitHub ${status === null ? "did not answer" : `answered ${status}`} to ${method} ${path}: ${problem}`, EXIT.failed);
    this.name = "GitHubError";
    this.status = status;
    this.method = method;
    this.path = path;
  }
}

/** Calls are held back until `until` so as not to use up the rate limit; nothing was sent. */
export class RateLimitDeferred extends RobotArmyError {
  /** ISO time after which calls may go again. */
  until: string;
  state: RateLimitState;
  constructor(state: RateLimitState, why: string) {
    super(`GitHub calls are deferred until ${state.deferredUntil}: ${why}`, EXIT.precondition);
    this.name = "RateLimitDeferred";
    this.until = state.deferredUntil ?? state.reset;
    this.state = state;
  }
}

/** What a retry is about to do, for a caller that tells the owner. */
export interface RetryNotice {
  method: string;
  path: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  delayMs: number;
  reason: string;
}

/** How the transport behaves; every field has a default in `connectGitHub`. */
export interface TransportOptions {
  timeoutMs: number;
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** The first retry's delay; each later one doubles it, up to 30 s. */
  backoffMs: number;
  /** The longest `retry-after` waited for in place; a longer one defers instead. */
  maxRetryAfterMs: number;
  /**
   * Calls are deferred when fewer requests than this are left (at most a tenth of the
   * limit), except those that may spend this reserve (`request: { reserve: true }`).
   */
  rateLimitFloor: number;
  /**
   * The least time between the starts of two content-creating requests (POST, PATCH, PUT,
   * DELETE; a GraphQL query is a read), which are also sent one at a time, as GitHub's
   * guidance against its secondary rate limit asks; 0 sends them as they come.
   */
  writeSpacingMs: number;
  sleep: (ms: number) => Promise<void>;
  now: () => Date;
  onRetry?: (notice: RetryNotice) => void;
}

/** Attempts sent and answered 304 since the transport started (calls run one at a time). */
export interface TransportCounts {
  requests: number;
  notModified: number;
}

type Request = (options: Record<string, unknown>) => Promise<Response>;
/** Octokit's `request.endpoint.parse`: the method and full URL of a call's options. */
type ParseEndpoint = (options: Record<string, unknown>) => { method: string; url: string };
type Response = { status: number; url: string; headers: Record<string, string | undefined>; data: unknown };
type Failure = Error & { status?: number; response?: Response; cause?: unknown };

/** The transport's hook and counts. */
export function makeTransport(memory: GitHubMemory, parse: ParseEndpoint, options: TransportOptions): {
  hook: (request: Request, callOptions: Record<string, unknown>) => Promise<Response>;
  counts: TransportCounts;
} {
  const counts: TransportCounts = { requests: 0, notModified: 0 };

  /** The rate-limit state an answer's headers give, or null when they give none. */
  const observe = (headers: Record<string, string | undefined> | undefined): RateLimitState | null => {
    const limit = Number(headers?.["x-ratelimit-limit"]);
    const remaining = Number(headers?.["x-ratelimit-remaining"]);
    const reset = Number(headers?.["x-ratelimit-reset"]);
    if (![limit, remaining, reset].every(Number.isFinite) || headers?.["x-ratelimit-limit"] === undefined) return null;
    const resetIso = isoSeconds(new Date(reset * 1000));
    const floor = Math.min(options.rateLimitFloor, Math.floor(limit / 10));
    const deferred = remaining < floor && reset * 1000 > options.now().getTime();
    return { limit, remaining, reset: resetIso, deferredUntil: deferred ? resetIso : null, deferredFor: deferred ? (remaining === 0 ? "used up" : "floor") : null };
  };

  /** Observes an answer's rate limit and saves it: after the request, never inside its retry. */
  const remember = (headers: Record<string, string | undefined> | undefined): RateLimitState | null => {
    const state = observe(headers);
    if (state) memory.saveRateLimit(state);
    return state;
  };

  const defer = (until: Date, why: string, deferredFor: "used up" | "slow down"): never => {
    const last = memory.rateLimit();
    const state: RateLimitState = { limit: last?.limit ?? 0, remaining: last?.remaining ?? 0, reset: last?.reset ?? isoSeconds(until), deferredUntil: isoSeconds(until), deferredFor };
    memory.saveRateLimit(state);
    throw new RateLimitDeferred(state, why);
  };

  let lastWrite = -Infinity;
  let writes: Promise<unknown> = Promise.resolve();

  /** Sends a call; content-creating calls one at a time, each at least `writeSpacingMs` after the one before. */
  function hook(request: Request, callOptions: Record<string, unknown>): Promise<Response> {
    const { method, url } = parse(callOptions);
    const creates = method !== "GET" && method !== "HEAD" && !pathOf(url).endsWith("/graphql");
    if (!creates || options.writeSpacingMs <= 0) return send(request, callOptions);
    const turn = writes.then(async () => {
      // Never more than the spacing: a clock stepped back must not hold the writes.
      const wait = Math.min(lastWrite + options.writeSpacingMs - options.now().getTime(), options.writeSpacingMs);
      if (wait > 0) await options.sleep(wait);
      lastWrite = options.now().getTime();
      return await send(request, callOptions);
    });
    writes = turn.catch(() => undefined);
    return turn;
  }

  async function send(request: Request, callOptions: Record<string, unknown>): Promise<Response> {
    const { method, url } = parse(callOptions);
    const path = pathOf(url);
    const held = memory.rateLimit();
    const reserve = (callOptions.request as { reserve?: boolean } | undefined)?.reserve === true;
    if (held?.deferredUntil && Date.parse(held.deferredUntil) > options.now().getTime() && !(reserve && reserveLeft(held))) {
      throw new RateLimitDeferred(held, `${held.remaining} of ${held.limit} requests were left`);
    }
    const idempotent = method === "GET" || method === "HEAD";
    for (let attempt = 1; ; attempt++) {
      const signal = AbortSignal.timeout(options.timeoutMs);
      counts.requests++;
      let retry: { reason: string; delayMs?: number; status?: number };
      let answer: Response | undefined;
      let failure: Failure | undefined;
      // Only the request is tried: what is remembered of its answer is written after, so a
      // store that cannot be written is the store's error, never a failed request to send again.
      try {
        // Octokit binds the call's options into the hooks it wraps: a new signal goes in by changing them.
        callOptions.request = { ...(callOptions.request as object), signal };
        answer = await request(callOptions);
      } catch (error) {
        failure = error as Failure;
      }
      if (!failure) {
        remember(answer!.headers);
        return answer!;
      }
      const response = failure.response;
      const state = remember(response?.headers);
      if (response && failure.status === 304) {
        counts.notModified++;
        return { ...response, status: 304, data: undefined };
      }
      if (signal.aborted) {
        if (!idempotent) throw new GitHubError(method, path, null, `timed out after ${options.timeoutMs} ms`);
        retry = { reason: `timed out after ${options.timeoutMs} ms` };
      } else if (!response) {
        const problem = networkProblem(failure);
        if (!idempotent && !/ECONNREFUSED|connection refused/i.test(problem)) throw new GitHubError(method, path, null, problem);
        retry = { reason: problem };
      } else {
        const status = response.status;
        const message = messageOf(response.data, failure.message);
        if ((status === 403 || status === 429) && state?.remaining === 0) {
          defer(new Date(Date.parse(state.reset)), `the rate limit is used up (${state.limit} an hour)`, "used up");
        }
        const retryAfter = Number(response.headers["retry-after"]);
        const secondary = (status === 403 || status === 429) && (Number.isFinite(retryAfter) || /secondary rate limit/i.test(message));
        if (secondary) {
          // GitHub asks for at least a minute when it does not say how long.
          const delayMs = Number.isFinite(retryAfter) ? retryAfter * 1000 : Math.max(60_000, backoff(attempt));
          if (delayMs > options.maxRetryAfterMs) defer(new Date(options.now().getTime() + delayMs), `GitHub asked robot-army to slow down (secondary rate limit)`, "slow down");
          retry = { reason: `secondary rate limit, retry after ${Math.round(delayMs / 1000)}s`, delayMs, status };
        } else if (status >= 500 && idempotent) {
          retry = { reason: `${status} ${message}`, status };
        } else {
          throw new GitHubError(method, path, status, message);
        }
      }
      if (attempt >= options.maxAttempts) {
        const problem = attempt > 1 ? `gave up after ${attempt} attempts; the last: ${retry.reason}` : retry.reason;
        throw new GitHubError(method, path, retry.status ?? null, problem);
      }
      const delayMs = retry.delayMs ?? backoff(attempt);
      options.onRetry?.({ method, path, attempt, delayMs, reason: retry.reason });
      await options.sleep(delayMs);
    }
  }

  const backoff = (attempt: number) => Math.min(30_000, options.backoffMs * 2 ** (attempt - 1));
  return { hook, counts };
}

function pathOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname;
  } catch {
    return url.split("?")[0];
  }
}

function messageOf(data: unknown, fallback: string): string {
  const message = typeof data === "object" && data !== null ? (data as { message?: unknown }).message : undefined;
  return typeof message === "string" && message ? message : fallback;
}

/** The innermost cause of a failed fetch: `ECONNREFUSED 127.0.0.1:9`, not "fetch failed". */
function networkProblem(error: unknown): string {
  let current: unknown = error;
  let text = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    text = code && !current.message.includes(code) ? `${code}: ${current.message}` : current.message;
    current = current.cause;
  }
  return text;
}
