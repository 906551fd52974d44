import { test } from "uvu";
import * as assert from "uvu/assert";
import { Octokit } from "@octokit/rest";
import { forgeTemplate } from "../testing/forge.ts";
import type { TestForge } from "../testing/forge.ts";
import { makeBranch } from "../testing/forge-git.ts";
import { EMPTY_TREE } from "./git.ts";
import { loadGitHubDescription } from "../testing/openapi.ts";
import { recordedFetch } from "../testing/recorded-fetch.ts";
import { makeRouter } from "./router.ts";

// Seeded: #1..#3 labelled by owner, #4 labelled by stranger, #5 unlabelled by owner.
const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };

/**
 * GraphQL is not REST: GitHub's OpenAPI description has no `/graphql`, so its answers are
 * judged by lib/forge/graphql.test.ts, not here.
 */
const NOT_REST = new Set(["POST /graphql"]);

test("every route the forge serves answers as GitHub's OpenAPI description documents: status, body and headers", () =>
  template.use(async (t) => {
    const judge = loadGitHubDescription();
    const recorder = recordedFetch();
    const client = (token?: string) => new Octokit({ baseUrl: t.forge.url, auth: token, request: { fetch: recorder.fetch }, log: silent });
    const owner = client(t.token("owner"));
    const stranger = client(t.token("stranger"));
    const anonymous = client();
    const repositoryId = (await owner.rest.repos.get(repo)).data.id;

    await exerciseEveryRoute(t, owner, stranger, anonymous);

    // GitHub documents `/repositories/<id>/...` (where its Link headers point) under `/repos/{owner}/{repo}/...`.
    const apiPath = (url: string) => new URL(url).pathname.replace(new RegExp(`^/repositories/${repositoryId}(?=/|$)`), "/repos/demo/widgets");
    const forgeRoute = makeRouter(t.forge.routes);
    const served = new Set<string>();
    const problems: string[] = [];
    let validated = 0;
    let judged = 0;
    for (const exchange of recorder.exchanges) {
      const path = apiPath(exchange.url);
      const route = forgeRoute(exchange.method, path)?.route;
      const name = route && `${route.method} ${route.template}`;
      if (name && NOT_REST.has(name)) continue;
      judged++;
      if (name && exchange.status < 300) served.add(name);
      const operation = judge.operationOf(exchange.method, path);
      const found = operation ? judge.check(exchange, operation) : [`no operation in GitHub's description for ${exchange.method} ${path}`];
      if (found.length === 0) validated++;
      else problems.push(`${exchange.method} ${exchange.url} -> ${exchange.status}\n    ${found.slice(0, 8).join("\n    ")}`);
    }
    const untried = t.forge.routes.map((r) => `${r.method} ${r.template}`).filter((name) => !NOT_REST.has(name) && !served.has(name));
    console.log(`forge responses validated: ${validated} of ${judged}`);
    assert.equal(untried, [], "every route in the forge's tables answered with success at least once");
    assert.ok(problems.length === 0, `${problems.length} answers do not validate:\n${problems.join("\n")}`);
    assert.ok(judged > 60, `enough answers were judged (${judged})`);
    for (const status of [200, 201, 204, 304, 400, 401, 403, 404, 405, 409, 422]) {
      assert.ok(recorder.exchanges.some((e) => e.status === status), `an answer with status ${status} was judged`);
    }
    assert.ok(recorder.exchanges.some((e) => /^\/repositories\/\d+\//.test(new URL(e.url).pathname)), "a Link header was followed");
  }));

/** Calls each route of the forge, its lists across pages and conditionally, and the errors it answers with. */
async function exerciseEveryRoute(t: TestForge, owner: Octokit, stranger: Octokit, anonymous: Octokit): Promise<void> {
  const fails = async (call: Promise<unknown>, status: number) => {
    const answer = await call.then(() => 0, (error: { status: number }) => error.status);
    assert.is(answer, status, `expected ${status}`);
  };
  const conditional = async (route: string, params: Record<string, unknown>) => {
    const first = await owner.request(route, params);
    await fails(owner.request(route, { ...params, headers: { "if-none-match": first.headers.etag } }), 304);
  };

  // Who, and the rate limit.
  await owner.rest.users.getAuthenticated();
  await conditional("GET /user", {});
  await owner.rest.users.getByUsername({ username: "stranger" });
  await fails(owner.rest.users.getByUsername({ username: "nobody-here" }), 404);
  await owner.rest.rateLimit.get();
  await fails(anonymous.rest.users.getAuthenticated(), 401);
  await fails(owner.request("GET /user", { headers: { "x-github-api-version": "2021-01-01" } }), 400);
  await owner.request("GET /user", { headers: { "x-github-api-version": "2022-11-28" } });

  // The repository and its labels.
  await conditional("GET /repos/{owner}/{repo}", repo);
  await fails(owner.rest.repos.get({ owner: "demo", repo: "nothing" }), 404);
  for (const name of ["bug", "docs", "later"]) await owner.rest.issues.createLabel({ ...repo, name, color: "d73a4a", description: `${name} work` });
  await fails(owner.rest.issues.createLabel({ ...repo, name: "bug", color: "d73a4a" }), 422);
  await owner.paginate(owner.rest.issues.listLabelsForRepo, { ...repo, per_page: 2 });
  await conditional("GET /repos/{owner}/{repo}/labels", { ...repo, per_page: 2 });
  await owner.rest.issues.getLabel({ ...repo, name: "bug" });
  await fails(owner.rest.issues.getLabel({ ...repo, name: "nothing" }), 404);

  // Issues, their labels, events and comments.
  const made = await owner.rest.issues.create({ ...repo, title: "Judged by the description", body: "A body", labels: ["bug"] });
  const issue = { ...repo, issue_number: made.data.number };
  await fails(owner.request("POST /repos/{owner}/{repo}/issues", { ...repo, body: "no title" } as never), 422);
  await owner.paginate(owner.rest.issues.listForRepo, { ...repo, state: "all", per_page: 2 });
  await conditional("GET /repos/{owner}/{repo}/issues", { ...repo, per_page: 2 });
  await fails(owner.request("GET /repos/{owner}/{repo}/issues", { ...repo, state: "sideways" } as never), 422);
  await conditional("GET /repos/{owner}/{repo}/issues/{issue_number}", issue);
  await fails(owner.rest.issues.get({ ...repo, issue_number: 999 }), 404);
  await owner.rest.issues.update({ ...issue, title: "Judged by GitHub's description", body: "An edited body" });
  await owner.rest.issues.update({ ...issue, state: "closed", state_reason: "not_planned" });
  await owner.rest.issues.update({ ...issue, state: "open" });
  await fails(stranger.rest.issues.update({ ...repo, issue_number: 1, title: "Mine now" }), 403);
  // Every repository's issues in one list, as the poll reads them when the author is the token's own user.
  await owner.paginate(owner.rest.issues.listForAuthenticatedUser, { filter: "created", state: "all", per_page: 1 });
  await conditional("GET /user/issues", { filter: "all", state: "all", sort: "updated", direction: "desc", per_page: 100 });
  await fails(anonymous.rest.issues.listForAuthenticatedUser(), 401);
  await owner.rest.issues.addLabels({ ...issue, labels: ["docs"] });
  await owner.rest.issues.setLabels({ ...issue, labels: ["bug", "docs", "later"] });
  await owner.rest.issues.listLabelsOnIssue(issue);
  await owner.rest.issues.removeLabel({ ...issue, name: "later" });
  await fails(owner.rest.issues.removeLabel({ ...issue, name: "later" }), 404);
  await owner.paginate(owner.rest.issues.listEvents, { ...issue, per_page: 2 });
  for (let i = 1; i <= 3; i++) await owner.rest.issues.createComment({ ...issue, body: `Comment ${i}` });
  await t.hook("POST", "/_forge/faults", { method: "POST", path: `/repos/demo/widgets/issues/${issue.issue_number}/comments`, kind: "secondary-rate-limit" });
  await fails(owner.rest.issues.createComment({ ...issue, body: "Too soon" }), 403);
  await fails(owner.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { ...issue } as never), 422);
  await owner.paginate(owner.rest.issues.listComments, { ...issue, per_page: 2 });
  await conditional("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", { ...issue, per_page: 2 });
  await owner.paginate(owner.rest.issues.listCommentsForRepo, { ...repo, per_page: 2 });
  await conditional("GET /repos/{owner}/{repo}/issues/comments", { ...repo, sort: "updated", direction: "desc", per_page: 2 });
  await fails(owner.request("GET /repos/{owner}/{repo}/issues/comments", { ...repo, sort: "sideways" } as never), 422);

  // Issue dependencies: the new issue blocked by #1 and #2 (by their ids, not their numbers).
  const deps = "/repos/{owner}/{repo}/issues/{issue_number}/dependencies";
  const blockers = await Promise.all([1, 2].map(async (n) => (await owner.rest.issues.get({ ...repo, issue_number: n })).data.id));
  for (const id of blockers) await owner.request(`POST ${deps}/blocked_by`, { ...issue, issue_id: id });
  await fails(owner.request(`POST ${deps}/blocked_by`, { ...issue, issue_id: blockers[0] }), 422);
  await fails(owner.request(`POST ${deps}/blocked_by`, { ...issue, issue_id: 999999 }), 404);
  await fails(stranger.request(`POST ${deps}/blocked_by`, { ...issue, issue_id: blockers[0] }), 403);
  await owner.paginate(`GET ${deps}/blocked_by`, { ...issue, per_page: 1 });
  await conditional(`GET ${deps}/blocked_by`, { ...issue, per_page: 1 });
  await conditional(`GET ${deps}/blocking`, { ...repo, issue_number: 1 });
  await owner.request(`DELETE ${deps}/blocked_by/{issue_id}`, { ...issue, issue_id: blockers[1] });
  await fails(owner.request(`DELETE ${deps}/blocked_by/{issue_id}`, { ...issue, issue_id: blockers[1] }), 404);
  await fails(stranger.request(`DELETE ${deps}/blocked_by/{issue_id}`, { ...issue, issue_id: blockers[0] }), 403);

  // Branches and pull requests.
  const bare = t.seeded.repository.clone_url;
  makeBranch(bare, "ra/one", "one.txt");
  makeBranch(bare, "ra/two", "two.txt");
  makeBranch(bare, "ra/three", "three.txt");
  await owner.rest.git.getRef({ ...repo, ref: "heads/ra/one" });
  await fails(owner.rest.git.getRef({ ...repo, ref: "heads/nothing" }), 404);
  const one = (await owner.rest.pulls.create({ ...repo, title: "One", head: "ra/one", base: "main", body: `Closes #${made.data.number}` })).data.number;
  const two = (await owner.rest.pulls.create({ ...repo, title: "Two", head: "ra/two", base: "main" })).data.number;
  const three = (await owner.rest.pulls.create({ ...repo, title: "Three", head: "ra/three", base: "main", draft: true })).data.number;
  await fails(owner.rest.pulls.create({ ...repo, title: "Again", head: "ra/one", base: "main" }), 422);
  await owner.paginate(owner.rest.pulls.list, { ...repo, state: "all", per_page: 2 });
  await conditional("GET /repos/{owner}/{repo}/pulls", { ...repo, per_page: 2 });
  // The first read of a new pull request finds mergeable not computed yet (null, judged too); the next has it, and
  // from then on the answer stands still, so a conditional read earns its 304.
  await owner.rest.pulls.get({ ...repo, pull_number: one });
  await conditional("GET /repos/{owner}/{repo}/pulls/{pull_number}", { ...repo, pull_number: one });
  await fails(owner.rest.pulls.get({ ...repo, pull_number: 1 }), 404);
  await owner.rest.pulls.update({ ...repo, pull_number: two, title: "Two, renamed", body: "Edited" });

  // Reviews and review comments: the stranger reviews the owner's pull request, which its author may not approve.
  const pull = { ...repo, pull_number: two };
  await stranger.rest.pulls.createReview({ ...pull, event: "REQUEST_CHANGES", body: "Not yet", comments: [{ path: "two.txt", line: 1, body: "Why two?" }] });
  await stranger.rest.pulls.createReview({ ...pull, event: "APPROVE" });
  await owner.rest.pulls.createReview({ ...pull, event: "COMMENT", body: "Thanks" });
  await fails(owner.rest.pulls.createReview({ ...pull, event: "APPROVE" }), 422);
  await fails(stranger.rest.pulls.createReview({ ...pull, event: "COMMENT" }), 422);
  await owner.paginate(owner.rest.pulls.listReviews, { ...pull, per_page: 2 });
  await conditional("GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews", { ...pull, per_page: 2 });
  const head = (await owner.rest.pulls.get(pull)).data.head.sha;
  await owner.rest.pulls.createReviewComment({ ...pull, body: "One line", commit_id: head, path: "two.txt", line: 1 });
  await fails(owner.rest.pulls.createReviewComment({ ...pull, body: "Nowhere", commit_id: head, path: "two.txt", line: 9 }), 422);
  await owner.paginate(owner.rest.pulls.listReviewComments, { ...pull, per_page: 1 });
  await conditional("GET /repos/{owner}/{repo}/pulls/{pull_number}/comments", { ...pull, per_page: 1 });
  await owner.paginate(owner.rest.pulls.listReviewCommentsForRepo, { ...repo, sort: "updated", direction: "desc", per_page: 1 });
  await conditional("GET /repos/{owner}/{repo}/pulls/comments", { ...repo, per_page: 1 });

  // Check runs and commit statuses on the draft's head, which an open pull request names.
  const checked = (await owner.rest.git.getRef({ ...repo, ref: "heads/ra/three" })).data.object.sha;
  const run = (await owner.rest.checks.create({ ...repo, name: "build", head_sha: checked, details_url: "https://ci.invalid/1", output: { title: "Building", summary: "Started" } })).data;
  await owner.rest.checks.update({ ...repo, check_run_id: run.id, status: "in_progress" });
  await owner.rest.checks.update({ ...repo, check_run_id: run.id, conclusion: "success", output: { title: "Built", summary: "All good", text: "Details" } });
  await owner.rest.checks.create({ ...repo, name: "lint", head_sha: checked, status: "completed", conclusion: "failure" });
  await fails(stranger.rest.checks.create({ ...repo, name: "x", head_sha: checked }), 403);
  await conditional("GET /repos/{owner}/{repo}/check-runs/{check_run_id}", { ...repo, check_run_id: run.id });
  await owner.paginate(owner.rest.checks.listForRef, { ...repo, ref: "ra/three", per_page: 1 });
  await conditional("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", { ...repo, ref: checked, filter: "all" });
  await owner.rest.repos.createCommitStatus({ ...repo, sha: checked, state: "pending", context: "ci/build" });
  await owner.rest.repos.createCommitStatus({ ...repo, sha: checked, state: "success", context: "ci/build", target_url: "https://ci.invalid/2", description: "Built" });
  await owner.rest.repos.createCommitStatus({ ...repo, sha: checked, state: "failure" });
  await fails(stranger.rest.repos.createCommitStatus({ ...repo, sha: checked, state: "success" }), 403);
  await owner.paginate(owner.rest.repos.listCommitStatusesForRef, { ...repo, ref: checked, per_page: 2 });
  await conditional("GET /repos/{owner}/{repo}/commits/{ref}/statuses", { ...repo, ref: "ra/three" });
  await owner.paginate(owner.rest.repos.getCombinedStatusForRef, { ...repo, ref: checked, per_page: 1 });
  await conditional("GET /repos/{owner}/{repo}/commits/{ref}/status", { ...repo, ref: checked });
  await fails(owner.rest.repos.getCombinedStatusForRef({ ...repo, ref: "nothing" }), 404);
  await fails(owner.rest.pulls.checkIfMerged({ ...repo, pull_number: one }), 404);
  await fails(owner.rest.pulls.merge({ ...repo, pull_number: one, sha: "0".repeat(40) }), 409);
  await fails(owner.rest.pulls.merge({ ...repo, pull_number: three }), 405);
  await owner.rest.pulls.merge({ ...repo, pull_number: one, merge_method: "squash" });
  await owner.rest.pulls.checkIfMerged({ ...repo, pull_number: one });
  await owner.rest.pulls.get({ ...repo, pull_number: one });
  await owner.rest.issues.get(issue);
  await fails(owner.rest.git.deleteRef({ ...repo, ref: "heads/main" }), 422);
  await fails(owner.rest.git.deleteRef({ ...repo, ref: "heads/nothing" }), 422);
  await owner.rest.git.deleteRef({ ...repo, ref: "heads/ra/two" });
  await owner.rest.pulls.get({ ...repo, pull_number: two });
  await owner.rest.pulls.update({ ...repo, pull_number: three, state: "closed" });
  await owner.paginate(owner.rest.pulls.list, { ...repo, state: "closed", per_page: 1 });

  // The git database as robot-army keeps claims and heartbeats in it: commits with the empty
  // tree, and references outside heads made, read, listed, moved and deleted.
  const main = (await owner.rest.git.getRef({ ...repo, ref: "heads/main" })).data.object.sha;
  const claimed = (await owner.rest.git.createCommit({ ...repo, message: "claim", tree: EMPTY_TREE, parents: [main] })).data.sha;
  await owner.rest.git.createCommit({ ...repo, message: "root", tree: EMPTY_TREE, author: { name: "robot-army", email: "robot-army@host.invalid", date: "2026-01-15T10:00:00Z" } });
  await fails(owner.rest.git.createCommit({ ...repo, message: "x", tree: "0".repeat(40) }), 422);
  await fails(owner.rest.git.createCommit({ ...repo, message: "x", tree: EMPTY_TREE, parents: ["0".repeat(40)] }), 422);
  await fails(stranger.rest.git.createCommit({ ...repo, message: "x", tree: EMPTY_TREE }), 403);
  await conditional("GET /repos/{owner}/{repo}/git/commits/{commit_sha}", { ...repo, commit_sha: claimed });
  await fails(owner.rest.git.getCommit({ ...repo, commit_sha: "0".repeat(40) }), 404);
  const claim = { ...repo, ref: "robot-army/claims/1" };
  await owner.rest.git.createRef({ ...repo, ref: "refs/robot-army/claims/1", sha: claimed });
  await fails(owner.rest.git.createRef({ ...repo, ref: "refs/robot-army/claims/1", sha: claimed }), 422);
  await fails(owner.rest.git.createRef({ ...repo, ref: "refs/claims", sha: claimed }), 422);
  await fails(owner.rest.git.createRef({ ...repo, ref: "refs/robot-army/claims/9", sha: "0".repeat(40) }), 422);
  await fails(stranger.rest.git.createRef({ ...repo, ref: "refs/robot-army/claims/9", sha: claimed }), 403);
  await conditional("GET /repos/{owner}/{repo}/git/ref/{ref}", claim);
  await fails(owner.rest.git.getRef({ ...repo, ref: "robot-army/claims/9" }), 404);
  for (const n of [2, 3]) await owner.rest.git.createRef({ ...repo, ref: `refs/robot-army/claims/${n}`, sha: main });
  await owner.paginate(owner.rest.git.listMatchingRefs, { ...repo, ref: "robot-army/claims", per_page: 2 });
  await conditional("GET /repos/{owner}/{repo}/git/matching-refs/{ref}", { ...repo, ref: "robot-army/claims", per_page: 2 });
  await owner.rest.git.listMatchingRefs({ ...repo, ref: "robot-army/nothing" });
  const beat = (await owner.rest.git.createCommit({ ...repo, message: "beat", tree: EMPTY_TREE, parents: [claimed] })).data.sha;
  await owner.rest.git.updateRef({ ...claim, sha: beat });
  await fails(owner.rest.git.updateRef({ ...claim, sha: main }), 422);
  await owner.rest.git.updateRef({ ...claim, sha: main, force: true });
  await fails(owner.rest.git.updateRef({ ...repo, ref: "robot-army/claims/9", sha: main }), 422);
  await owner.rest.git.deleteRef(claim);
  await fails(owner.rest.git.deleteRef(claim), 422);
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

test.run();
