import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { forgeTemplate } from "../testing/forge.ts";
import type { TestForge } from "../testing/forge.ts";
import { addPullRequest, addPullRequests, changePullRequest, forgeConfig, quickOptions, testStore } from "../testing/github-kit.ts";
import { GitHubError, RateLimitDeferred, connectGitHub, graphqlUrl, readRateLimitState, readToken } from "./github.ts";
import { StoreError } from "../store/store-file.ts";
import { wireEffects } from "../effects.ts";
import { pollRepository } from "../intake/poll.ts";
import { findRepo, loadForgeData, saveForgeData } from "../forge/state.ts";

const template = forgeTemplate();
test.after(() => template.remove());

const refused = async (call: Promise<unknown>, check: (error: unknown) => boolean) => {
  try {
    await call;
  } catch (error) {
    assert.ok(check(error), `unexpected error: ${(error as Error).stack}`);
    return error;
  }
  assert.unreachable("the call succeeded");
};

const stats = async (t: TestForge) => (await t.hook("GET", "/_forge/stats")).body as { total: number; not_modified: number; by_status: Record<string, number> };

test("a token file another user can read is refused, naming the file and its mode", () =>
  template.use(async (t) => {
    const file = join(t.tmp, "token");
    writeFileSync(file, "ghp_x\n", { mode: 0o644 });
    chmodSync(file, 0o644);
    const github = { ...(await forgeConfig(t)).github, token_file: file };
    assert.throws(() => readToken(github), (e: unknown) =>
      e instanceof PreconditionError && e.exitCode === 3 && e.message === `Token file "${file}" has mode 0644; it must be 0600 (chmod 600 "${file}")`);
    chmodSync(file, 0o600);
    assert.is(readToken(github), "ghp_x");
    chmodSync(file, 0o400);
    assert.is(readToken(github), "ghp_x", "read-only for its owner is tighter still, and fine");
  }));

test("a token file that is a directory is refused as one, not given chmod advice", () =>
  template.use(async (t) => {
    const dir = join(t.tmp, "tokens-dir");
    mkdirSync(dir, { mode: 0o755 });
    const github = { ...(await forgeConfig(t)).github, token_file: dir };
    assert.throws(() => readToken(github), (e: unknown) =>
      e instanceof PreconditionError && e.message === `Token file "${dir}" is a directory; github.token_file must name the file holding the token`);
    chmodSync(dir, 0o700);
    assert.throws(() => readToken(github), (e: unknown) => e instanceof PreconditionError && e.message.endsWith("is a directory; github.token_file must name the file holding the token"));
  }));

test("the token may come from the variable token_env names; both sources at once are refused", () =>
  template.use(async (t) => {
    const base = (await forgeConfig(t)).github;
    const fromEnv = { ...base, token_file: undefined, token_env: "RA_TEST_TOKEN" };
    assert.is(readToken(fromEnv, { RA_TEST_TOKEN: " ghp_env \n" }), "ghp_env");
    assert.throws(() => readToken(fromEnv, {}), /"RA_TEST_TOKEN", which is not set or empty/);
    assert.throws(() => readToken({ ...base, token_env: "RA_TEST_TOKEN" }, { RA_TEST_TOKEN: "x" }), /sets both github.token_file .* and github.token_env/);
    assert.is(readToken({ ...base, token_file: undefined }), null, "no source: anonymous");
    const github = await connectGitHub({ ...(await forgeConfig(t)), github: fromEnv }, null, quickOptions([], { env: { RA_TEST_TOKEN: t.token("owner") } }));
    assert.is(await github.whoami(), "owner");
    const anonymous = await connectGitHub({ ...(await forgeConfig(t)), github: { ...base, token_file: undefined } }, null, quickOptions());
    assert.is(await anonymous.whoami(), null);
    assert.is(anonymous.authenticated, false);
  }));

