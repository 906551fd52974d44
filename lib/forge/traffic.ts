/**
 * What the forge measures and imposes on its traffic: request counts (for tests and
 * benchmarks), GitHub's primary rate limit per user with its `x-ratelimit-*` headers,
 * and faults a test asks for (the next N matching requests answered with a 5xx, a
 * secondary rate limit, or after a delay).
 */
import { STATUS_CODES } from "node:http";

/** How many requests the forge answered, in total, per `METHOD /route/{template}`, and how. */
export interface ForgeStats {
  started_at: string;
  total: number;
  /** Answered 304 Not Modified (these cost no rate limit). */
  not_modified: number;
  /** Refused because the user's rate limit was used up. */
  rate_limited: number;
  /** Answered by a fault a test asked for. */
  faulted: number;
  by_route: Record<string, { requests: number; not_modified: number }>;
  by_status: Record<string, number>;
  /** Requests per `User-Agent` header (robot-army's names its host), and per route within each. */
  by_agent: Record<string, { requests: number; by_route: Record<string, number> }>;
}

/** Counts requests; `/_forge/*` calls are not counted. */
export class RequestCounter {
  #stats: ForgeStats;
  #now: () => Date;

  constructor(now: () => Date) {
    this.#now = now;
    this.#stats = this.#fresh();
  }

  /** Counts one answered request. */
  count(route: string, status: number, how: { faulted?: boolean; rateLimited?: boolean; agent?: string } = {}): void {
    const stats = this.#stats;
    stats.total++;
    const agent = (stats.by_agent[how.agent ?? ""] ??= { requests: 0, by_route: {} });
    agent.requests++;
    agent.by_route[route] = (agent.by_route[route] ?? 0) + 1;
    const entry = (stats.by_route[route] ??= { requests: 0, not_modified: 0 });
    entry.requests++;
    if (status === 304) {
      stats.not_modified++;
      entry.not_modified++;
    }
    if (how.faulted) stats.faulted++;
    if (how.rateLimited) stats.rate_limited++;
    stats.by_status[String(status)] = (stats.by_status[String(status)] ?? 0) + 1;
  }

  /** A copy of the counts so far. */
  snapshot(): ForgeStats {
    return structuredClone(this.#stats);
  }

  /** Starts counting from zero. */
  reset(): void {
    this.#stats = this.#fresh();
  }

  #fresh(): ForgeStats {
    return { started_at: this.#now().toISOString(), total: 0, not_modified: 0, rate_limited: 0, faulted: 0, by_route: {}, by_status: {}, by_agent: {} };
  }
}

/** One user's rate limit as the headers state it. */
export interface RateState {
  limit: number;
  remaining: number;
  used: number;
  /** Epoch seconds when the window starts over. */
  reset: number;
}

/** What `POST /_forge/rate-limit` may set: the limit, and for one user (or all) what is left and when it resets. */
export interface RateSetting {
  limit?: number;
  remaining?: number;
  reset?: number;
  login?: string;
}

const WINDOW_SECONDS = 3600;

/** GitHub's primary rate limit: `limit` requests per user per hour. */
export class RateLimits {
  #limit: number;
  #now: () => Date;
  #buckets = new Map<string, { used: number; reset: number }>();

  constructor(limit: number, now: () => Date) {
    this.#limit = limit;
    this.#now = now;
  }

