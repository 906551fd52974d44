import { test } from "uvu";
import * as assert from "uvu/assert";
import { failure, forgeTemplate } from "../testing/forge.ts";
import { forgeConfig, quickOptions } from "../testing/github-kit.ts";
import { connectGitHub } from "../boundaries/github.ts";
import { addIssue, findRepo, loadForgeData, saveForgeData } from "./state.ts";
import { API_VERSIONS } from "./server.ts";

// The headers GitHub answers with that a client like robot-army meets: rate limits on errors,
// Vary on conditional answers, API versions, and Link headers in the /repositories/<id>/ form.
const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };
const RATE = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-used", "x-ratelimit-resource"];

test("error answers state the rate limit as GitHub's do: 404, 422, 403, 401, 400, a secondary rate limit and a 5xx", () =>
  template.use(async ({ owner, stranger, client, hook }) => {
    await hook("POST", "/_forge/faults", [
      { method: "GET", path: "/repos/demo/widgets/issues/1", kind: "secondary-rate-limit", retry_after: 7 },
      { method: "GET", path: "/repos/demo/widgets/issues/2", status: 502 },
    ]);
    const answers = {
      404: await failure(owner.rest.issues.get({ ...repo, issue_number: 999 })),
      422: await failure(owner.request("POST /repos/{owner}/{repo}/issues", { ...repo, body: "no title" } as never)),
      403: await failure(stranger.rest.issues.update({ ...repo, issue_number: 1, title: "Mine now" })),
      401: await failure(client("ghp_not-a-token").rest.users.getAuthenticated()),
      400: await failure(owner.request("GET /user", { headers: { "x-github-api-version": "1999-01-01" } })),
      secondary: await failure(owner.rest.issues.get({ ...repo, issue_number: 1 })),
      502: await failure(owner.rest.issues.get({ ...repo, issue_number: 2 })),
    };
    for (const [what, answer] of Object.entries(answers)) {
      for (const name of RATE) assert.ok(answer.headers[name] !== undefined, `${what} carries ${name}`);
      assert.is(answer.headers["x-ratelimit-resource"], "core");
      assert.ok(Number(answer.headers["x-ratelimit-remaining"]) <= Number(answer.headers["x-ratelimit-limit"]), what);
    }
    assert.is(answers.secondary.status, 403);
    assert.is(answers.secondary.headers["retry-after"], "7");
    assert.is(answers[502].status, 502);
    assert.is(answers[401].headers["x-ratelimit-limit"], "60", "no credentials: the anonymous limit");
    assert.is(answers[404].headers["x-ratelimit-limit"], "5000", "the user's own limit");
  }));

test("a conditional answer varies on Authorization: 200 and 304 say so, and another token's ETag earns no 304", () =>
  template.use(async ({ owner, stranger }) => {
    const first = await owner.rest.issues.get({ ...repo, issue_number: 1 });
    const vary = (value: string | undefined) => (value ?? "").split(",").map((part) => part.trim().toLowerCase());
    for (const name of ["accept", "authorization", "cookie", "accept-encoding"]) assert.ok(vary(first.headers.vary).includes(name), `Vary names ${name}: ${first.headers.vary}`);
    const again = await failure(owner.rest.issues.get({ ...repo, issue_number: 1, headers: { "if-none-match": first.headers.etag } }));
    assert.is(again.status, 304);
    assert.ok(vary(again.headers.vary).includes("authorization"), "the 304 varies as the 200 did");
    const theirs = await stranger.rest.issues.get({ ...repo, issue_number: 1, headers: { "if-none-match": first.headers.etag } });
    assert.is(theirs.status, 200, "the same issue, read with another token, is not Not Modified");
    assert.equal(theirs.data.title, first.data.title);
    assert.is.not(theirs.headers.etag, first.headers.etag);
  }));

test("an unsupported X-GitHub-Api-Version is refused with 400 and GitHub's error; a supported one or none is answered, and robot-army's own client is", () =>
  template.use(async (t) => {
    for (const version of ["2021-01-01", "latest", ""]) {
      const refused = await failure(t.owner.request("GET /repos/{owner}/{repo}", { ...repo, headers: { "x-github-api-version": version } }));
      assert.is(refused.status, 400, JSON.stringify(version));
      assert.is(refused.data.message, `Unsupported 'X-GitHub-Api-Version' header value: '${version}'. The supported versions are: 2022-11-28, 2026-03-10`);
      assert.match(refused.data.documentation_url, /^https:\/\/docs\.github\.com\/rest\/about-the-rest-api\/api-versions/);
      assert.is(refused.data.status, "400");
    }
    for (const version of API_VERSIONS) {
      assert.is((await t.owner.request("GET /repos/{owner}/{repo}", { ...repo, headers: { "x-github-api-version": version } })).status, 200, version);
    }
    assert.is((await t.owner.rest.repos.get(repo)).status, 200, "no version header: the default version");
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions());
    assert.is((await github.getRepository("demo/widgets")).full_name, "demo/widgets", "robot-army sends a supported version or none");
    assert.is(await github.whoami(), "owner");
  }));