test("an unchanged repository costs one request, answered 304; an edited issue is read again", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const github = await connectGitHub(await forgeConfig(t), store, quickOptions());
      const first = await github.issueChanges("demo/widgets");
      assert.equal([first.changed, first.requests, first.notModified], [true, 1, 0]);
      assert.equal(first.issues.map((i) => i.number).sort(), [1, 2, 3, 4, 5]);
      assert.equal(first.issues.find((i) => i.number === 1)!.labels, ["robot-army"]);
      assert.is(first.issues.find((i) => i.number === 4)!.author, "stranger");
      first.commit();
      await t.hook("POST", "/_forge/reset-stats");
      const second = await github.issueChanges("demo/widgets");
      assert.equal([second.changed, second.issues.length, second.requests, second.notModified], [false, 0, 1, 1]);
      assert.equal([(await stats(t)).total, (await stats(t)).not_modified], [1, 1], "the forge saw one request and answered 304");
      await t.owner.rest.issues.update({ owner: "demo", repo: "widgets", issue_number: 2, title: "Fix the off-by-one, really" });
      const third = await github.issueChanges("demo/widgets");
      assert.equal([third.changed, third.requests, third.notModified], [true, 1, 0]);
      assert.is(third.issues.find((i) => i.number === 2)!.title, "Fix the off-by-one, really");
    } finally {
      store.close();
    }
  }));

test("the ETag is remembered only once the poll is committed: a crash before it re-reads", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const github = await connectGitHub(await forgeConfig(t), store, quickOptions());
      await github.issueChanges("demo/widgets");
      const again = await github.issueChanges("demo/widgets");
      assert.is(again.changed, true, "no commit, so no If-None-Match");
      again.commit();
      const restarted = await connectGitHub(await forgeConfig(t), store, quickOptions());
      assert.is((await restarted.issueChanges("demo/widgets")).changed, false, "the ETag survives in the store");
    } finally {
      store.close();
    }
  }));

test("pull requests are left out of issue changes", () =>
  template.use(async (t) => {
    const pull = addPullRequest(t);
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions());
    const changes = await github.issueChanges("demo/widgets");
    assert.ok(!changes.issues.some((i) => i.number === pull));
    assert.is(changes.issues.length, 5);
  }));

test("pull requests: one request, then one 304 while nothing changed; a merge is read again, with its head branch, head sha and merged_at", () =>
  template.use(async (t) => {
    const [number] = addPullRequests(t, [{ head: "robot-army/issue-1-fix-it", updated_at: "2026-01-16T10:00:00Z" }]);
    const store = await testStore(t);
    try {
      const github = await connectGitHub(await forgeConfig(t), store, quickOptions());
      const first = await github.pullChanges("demo/widgets");
      assert.equal([first.changed, first.requests, first.notModified], [true, 1, 0]);
      assert.equal(first.pulls.find((p) => p.number === number), {
        number, head_branch: "robot-army/issue-1-fix-it", head_sha: number.toString(16).padStart(40, "a"), state: "open", merged_at: null,
        updated_at: "2026-01-16T10:00:00Z", html_url: `${t.forge.url}/demo/widgets/pull/${number}`,
      });
      assert.is((await github.pullChanges("demo/widgets")).changed, true, "not committed, so asked again without If-None-Match");
      first.commit();
      await t.hook("POST", "/_forge/reset-stats");
      const second = await github.pullChanges("demo/widgets");
      assert.equal([second.changed, second.pulls.length, second.requests, second.notModified], [false, 0, 1, 1]);
      assert.equal([(await stats(t)).total, (await stats(t)).not_modified], [1, 1], "the forge saw one request and answered 304");
      changePullRequest(t, number, { merged: true }, "2026-01-17T10:00:00Z");
      const third = await github.pullChanges("demo/widgets");
      assert.equal([third.changed, third.requests, third.notModified], [true, 1, 0]);
      const merged = third.pulls.find((p) => p.number === number)!;
      assert.equal([merged.state, merged.merged_at], ["closed", "2026-01-17T10:00:00Z"]);
    } finally {
      store.close();
    }
  }));

