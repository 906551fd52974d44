import { test } from "uvu";
import * as assert from "uvu/assert";
import { failure, forgeTemplate } from "../testing/forge.ts";
import { forgeConfig, quickOptions } from "../testing/github-kit.ts";
import { connectGitHub, defaultWriteSpacing } from "./github.ts";

// The secondary rate limit on content creation, on the forge and in robot-army's writer.
const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };

/** A clock the forge and the writer share, moved only by the writer's waits. */
function sharedClock() {
  let at = Date.parse("2026-02-01T12:00:00Z");
  const waits: number[] = [];
  return {
    now: () => new Date(at),
    waits,
    sleep: async (ms: number) => {
      waits.push(ms);
      at += ms;
    },
    advance: (ms: number) => void (at += ms),
  };
}

test("the forge refuses the 81st content-creating request within a minute with 403, retry-after and GitHub's message, whatever is left of the primary limit", () => {
  const clock = sharedClock();
  return template.use(async ({ owner }) => {
    for (let n = 1; n <= 80; n++) await owner.rest.issues.createComment({ ...repo, issue_number: 1, body: `comment ${n}` });
    const refused = await failure(owner.rest.issues.createComment({ ...repo, issue_number: 1, body: "comment 81" }));
    assert.is(refused.status, 403);
    assert.is(refused.headers["retry-after"], "60");
    assert.match(refused.data.message, /^You have exceeded a secondary rate limit\./);
    assert.ok(Number(refused.headers["x-ratelimit-remaining"]) > 4000, "the primary limit is far from used up");
    assert.is((await owner.rest.issues.get({ ...repo, issue_number: 1 })).status, 200, "reads are not content creation");
    clock.advance(30_000);
    assert.is((await failure(owner.rest.issues.addLabels({ ...repo, issue_number: 1, labels: ["x"] }))).headers["retry-after"], "30", "the oldest leaves the window in 30 s");
    clock.advance(30_000);
    assert.is((await owner.rest.issues.createComment({ ...repo, issue_number: 1, body: "comment 81" })).status, 201, "a minute on, it is taken");
    assert.is((await owner.rest.issues.listComments({ ...repo, issue_number: 1, per_page: 100 })).data.length, 81);
  }, { now: clock.now });
});

test("robot-army's writer spaces content-creating requests a second apart and waits out a retry-after, then succeeds", () => {
  const clock = sharedClock();
  return template.use(async (t) => {
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions([], { writeSpacingMs: 1000, now: clock.now, sleep: clock.sleep }));
    await github.getIssue("demo/widgets", 1);
    await github.getIssue("demo/widgets", 2);
    assert.equal(clock.waits, [], "reads are not spaced");
    const made = [];
    for (let n = 1; n <= 3; n++) made.push(await github.writer.comment("demo/widgets", 1, `comment ${n}`));
    assert.equal(clock.waits, [1000, 1000, 58_000], "a second between writes; the third over the forge's 2 a minute waited the 58 s retry-after said");
    assert.ok(made.every((m) => m.id !== null));
    assert.equal((await t.owner.rest.issues.listComments({ ...repo, issue_number: 1 })).data.map((c) => c.body), ["comment 1", "comment 2", "comment 3"], "each once");
  }, { now: clock.now, contentLimit: { perMinute: 2 } });
});

test("writes sent at once still go one at a time, a second apart", () => {
  const clock = sharedClock();
  return template.use(async (t) => {
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions([], { writeSpacingMs: 1000, now: clock.now, sleep: clock.sleep }));
    await Promise.all([1, 2, 3, 4].map((n) => github.writer.addLabels("demo/widgets", n, ["seen"])));
    assert.equal(clock.waits, [1000, 1000, 1000]);
  }, { now: clock.now });
});

test("the writer spaces its writes against GitHub and GitHub Enterprise, not against the forge on loopback", () => {
  assert.is(defaultWriteSpacing("https://api.github.com"), 1000);
  assert.is(defaultWriteSpacing("https://ghe.example.com/api/v3"), 1000);
  assert.is(defaultWriteSpacing("http://127.0.0.1:4567"), 0);
  assert.is(defaultWriteSpacing("http://localhost:4567"), 0);
  assert.is(defaultWriteSpacing("http://[::1]:4567"), 0);
});

test.run();