test("every answer names the API version it was answered in: the one asked for, else 2022-11-28; a refused one names none", () =>
  template.use(async (t) => {
    assert.is((await t.owner.rest.repos.get(repo)).headers["x-github-api-version-selected"], "2022-11-28");
    const asked = await t.owner.request("GET /repos/{owner}/{repo}", { ...repo, headers: { "x-github-api-version": "2026-03-10" } });
    assert.is(asked.headers["x-github-api-version-selected"], "2026-03-10");
    assert.is((await failure(t.owner.rest.repos.get({ owner: "demo", repo: "nothing" }))).headers["x-github-api-version-selected"], "2022-11-28", "errors too");
    const refused = await failure(t.owner.request("GET /repos/{owner}/{repo}", { ...repo, headers: { "x-github-api-version": "2021-01-01" } }));
    assert.is(refused.headers["x-github-api-version-selected"], undefined);
  }));

test("a label made answers 201 with its Location, where it is read", () =>
  template.use(async (t) => {
    const made = await t.owner.rest.issues.createLabel({ ...repo, name: "needs review", color: "d73a4a" });
    assert.is(made.status, 201);
    assert.is(made.headers.location, made.data.url);
    assert.is((await t.owner.request(`GET ${new URL(made.headers.location!).pathname}`)).data.name, "needs review");
  }));

test("Link headers name /repositories/<id>/..., the forge serves that form, and robot-army's reader follows it through every page", () =>
  template.use(async (t) => {
    const id = (await t.owner.rest.repos.get(repo)).data.id;
    const data = loadForgeData(t.dir);
    const widgets = findRepo(data, "demo", "widgets")!;
    for (let n = 1; n <= 120; n++) addIssue(data, widgets, { title: `Filler ${n}`, body: null, user: "owner" }, `2026-01-16T10:${String(n % 60).padStart(2, "0")}:00Z`);
    for (let n = 1; n <= 110; n++) widgets.comments.push({ id: 900_000 + n, issue: 1, user: "owner", body: `comment ${n}`, created_at: "2026-01-16T10:00:00Z", updated_at: "2026-01-16T10:00:00Z" });
    saveForgeData(t.dir, data);

    const page = await t.owner.rest.issues.listForRepo({ ...repo, per_page: 50 });
    const link = page.headers.link ?? "";
    for (const rel of ["next", "last"]) assert.match(link, new RegExp(`<${t.forge.url}/repositories/${id}/issues\\?per_page=50&page=\\d+>; rel="${rel}"`));
    assert.not.match(link, "/repos/", "no link in the /repos/ form");
    const served = await t.owner.request({ method: "GET", url: `${t.forge.url}/repositories/${id}/issues?per_page=50&page=2` });
    assert.equal((served.data as Array<{ number: number }>).map((i) => i.number), (await t.owner.rest.issues.listForRepo({ ...repo, per_page: 50, page: 2 })).data.map((i) => i.number));
    assert.is((await failure(t.owner.request({ method: "GET", url: `${t.forge.url}/repositories/999999/issues` }))).status, 404);

    // Each request under /repositories/ takes one use of a fault that changes nothing, so their count is read back.
    await t.hook("POST", "/_forge/faults", { method: "GET", path: "/repositories/*", delay_ms: 0, times: 100 });
    const github = await connectGitHub(await forgeConfig(t), null, quickOptions());
    const changes = await github.issueChanges("demo/widgets");
    assert.ok(changes.changed);
    assert.is(changes.issues.length, 125, "every issue, across two pages of 100");
    const comments = await github.listComments("demo/widgets", 1);
    assert.is(comments.length, 110, "every comment, across two pages of 100");
    const left = ((await t.hook("GET", "/_forge/faults")).body as Array<{ left: number }>)[0].left;
    assert.is(100 - left, 2, "the second page of each was read where its Link header pointed");
  }));

test.run();