test("pull requests: later pages are read only back to the last refresh's newest update, and on a first refresh back to since", () =>
  template.use(async (t) => {
    const at = (minute: number) => new Date(Date.parse("2026-02-01T00:00:00Z") + minute * 60_000).toISOString().replace(".000Z", "Z");
    const numbers = addPullRequests(t, Array.from({ length: 250 }, (_, i) => ({ head: `robot-army/issue-${i}-x`, updated_at: at(i) })));
    const store = await testStore(t);
    try {
      const github = await connectGitHub(await forgeConfig(t), store, quickOptions());
      const first = await github.pullChanges("demo/widgets", { since: at(100) });
      assert.is(first.requests, 2, "page 1 holds minutes 249..150, page 2 reaches back past minute 100; page 3 is not read");
      assert.is(first.pulls.length, 200);
      first.commit();
      changePullRequest(t, numbers[10], { merged: true }, at(300));
      const second = await github.pullChanges("demo/widgets", { since: at(0) });
      assert.is(second.requests, 1, "page 1 reaches back past the last refresh's newest (minute 249): no other page is read");
      assert.equal(second.pulls[0].number, numbers[10]);
      assert.is(second.pulls[0].merged_at, at(300));
      const everything = await (await connectGitHub(await forgeConfig(t), null, quickOptions())).pullChanges("demo/widgets");
      assert.is(everything.requests, 3, "with no mark and no since, every page is read");
      assert.is(everything.pulls.length, 250);
    } finally {
      store.close();
    }
  }));

test("a store that cannot be written fails as the store, after one request: GitHub is neither asked again nor blamed", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const github = await connectGitHub(await forgeConfig(t), store, quickOptions());
      // SQLite's own read-only mode: every write is refused with SQLITE_READONLY, as from a read-only file.
      store.db.exec("PRAGMA query_only = ON");
      await t.hook("POST", "/_forge/reset-stats");
      const read = await refused(github.issueChanges("demo/widgets"), (e) => e instanceof StoreError);
      assert.is((read as Error).message, `Store "${store.path}" is read-only (attempt to write a readonly database): robot-army writes to it; give its owner write access to it and its folder, or run as the user who owns it`);
      assert.is((await stats(t)).total, 1, "one request, not one per attempt");
      await t.hook("POST", "/_forge/reset-stats");
      const wrote = await refused(github.writer.comment("demo/widgets", 1, "queued"), (e) => e instanceof StoreError);
      assert.not.instance(wrote, GitHubError);
      assert.is((await stats(t)).total, 1, "the POST went once");
      const comments = await t.owner.rest.issues.listComments({ owner: "demo", repo: "widgets", issue_number: 1 });
      assert.equal(comments.data.map((c) => c.body), ["queued"], "the comment GitHub took is there, once");
    } finally {
      store.close();
    }
  }));

test("a poll that meets a store it cannot write ends as the store's error, after one request, never as the repository's or GitHub's", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const config = await forgeConfig(t);
      const github = await connectGitHub(config, store, quickOptions());
      store.db.exec("PRAGMA query_only = ON");
      await t.hook("POST", "/_forge/reset-stats");
      const deps = { store, reader: github, effects: wireEffects("plan", { github: github.writer }), rules: { author: "owner", label: "robot-army" }, host: "testhost", paths: {} };
      const error = await refused(pollRepository(deps, "demo/widgets"), (e) => e instanceof StoreError);
      assert.match((error as Error).message, `Store "${store.path}" is read-only`);
      assert.is((await stats(t)).total, 1, "GitHub was asked once");
    } finally {
      store.close();
    }
  }));

test("a 502 is retried after a backoff, then the answer is used", () =>
  template.use(async (t) => {
    await t.hook("POST", "/_forge/faults", { method: "GET", path: "/repos/demo/widgets/issues", status: 502, times: 2 });
    const waits: number[] = [];
    const retries: string[] = [];
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions(waits, { onRetry: (r) => retries.push(r.reason) }));
    const changes = await github.issueChanges("demo/widgets");
    assert.is(changes.issues.length, 5);
    assert.is(changes.requests, 3);
    assert.equal(waits, [10, 20], "exponential backoff");
    assert.equal(retries, ["502 Bad Gateway", "502 Bad Gateway"]);
    assert.is((await stats(t)).by_status["502"], 2);
  }));

