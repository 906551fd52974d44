import { test } from "uvu";
import * as assert from "uvu/assert";
import { Faults, RateLimits, RequestCounter, faultAnswer, rateHeaders } from "./traffic.ts";

test("a rate window starts at the first request, counts per user, and starts over at its reset", () => {
  let now = new Date("2026-01-15T10:00:00Z");
  const limits = new RateLimits(2, () => now);
  const start = Math.floor(now.getTime() / 1000);
  assert.equal(limits.spend("owner"), { limit: 2, remaining: 1, used: 1, reset: start + 3600 });
  assert.equal(limits.spend("owner").remaining, 0);
  assert.equal(limits.peek("stranger").remaining, 2);
  now = new Date(now.getTime() + 3600_000);
  assert.equal(limits.peek("owner"), { limit: 2, remaining: 2, used: 0, reset: start + 7200 });
  assert.equal(rateHeaders(limits.peek("owner")), {
    "x-ratelimit-limit": "2",
    "x-ratelimit-remaining": "2",
    "x-ratelimit-used": "0",
    "x-ratelimit-reset": String(start + 7200),
    "x-ratelimit-resource": "core",
  });
});

test("setting the rate limit changes what is left for one user or for everyone seen", () => {
  const limits = new RateLimits(10, () => new Date("2026-01-15T10:00:00Z"));
  limits.spend("owner");
  limits.set({ remaining: 3, login: "owner", reset: 2_000_000_000 });
  assert.equal(limits.peek("owner"), { limit: 10, remaining: 3, used: 7, reset: 2_000_000_000 });
  limits.set({ limit: 4 });
  assert.is(limits.peek("stranger").limit, 4);
});

test("faults are used up in order, matched by method and exact path or a * prefix", () => {
  const faults = new Faults();
  faults.add({ method: "get", path: "/repos/o/r/issues", status: 502, times: 2 });
  faults.add({ path: "/repos/o/r/*", status: 500 });
  assert.is(faults.take("POST", "/repos/o/r/issues")?.status, 500, "the first fault wants GET; the prefix one matches any method");
  assert.is(faults.take("GET", "/repos/o/r/issues")?.status, 502);
  assert.is(faults.take("GET", "/repos/o/r/issues/1"), undefined, "the prefix fault was used up; the exact one does not match");
  assert.is(faults.take("GET", "/repos/o/r/issues")?.status, 502);
  assert.is(faults.take("GET", "/repos/o/r/issues"), undefined);
});

test("a fault's answer: the status with its reason, or a secondary rate limit with retry-after", () => {
  assert.equal(faultAnswer({ path: "/", status: 502 }, "id"), { status: 502, headers: {}, body: { message: "Bad Gateway", status: "502" } });
  const secondary = faultAnswer({ path: "/", kind: "secondary-rate-limit" }, "F0RGE:1")!;
  assert.is(secondary.status, 403);
  assert.equal(secondary.headers, { "retry-after": "60" });
  assert.match(String(secondary.body.message), "You have exceeded a secondary rate limit");
  assert.is(faultAnswer({ path: "/", delay_ms: 5 }, "id"), undefined, "a delay alone answers normally");
});

test("a malformed fault is refused with what was wrong", () => {
  for (const [spec, words] of [
    [[], "JSON object"],
    [{ status: 502 }, '"path"'],
    [{ path: "/x" }, '"status", "kind" or "delay_ms"'],
    [{ path: "/x", status: 200 }, "400 to 599"],
    [{ path: "/x", status: 502, times: -1 }, '"times"'],
    [{ path: "/x", kind: "other" }, '"kind"'],
  ] as const) {
    assert.throws(() => Faults.validate(spec), (error: Error) => error instanceof TypeError && error.message.includes(words), JSON.stringify(spec));
  }
});

test("the counter counts by route, status and user agent, 304s apart, and starts over on reset", () => {
  const counter = new RequestCounter(() => new Date("2026-01-15T10:00:00Z"));
  counter.count("GET /x", 200, { agent: "robot-army (host alpha)" });
  counter.count("GET /x", 304, { agent: "robot-army (host alpha)" });
  counter.count("GET /y", 502, { faulted: true, agent: "robot-army (host beta)" });
  const stats = counter.snapshot();
  assert.equal(stats, {
    started_at: "2026-01-15T10:00:00.000Z",
    total: 3,
    not_modified: 1,
    rate_limited: 0,
    faulted: 1,
    by_route: { "GET /x": { requests: 2, not_modified: 1 }, "GET /y": { requests: 1, not_modified: 0 } },
    by_status: { "200": 1, "304": 1, "502": 1 },
    by_agent: { "robot-army (host alpha)": { requests: 2, by_route: { "GET /x": 2 } }, "robot-army (host beta)": { requests: 1, by_route: { "GET /y": 1 } } },
  });
  counter.reset();
  assert.is(counter.snapshot().total, 0);
});

test.run();
