import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { withTempDir } from "../testing/fixtures.ts";
import { failure, forgeTemplate } from "../testing/forge.ts";
import { startForge } from "./server.ts";
import { findRepo, loadForgeData, saveForgeData } from "./state.ts";

const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };

test("GET /user names the token's user; /rate_limit states the core limit without spending it", () =>
  template.use(async ({ owner, stranger }) => {
    assert.is((await owner.rest.users.getAuthenticated()).data.login, "owner");
    assert.is((await stranger.rest.users.getAuthenticated()).data.login, "stranger");
    const first = (await owner.rest.rateLimit.get()).data;
    const second = (await owner.rest.rateLimit.get()).data;
    assert.is(first.resources.core.limit, 5000);
    assert.is(first.resources.core.used, 1, "only GET /user was counted");
    assert.is(second.resources.core.used, 1, "asking for the rate limit costs nothing");
    assert.equal(first.rate, first.resources.core);
  }));

test("GET /repos/{owner}/{repo} answers the metadata with a clone URL that is the bare repository", () =>
  template.use(async ({ owner, dir }) => {
    const { data } = await owner.rest.repos.get(repo);
    assert.is(data.full_name, "demo/widgets");
    assert.is(data.name, "widgets");
    assert.is(data.owner.login, "demo");
    assert.is(data.default_branch, "main");
    assert.is(data.private, false);
    assert.is(data.clone_url, join(dir, "git/demo/widgets.git"));
    assert.match(data.html_url, /\/demo\/widgets$/);
    assert.is(typeof data.id, "number");
  }));