test("a 5xx that does not stop gives up after the last attempt, with the status", () =>
  template.use(async (t) => {
    await t.hook("POST", "/_forge/faults", { path: "/repos/demo/widgets", status: 503, times: 10 });
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions([], { maxAttempts: 3 }));
    const error = await refused(github.getRepository("demo/widgets"), (e) => e instanceof GitHubError && e.status === 503);
    assert.match((error as Error).message, "GitHub answered 503 to GET /repos/demo/widgets: gave up after 3 attempts");
  }));

test("a 404 is not retried", () =>
  template.use(async (t) => {
    const waits: number[] = [];
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions(waits));
    const error = await refused(github.getRepository("demo/nothing"), (e) => e instanceof GitHubError && e.status === 404);
    assert.is((error as Error).message, "GitHub answered 404 to GET /repos/demo/nothing: Not Found");
    assert.equal(waits, []);
    assert.is((await stats(t)).total, 1);
  }));

test("a secondary rate limit is waited out as retry-after says; one asking too long defers", () =>
  template.use(async (t) => {
    await t.hook("POST", "/_forge/faults", { path: "/repos/demo/widgets", kind: "secondary-rate-limit", retry_after: 3 });
    const waits: number[] = [];
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions(waits));
    assert.is((await github.getRepository("demo/widgets")).default_branch, "main");
    assert.equal(waits, [3000]);
    await t.hook("POST", "/_forge/faults", { path: "/repos/demo/widgets", kind: "secondary-rate-limit", retry_after: 3600 });
    await refused(github.getRepository("demo/widgets"), (e) => e instanceof RateLimitDeferred);
    assert.equal(waits, [3000]);
    // GitHub asked robot-army to slow down: claims wait too, though requests are left.
    await refused(github.readRef("demo/widgets", "refs/robot-army/claims/1"), (e) => e instanceof RateLimitDeferred);
  }));

test("writes are retried after a secondary rate limit, never after a 5xx that may have done them", () =>
  template.use(async (t) => {
    const comments = "/repos/demo/widgets/issues/1/comments";
    await t.hook("POST", "/_forge/faults", { method: "POST", path: comments, kind: "secondary-rate-limit", retry_after: 1 });
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions());
    const made = await github.writer.comment("demo/widgets", 1, "robot-army queued this issue as work item 1 on host.");
    assert.ok(made.id && made.url?.endsWith(`/demo/widgets/issues/1#issuecomment-${made.id}`));
    await t.hook("POST", "/_forge/faults", { method: "POST", path: comments, status: 502 });
    await refused(github.writer.comment("demo/widgets", 1, "again"), (e) => e instanceof GitHubError && e.status === 502);
    const listed = await t.owner.rest.issues.listComments({ owner: "demo", repo: "widgets", issue_number: 1 });
    assert.equal(listed.data.map((c) => c.body), ["robot-army queued this issue as work item 1 on host."]);
  }));

test("an issue's comments are read oldest first, with their ids, authors and URLs, across pages", () =>
  template.use(async (t) => {
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions());
    assert.equal(await github.listComments("demo/widgets", 1), []);
    const made = [];
    // 102 comments in well under a minute: the forge's secondary limit is raised for this test alone.
    for (let n = 1; n <= 102; n++) made.push(await github.writer.comment("demo/widgets", 1, `comment ${n}`));
    const listed = await github.listComments("demo/widgets", 1);
    assert.is(listed.length, 102, "a second page is read");
    assert.equal(listed.map((c) => [c.id, c.body, c.author, c.html_url]).slice(-2), made.slice(-2).map((m, i) => [m.id, `comment ${101 + i}`, "owner", m.url]));
    assert.equal(listed.map((c) => c.body).slice(0, 2), ["comment 1", "comment 2"]);
  }, { contentLimit: { perMinute: 200 } }));

