import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadGitHubDescription } from "./openapi.ts";
import type { Exchange } from "./openapi.ts";

// The judge must bite: each of these answers is wrong in one way GitHub's description or robot-army's needs name.
const judge = loadGitHubDescription();
const rate = { "x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999", "x-ratelimit-reset": "1767225600", "x-ratelimit-used": "1", "x-ratelimit-resource": "core" };
const json = { "content-type": "application/json; charset=utf-8" };
const base = "http://127.0.0.1:1";
const user = (login: string) => {
  const api = `${base}/users/${login}`;
  return {
    login, id: 1, node_id: "U_1", avatar_url: `${base}/a`, gravatar_id: "", url: api, html_url: `${base}/${login}`, followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`, gists_url: `${api}/gists{/gist_id}`, starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`, organizations_url: `${api}/orgs`, repos_url: `${api}/repos`, events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`, type: "User", site_admin: false,
  };
};
const comment = (change: Record<string, unknown> = {}) => ({
  url: `${base}/repos/demo/widgets/issues/comments/9`, html_url: `${base}/demo/widgets/issues/1#issuecomment-9`, issue_url: `${base}/repos/demo/widgets/issues/1`,
  id: 9, node_id: "IC_9", user: user("owner"), created_at: "2026-01-15T10:00:00Z", updated_at: "2026-01-15T10:00:00Z", author_association: "OWNER", body: "Hello",
  ...change,
});
const exchange = (change: Partial<Exchange> & { data?: unknown }): Exchange => ({
  method: "GET",
  url: `${base}/repos/demo/widgets/issues/1/comments`,
  status: 200,
  headers: { ...rate, ...json, etag: 'W/"abc"', vary: "Accept, Authorization" },
  body: JSON.stringify(change.data ?? [comment()]),
  ...change,
});
const check = (e: Exchange) => judge.check(e, judge.operationOf(e.method, new URL(e.url).pathname)!);

test("operations are found by method and path template; a literal part beats a parameter", () => {
  assert.equal(judge.operationOf("GET", "/repos/demo/widgets/issues/comments"), { method: "GET", path: "/repos/{owner}/{repo}/issues/comments" });
  assert.equal(judge.operationOf("GET", "/repos/demo/widgets/issues/7"), { method: "GET", path: "/repos/{owner}/{repo}/issues/{issue_number}" });
  assert.equal(judge.operationOf("DELETE", "/repos/demo/widgets/git/refs/heads%2Fra%2Fone"), { method: "DELETE", path: "/repos/{owner}/{repo}/git/refs/{ref}" });
  assert.is(judge.operationOf("GET", "/no/such/thing"), undefined);
});

test("a right answer validates, a nullable field may be null", () => {
  assert.equal(check(exchange({})), []);
  assert.equal(check(exchange({ data: [comment({ user: null })] })), [], "issue-comment's user is nullable-simple-user");
});

test("a missing required field, a wrong type, a bad date and null where none is allowed are each named", () => {
  const { id: _id, ...noId } = comment();
  assert.match(check(exchange({ data: [noId] })).join("\n"), "body/0 must have required property 'id'");
  assert.match(check(exchange({ data: [comment({ id: "9" })] })).join("\n"), "body/0/id must be integer");
  assert.match(check(exchange({ data: [comment({ created_at: "15 January 2026" })] })).join("\n"), 'body/0/created_at must match format "date-time"');
  assert.match(check(exchange({ data: [comment({ html_url: null })] })).join("\n"), "body/0/html_url must be string");
  const { events_url: _events, ...thinUser } = user("owner");
  assert.match(check(exchange({ data: [comment({ user: thinUser })] })).join("\n"), "events_url");
});

test("an undocumented status, a body on a 204, a missing rate-limit header, ETag or Vary, and a Link in the /repos form are named", () => {
  assert.match(check(exchange({ status: 418 })).join("\n"), "status 418 is not one the operation documents");
  assert.match(check(exchange({ method: "DELETE", url: `${base}/repos/demo/widgets/git/refs/heads%2Fx`, status: 204, body: "{}" })).join("\n"), "a 204 answer has a body");
  const { "x-ratelimit-used": _used, ...fewer } = exchange({}).headers;
  assert.match(check(exchange({ headers: fewer })).join("\n"), "header x-ratelimit-used");
  const { etag: _etag, vary: _vary, ...untagged } = exchange({}).headers;
  const problems = check(exchange({ headers: untagged })).join("\n");
  assert.match(problems, "header etag");
  assert.match(problems, "header vary");
  const link = `<${base}/repos/demo/widgets/issues/1/comments?page=2>; rel="next"`;
  assert.match(check(exchange({ headers: { ...exchange({}).headers, link } })).join("\n"), "not in GitHub's /repositories/<id>/ form");
  assert.equal(check(exchange({ headers: { ...exchange({}).headers, link: `<${base}/repositories/4/issues/1/comments?page=2>; rel="next"` } })), []);
});

test("statuses GitHub answers on any operation: 304 to a GET with no body, 401 and 400 with GitHub's error", () => {
  assert.equal(check(exchange({ status: 304, body: "" })), []);
  assert.equal(check(exchange({ status: 401, body: JSON.stringify({ message: "Bad credentials", documentation_url: "https://docs.github.com/rest", status: "401" }) })), []);
  assert.match(check(exchange({ status: 400, body: JSON.stringify({ message: 4 }) })).join("\n"), "body/message must be string");
});

test.run();