test("a bad token and a bad scheme are 401 Bad credentials; no token where one is needed is 401 Requires authentication", () =>
  template.use(async ({ client, forge, token }) => {
    for (const [octokit, message] of [[client(), "Requires authentication"], [client("ghp_not-a-token"), "Bad credentials"]] as const) {
      const answer = await failure(octokit.rest.issues.listForRepo(repo).then(() => octokit.request("GET /user")));
      assert.is(answer.status, 401);
      assert.is(answer.data.message, message);
      assert.match(answer.data.documentation_url, /^https:\/\/docs\.github\.com\//);
      assert.ok(answer.headers["x-ratelimit-limit"], "rate-limit headers on every answer");
    }
    const basic = await fetch(`${forge.url}/user`, { headers: { authorization: `Basic ${token("owner")}` } });
    assert.is(basic.status, 401);
    const bearer = await fetch(`${forge.url}/user`, { headers: { authorization: `Bearer ${token("owner")}` } });
    assert.is(bearer.status, 200);
  }));

test("unknown routes, repositories and issues are 404 Not Found in GitHub's shape", () =>
  template.use(async ({ owner }) => {
    for (const call of [
      owner.rest.repos.get({ owner: "demo", repo: "nothing" }),
      owner.rest.issues.get({ ...repo, issue_number: 999 }),
      owner.request("GET /repos/{owner}/{repo}/no-such-thing", repo),
      owner.rest.pulls.get({ ...repo, pull_number: 1 }),
    ]) {
      const answer = await failure(call);
      assert.is(answer.status, 404);
      assert.is(answer.data.message, "Not Found");
    }
  }));

test("a malformed body is 422 Validation Failed naming the field; bad JSON is 400", () =>
  template.use(async ({ owner, forge, token }) => {
    const missing = await failure(owner.rest.issues.create({ ...repo, title: undefined as unknown as string }));
    assert.is(missing.status, 422);
    assert.equal(missing.data.message, "Validation Failed");
    assert.equal(missing.data.errors, [{ resource: "Issue", code: "missing_field", field: "title" }]);
    const wrongType = await failure(owner.request("POST /repos/{owner}/{repo}/issues", { ...repo, title: 5 }));
    assert.is(wrongType.status, 422);
    assert.match(wrongType.data.message, "Invalid request.");
    const res = await fetch(`${forge.url}/repos/demo/widgets/issues`, { method: "POST", headers: { authorization: `token ${token("owner")}` }, body: "{not json" });
    assert.is(res.status, 400);
    assert.is(((await res.json()) as { message: string }).message, "Problems parsing JSON");
  }));

test("an unchanged list answers 304 to If-None-Match, without body or rate cost; after an edit it is 200 again", () =>
  template.use(async ({ owner }) => {
    const first = await owner.rest.issues.listForRepo({ ...repo, labels: "robot-army" });
    const etag = first.headers.etag!;
    assert.match(etag, /^W\/"[0-9a-f]+"$/);
    const before = Number(first.headers["x-ratelimit-remaining"]);
    const again = await failure(owner.rest.issues.listForRepo({ ...repo, labels: "robot-army", headers: { "if-none-match": etag } }));
    assert.is(again.status, 304);
    assert.is(again.data, "", "a 304 has no body");
    assert.is(again.headers.etag, etag);
    assert.is(Number(again.headers["x-ratelimit-remaining"]), before, "a 304 costs no rate limit");
    await owner.rest.issues.update({ ...repo, issue_number: 1, title: "A changed title" });
    const changed = await owner.rest.issues.listForRepo({ ...repo, labels: "robot-army", headers: { "if-none-match": etag } });
    assert.is(changed.status, 200);
    assert.is.not(changed.headers.etag, etag);
    assert.ok(changed.data.some((issue) => issue.title === "A changed title"));
  }));

test("every GET answer has an ETag, and single resources answer 304 too", () =>
  template.use(async ({ owner }) => {
    for (const call of [() => owner.rest.repos.get(repo), () => owner.rest.issues.get({ ...repo, issue_number: 2 }), () => owner.rest.users.getAuthenticated()]) {
      const { headers } = await call();
      assert.ok(headers.etag);
    }
    const { headers } = await owner.rest.issues.get({ ...repo, issue_number: 2 });
    assert.is((await failure(owner.rest.issues.get({ ...repo, issue_number: 2, headers: { "if-none-match": headers.etag } }))).status, 304);
  }));

test("rate-limit headers count down per user; when none is left it is GitHub's 403 with remaining 0", () =>
  template.use(
    async ({ owner, stranger }) => {
      const seen = [];
      for (let i = 0; i < 3; i++) {
        const { headers } = await owner.rest.issues.get({ ...repo, issue_number: 1 });
        seen.push(Number(headers["x-ratelimit-remaining"]));
        assert.is(headers["x-ratelimit-limit"], "3");
        assert.is(headers["x-ratelimit-resource"], "core");
        assert.is(Number(headers["x-ratelimit-used"]), 3 - seen.at(-1)!);
        assert.ok(Number(headers["x-ratelimit-reset"]) > Date.now() / 1000);
      }
      assert.equal(seen, [2, 1, 0]);
      const refused = await failure(owner.rest.issues.get({ ...repo, issue_number: 1 }));
      assert.is(refused.status, 403);
      assert.match(refused.data.message, /^API rate limit exceeded for user ID \d+\./);
      assert.is(refused.headers["x-ratelimit-remaining"], "0");
      assert.is((await stranger.rest.issues.get({ ...repo, issue_number: 1 })).status, 200, "each user has a limit of their own");
    },
    { rateLimit: 3 },
  ));

test("POST /_forge/rate-limit sets what is left, for a test of deferring", () =>
  template.use(async ({ owner, hook }) => {
    await owner.rest.users.getAuthenticated();
    assert.is((await hook("POST", "/_forge/rate-limit", { remaining: 0, reset: 2000000000 })).status, 200);
    const refused = await failure(owner.rest.users.getAuthenticated());
    assert.is(refused.status, 403);
    assert.is(refused.headers["x-ratelimit-reset"], "2000000000");
  }));

test("a fault answers the next N matching requests with its status, then the forge recovers", () =>
  template.use(async ({ owner, hook }) => {
    const asked = await hook("POST", "/_forge/faults", { method: "GET", path: "/repos/demo/widgets/issues", status: 502, times: 2 });
    assert.is(asked.status, 201);
    assert.is((await failure(owner.rest.issues.listForRepo(repo))).status, 502);
    assert.is((await owner.rest.issues.get({ ...repo, issue_number: 1 })).status, 200, "other paths are not touched");
    assert.is((await failure(owner.rest.issues.listForRepo(repo))).status, 502);
    assert.is((await owner.rest.issues.listForRepo(repo)).status, 200);
    assert.equal((await hook("GET", "/_forge/faults")).body, []);
    const stats = (await hook("GET", "/_forge/stats")).body as { faulted: number; by_status: Record<string, number> };
    assert.is(stats.faulted, 2);
    assert.is(stats.by_status["502"], 2);
  }));

test("a secondary-rate-limit fault is a 403 with retry-after and GitHub's message", () =>
  template.use(async ({ owner, hook }) => {
    await hook("POST", "/_forge/faults", { path: "/repos/demo/widgets/*", kind: "secondary-rate-limit", retry_after: 7 });
    const answer = await failure(owner.rest.issues.create({ ...repo, title: "x" }));
    assert.is(answer.status, 403);
    assert.is(answer.headers["retry-after"], "7");
    assert.match(answer.data.message, "secondary rate limit");
    assert.is((await owner.rest.issues.create({ ...repo, title: "x" })).status, 201);
  }));

test("a malformed fault request is 400 and names what was wrong", () =>
  template.use(async ({ hook }) => {
    const answer = await hook("POST", "/_forge/faults", { status: 502 });
    assert.is(answer.status, 400);
    assert.match((answer.body as { message: string }).message, '"path"');
  }));

test("stats count requests by method and route template and the 304s; reset-stats starts over; stats.json follows", () =>
  template.use(async ({ owner, hook, forge, dir }) => {
    const { headers } = await owner.rest.issues.listForRepo(repo);
    await failure(owner.rest.issues.listForRepo({ ...repo, headers: { "if-none-match": headers.etag } }));
    await owner.rest.issues.get({ ...repo, issue_number: 3 });
    const stats = forge.stats();
    assert.is(stats.total, 3);
    assert.is(stats.not_modified, 1);
    assert.equal(stats.by_route["GET /repos/{owner}/{repo}/issues"], { requests: 2, not_modified: 1 });
    assert.equal(stats.by_route["GET /repos/{owner}/{repo}/issues/{number}"], { requests: 1, not_modified: 0 });
    assert.equal((await hook("GET", "/_forge/stats")).body, stats, "the hook itself is not counted");
    assert.equal(JSON.parse(readFileSync(join(dir, "stats.json"), "utf8")), stats);
    await hook("POST", "/_forge/reset-stats");
    assert.is(forge.stats().total, 0);
    assert.is(JSON.parse(readFileSync(join(dir, "stats.json"), "utf8")).total, 0);
  }));

test("a restarted forge has the same issues, comments and users", () =>
  template.use(async ({ owner, dir, token, forge }) => {
    const made = await owner.rest.issues.create({ ...repo, title: "Survives a restart", labels: ["robot-army"] });
    await owner.rest.issues.createComment({ ...repo, issue_number: made.data.number, body: "still here" });
    await forge.close();
    const again = await startForge({ dir });
    try {
      const octokit = new Octokit({ baseUrl: again.url, auth: token("owner") });
      const issue = await octokit.rest.issues.get({ ...repo, issue_number: made.data.number });
      assert.is(issue.data.title, "Survives a restart");
      assert.equal(issue.data.labels.map((l) => (typeof l === "string" ? l : l.name)), ["robot-army"]);
      const comments = await octokit.rest.issues.listComments({ ...repo, issue_number: made.data.number });
      assert.equal(comments.data.map((c) => c.body), ["still here"]);
      assert.is((await octokit.rest.issues.listForRepo({ ...repo, state: "all" })).data.length, 6);
    } finally {
      await again.close();
    }
  }));

test("the forge listens on loopback only", () =>
  withTempDir(async (dir) => {
    try {
      await startForge({ dir, host: "0.0.0.0" });
      assert.unreachable("a non-loopback address is refused");
    } catch (error) {
      assert.instance(error, RangeError);
      assert.match((error as Error).message, '"0.0.0.0"');
    }
  }));

test("close ends kept-alive connections, so it returns promptly, and can be called twice", () =>
  withTempDir(async (dir) => {
    const forge = await startForge({ dir });
    await fetch(`${forge.url}/_forge/stats`).then((res) => res.text());
    const started = Date.now();
    await Promise.all([forge.close(), forge.close()]);
    assert.ok(Date.now() - started < 2000, `close took ${Date.now() - started}ms`);
  }));

test("without a token a public repository is read under the anonymous limit (60 an hour per client address, resource core); a private one is Not Found; writes, /user and /user/... need a token, /users/<login> does not", () =>
  template.use(async ({ client, dir, owner }) => {
    const anonymous = client();
    const read = await anonymous.rest.issues.listForRepo({ owner: "demo", repo: "widgets" });
    assert.is(read.status, 200);
    assert.equal([read.headers["x-ratelimit-limit"], read.headers["x-ratelimit-remaining"], read.headers["x-ratelimit-resource"]], ["60", "59", "core"]);
    assert.is((await owner.rest.repos.get({ owner: "demo", repo: "widgets" })).headers["x-ratelimit-limit"], "5000", "the token's own limit is apart");
    assert.is((await failure(anonymous.rest.issues.createComment({ owner: "demo", repo: "widgets", issue_number: 1, body: "hi" }))).status, 401);
    assert.is((await failure(anonymous.request("GET /user"))).status, 401);
    assert.is((await failure(anonymous.request("GET /user/issues"))).status, 401);
    assert.is((await anonymous.rest.users.getByUsername({ username: "owner" })).data.login, "owner", "a user's public profile is read without a token");
    const data = loadForgeData(dir);
    findRepo(data, "demo", "widgets")!.private = true;
    saveForgeData(dir, data);
    assert.is((await failure(anonymous.rest.repos.get({ owner: "demo", repo: "widgets" }))).status, 404, "a private repository is Not Found without a token");
    assert.is((await owner.rest.repos.get({ owner: "demo", repo: "widgets" })).status, 200);
    for (let n = 0; n < 57; n++) assert.is((await failure(anonymous.rest.repos.get({ owner: "demo", repo: "widgets" }))).status, 404);
    const spent = await failure(anonymous.rest.repos.get({ owner: "demo", repo: "widgets" }));
    assert.equal([spent.status, spent.headers["x-ratelimit-remaining"]], [403, "0"]);
    assert.match(spent.data.message, /^API rate limit exceeded for /);
  }));

test.run();