test("when little of the rate limit is left, later calls are deferred until the reset, and status can read it", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const reset = Math.floor(Date.now() / 1000) + 600;
      await t.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 10, reset });
      const github = await connectGitHub(await forgeConfig(t), store, quickOptions());
      await github.getRepository("demo/widgets");
      const until = new Date(reset * 1000).toISOString().replace(/\.000Z$/, "Z");
      assert.equal(github.rateLimit(), { limit: 5000, remaining: 9, reset: until, deferredUntil: until, deferredFor: "floor" });
      await t.hook("POST", "/_forge/reset-stats");
      const error = await refused(github.issueChanges("demo/widgets"), (e) => e instanceof RateLimitDeferred);
      assert.is((error as RateLimitDeferred).until, until);
      assert.match((error as Error).message, `GitHub calls are deferred until ${until}: 9 of 5000 requests were left`);
      assert.is((await stats(t)).total, 0, "nothing was sent");
      assert.is(readRateLimitState(store, t.forge.url)!.deferredUntil, until, "kept in the store for status");
      const later = await connectGitHub(await forgeConfig(t), store, quickOptions());
      await refused(later.whoami(), (e) => e instanceof RateLimitDeferred);
      const afterReset = await connectGitHub(await forgeConfig(t), store, quickOptions([], { now: () => new Date((reset + 1) * 1000) }));
      assert.is(await afterReset.whoami(), "owner", "after the reset calls go again");
    } finally {
      store.close();
    }
  }));

test("a used-up rate limit defers instead of retrying", () =>
  template.use(async (t) => {
    await t.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 0 });
    const waits: number[] = [];
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions(waits));
    await refused(github.getRepository("demo/widgets"), (e) => e instanceof RateLimitDeferred && /the rate limit is used up/.test(e.message));
    assert.equal(waits, []);
    assert.is((await stats(t)).total, 1);
  }));

test("every call has a timeout; a read that times out is tried again", () =>
  template.use(async (t) => {
    // The timeout leaves the retry room to be answered on a loaded machine; the delay is well past it.
    await t.hook("POST", "/_forge/faults", { path: "/repos/demo/widgets", delay_ms: 2_000, times: 1 });
    const once = await connectGitHub(await forgeConfig(t), null, quickOptions([], { timeoutMs: 500, maxAttempts: 1 }));
    await refused(once.getRepository("demo/widgets"), (e) => e instanceof GitHubError && e.status === null && /timed out after 500 ms/.test(e.message));
    await t.hook("POST", "/_forge/faults", { path: "/repos/demo/widgets", delay_ms: 2_000, times: 1 });
    const twice = await connectGitHub(await forgeConfig(t), null, quickOptions([], { timeoutMs: 500, maxAttempts: 2 }));
    assert.is((await twice.getRepository("demo/widgets")).full_name, "demo/widgets");
  }));

test("a refused connection is retried, reads and writes alike (nothing was sent), then reported with its cause", () =>
  template.use(async (t) => {
    const waits: number[] = [];
    const config = await forgeConfig(t, { api_base: `http://127.0.0.1:${await closedPort()}` });
    const github = await connectGitHub(config, null, quickOptions(waits, { maxAttempts: 2 }));
    const error = await refused(github.getIssue("demo/widgets", 1), (e) => e instanceof GitHubError && e.status === null);
    assert.match((error as Error).message, /^GitHub did not answer to GET \/repos\/demo\/widgets\/issues\/1: gave up after 2 attempts; the last: .*(ECONNREFUSED|Connection refused)/);
    await refused(github.writer.comment("demo/widgets", 1, "x"), (e) => e instanceof GitHubError && /gave up after 2 attempts/.test(e.message));
    assert.equal(waits, [10, 10]);
  }));

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("every request names robot-army and this host in its user agent, so the requests of an owner's machines are told apart", () =>
  template.use(async (t) => {
    const config = await forgeConfig(t);
    const github = await connectGitHub({ ...config, daemon: { ...config.daemon, host: "alpha" } }, null, quickOptions());
    await github.getRepository("demo/widgets");
    const { by_agent } = (await t.hook("GET", "/_forge/stats")).body as { by_agent: Record<string, { requests: number }> };
    assert.equal(Object.entries(by_agent).filter(([agent]) => agent.startsWith("robot-army (host alpha) ")).map(([, n]) => n.requests), [1]);
  }));