  /** Where a user stands, starting a new window when the last one has passed. */
  peek(login: string): RateState {
    const bucket = this.#bucket(login);
    return { limit: this.#limit, remaining: Math.max(0, this.#limit - bucket.used), used: bucket.used, reset: bucket.reset };
  }

  /** Counts one request against a user. */
  spend(login: string): RateState {
    this.#bucket(login).used++;
    return this.peek(login);
  }

  /** Changes the limit, or what is left of it, for one user or everyone. */
  set(setting: RateSetting): void {
    if (setting.limit !== undefined) this.#limit = setting.limit;
    const logins = setting.login !== undefined ? [setting.login] : [...this.#buckets.keys()];
    for (const login of logins) {
      const bucket = this.#bucket(login);
      if (setting.remaining !== undefined) bucket.used = Math.max(0, this.#limit - setting.remaining);
      if (setting.reset !== undefined) bucket.reset = setting.reset;
    }
  }

  #bucket(login: string): { used: number; reset: number } {
    const nowSeconds = Math.floor(this.#now().getTime() / 1000);
    let bucket = this.#buckets.get(login);
    if (!bucket || nowSeconds >= bucket.reset) {
      bucket = { used: 0, reset: nowSeconds + WINDOW_SECONDS };
      this.#buckets.set(login, bucket);
    }
    return bucket;
  }
}

/** The `x-ratelimit-*` headers for a rate state. */
export function rateHeaders(state: RateState): Record<string, string> {
  return {
    "x-ratelimit-limit": String(state.limit),
    "x-ratelimit-remaining": String(state.remaining),
    "x-ratelimit-used": String(state.used),
    "x-ratelimit-reset": String(state.reset),
    "x-ratelimit-resource": "core",
  };
}

/**
 * GitHub's secondary rate limit on content creation, which applies by itself whatever is
 * left of the primary limit: at most `perMinute` content-creating requests (80 on GitHub)
 * and `perHour` (500) per user; the next is refused until the oldest leaves its window.
 */
export class ContentLimits {
  #perMinute: number;
  #perHour: number;
  #now: () => Date;
  #sent = new Map<string, number[]>();

  constructor(limits: { perMinute?: number; perHour?: number }, now: () => Date) {
    this.#perMinute = limits.perMinute ?? 80;
    this.#perHour = limits.perHour ?? 500;
    this.#now = now;
  }

  /** Counts one content-creating request of a user; the seconds to wait when it is over a limit (and not counted). */
  take(login: string): number | undefined {
    const at = this.#now().getTime();
    const sent = (this.#sent.get(login) ?? []).filter((t) => at - t < 3600_000);
    this.#sent.set(login, sent);
    const lastMinute = sent.filter((t) => at - t < 60_000);
    const full = lastMinute.length >= this.#perMinute ? lastMinute[lastMinute.length - this.#perMinute] + 60_000 : sent.length >= this.#perHour ? sent[sent.length - this.#perHour] + 3600_000 : undefined;
    if (full !== undefined) return Math.max(1, Math.ceil((full - at) / 1000));
    sent.push(at);
    return undefined;
  }
}

/** GitHub's answer to a request over a secondary rate limit: 403 with `retry-after` and its message. */
export function secondaryLimitAnswer(requestId: string, retryAfter: number, status = 403, message?: string): FaultAnswer {
  return {
    status,
    headers: { "retry-after": String(retryAfter) },
    body: {
      message:
        message ??
        `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
      documentation_url: "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits",
      status: String(status),
    },
  };
}

/** A fault a test asks for: the next `times` requests matching `method` and `path` get it. */
export interface FaultSpec {
  /** Any method when absent. */
  method?: string;
  /** The request's path without its query; a trailing `*` matches any path starting with what comes before it. */
  path: string;
  /** The status to answer with (403 for a secondary rate limit); none with `delay_ms` alone answers normally, late. */
  status?: number;
  times?: number;
  /** `secondary-rate-limit`: GitHub's 403 with `retry-after` and its message. */
  kind?: "secondary-rate-limit";
  /** Seconds for the `retry-after` header (secondary rate limits; default 60). */
  retry_after?: number;
  message?: string;
  /** Wait this long before answering. */
  delay_ms?: number;
}

/** A fault's answer. */
export interface FaultAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/** The faults waiting to be served, used up in the order they were asked for. */
export class Faults {
  #pending: Array<FaultSpec & { left: number }> = [];

  /** Checks a fault request; the message says what was wrong. */
  static validate(value: unknown): FaultSpec {
    const spec = value as FaultSpec;
    if (typeof spec !== "object" || spec === null || Array.isArray(spec)) throw new TypeError("A fault is a JSON object");
    if (typeof spec.path !== "string" || !spec.path.startsWith("/")) throw new TypeError(`A fault needs "path", a path starting with "/"`);
    if (spec.method !== undefined && typeof spec.method !== "string") throw new TypeError(`A fault's "method" must be a string`);
    if (spec.kind !== undefined && spec.kind !== "secondary-rate-limit") throw new TypeError(`A fault's "kind" must be "secondary-rate-limit", got ${JSON.stringify(spec.kind)}`);
    if (spec.status !== undefined && (!Number.isInteger(spec.status) || spec.status < 400 || spec.status > 599)) {
      throw new TypeError(`A fault's "status" must be 400 to 599, got ${JSON.stringify(spec.status)}`);
    }
    if (spec.status === undefined && spec.kind === undefined && spec.delay_ms === undefined) throw new TypeError(`A fault needs "status", "kind" or "delay_ms"`);
    for (const key of ["times", "retry_after", "delay_ms"] as const) {
      if (spec[key] !== undefined && (!Number.isInteger(spec[key]) || spec[key]! < 0)) throw new TypeError(`A fault's "${key}" must be a whole number, got ${JSON.stringify(spec[key])}`);
    }
    return spec;
  }

  add(spec: FaultSpec): void {
    this.#pending.push({ ...spec, left: spec.times ?? 1 });
  }

  clear(): void {
    this.#pending = [];
  }

  /** The faults still waiting, with how many times each is left. */
  list(): Array<FaultSpec & { left: number }> {
    return this.#pending.map((fault) => ({ ...fault }));
  }

  /** Takes one use of the first fault matching the request, if any. */
  take(method: string, path: string): FaultSpec | undefined {
    const index = this.#pending.findIndex((fault) => matches(fault, method, path));
    if (index < 0) return undefined;
    const fault = this.#pending[index];
    if (--fault.left <= 0) this.#pending.splice(index, 1);
    return fault;
  }
}

/** The answer a fault gives, in GitHub's shape. */
export function faultAnswer(fault: FaultSpec, requestId: string): FaultAnswer | undefined {
  if (fault.kind === "secondary-rate-limit") return secondaryLimitAnswer(requestId, fault.retry_after ?? 60, fault.status ?? 403, fault.message);
  if (fault.status === undefined) return undefined;
  return { status: fault.status, headers: {}, body: { message: fault.message ?? STATUS_CODES[fault.status] ?? "Error", status: String(fault.status) } };
}

function matches(fault: FaultSpec, method: string, path: string): boolean {
  if (fault.method && fault.method.toUpperCase() !== method) return false;
  return fault.path.endsWith("*") ? path.startsWith(fault.path.slice(0, -1)) : path === fault.path;
}