test("repository metadata, an issue, and who the token is", () =>
  template.use(async (t) => {
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions());
    const repo = await github.getRepository("demo/widgets");
    assert.equal([repo.full_name, repo.default_branch, repo.private], ["demo/widgets", "main", false]);
    assert.is(repo.settings.default_branch, "main");
    const issue = await github.getIssue("demo/widgets", 4);
    assert.equal([issue.author, issue.state, issue.labels], ["stranger", "open", ["robot-army"]]);
    assert.is(await github.whoami(), "owner");
  }));

// Trust: who labelled an issue, who renamed it and who edited its body.

test("issueEvents reads who added and removed each label and who renamed the issue, oldest first, with one request", () =>
  template.use(async (t) => {
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions());
    const data = loadForgeData(t.dir);
    findRepo(data, "demo", "widgets")!.collaborators.push("stranger");
    saveForgeData(t.dir, data);
    await t.stranger.rest.issues.addLabels({ owner: "demo", repo: "widgets", issue_number: 5, labels: ["robot-army"] });
    const before = (await github.getIssue("demo/widgets", 5)).title;
    await t.stranger.rest.issues.update({ owner: "demo", repo: "widgets", issue_number: 5, title: "Renamed by stranger" });
    await t.hook("POST", "/_forge/reset-stats");
    const events = await github.issueEvents("demo/widgets", 5);
    assert.equal(events.map((e) => [e.event, e.event === "renamed" ? [e.from, e.to] : e.label, e.actor]), [
      ["labeled", "robot-army", "stranger"],
      ["renamed", [before, "Renamed by stranger"], "stranger"],
    ]);
    assert.match(events[0].at, /^\d{4}-/);
    assert.is((await stats(t)).total, 1);
    assert.equal((await github.issueEvents("demo/widgets", 1)).map((e) => e.actor), ["owner"]);
  }));

test("bodyAuthorship asks GitHub's GraphQL API who wrote and who edited a body, and the title and body now, in one request", () =>
  template.use(async (t) => {
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions());
    assert.equal(await github.bodyAuthorship("demo/widgets", 1), {
      author: "owner", title: "Add a --verbose flag to the widget builder", body: "Seeded work for robot-army: add a --verbose flag to the widget builder.", editors: [], lastEditedAt: null, complete: true,
    });
    const data = loadForgeData(t.dir);
    findRepo(data, "demo", "widgets")!.collaborators.push("stranger");
    saveForgeData(t.dir, data);
    await t.stranger.rest.issues.update({ owner: "demo", repo: "widgets", issue_number: 1, body: "Rewritten" });
    await t.hook("POST", "/_forge/reset-stats");
    const edited = await github.bodyAuthorship("demo/widgets", 1);
    assert.equal([edited.body, edited.editors, edited.complete], ["Rewritten", ["stranger", "owner"], true]);
    assert.ok(edited.lastEditedAt);
    assert.is((await stats(t)).total, 1);
    await refused(github.bodyAuthorship("demo/widgets", 99), (e) => e instanceof GitHubError && /Could not resolve to an Issue with the number of 99/.test(e.message));
  }));

test("GraphQL is at <api>/graphql, and at <host>/api/graphql for GitHub Enterprise", () => {
  assert.is(graphqlUrl("https://api.github.com"), "https://api.github.com/graphql");
  assert.is(graphqlUrl("https://ghe.example.com/api/v3"), "https://ghe.example.com/api/graphql");
  assert.is(graphqlUrl("http://127.0.0.1:4567"), "http://127.0.0.1:4567/graphql");
});

test.run();
