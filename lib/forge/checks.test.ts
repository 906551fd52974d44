import { test } from "uvu";
import * as assert from "uvu/assert";
import { failure, forgeTemplate, SEED_TIME } from "../testing/forge.ts";
import { makeBranch } from "../testing/forge-git.ts";

// Seeded: #1..#3 labelled by owner, #4 labelled by stranger, #5 unlabelled by owner.
const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };

let clock = SEED_TIME;
const at = (iso: string) => void (clock = new Date(iso));
test.before.each(() => void (clock = SEED_TIME));

test("a check run is created queued, started now, by the forge-ci app, in one suite per commit, naming the open pull requests whose head it checks", () =>
  template.use(
    async ({ owner, seeded }) => {
      const sha = makeBranch(seeded.repository.clone_url, "ra/checked", "checked.txt");
      const pull = (await owner.rest.pulls.create({ ...repo, title: "Checked", head: "ra/checked", base: "main" })).data;
      at("2026-02-01T10:00:00Z");
      const made = await owner.rest.checks.create({ ...repo, name: "build", head_sha: sha });
      assert.is(made.status, 201);
      const run = made.data;
      assert.equal([run.name, run.head_sha, run.status, run.conclusion], ["build", sha, "queued", null]);
      assert.equal([run.started_at, run.completed_at], ["2026-02-01T10:00:00Z", null]);
      assert.equal([run.app?.slug, run.app?.name], ["forge-ci", "Forge CI"]);
      assert.is(run.details_url, run.app?.external_url, "without a details_url GitHub gives the app's homepage");
      assert.match(run.url, new RegExp(`/repos/demo/widgets/check-runs/${run.id}$`));
      assert.match(run.html_url ?? "", new RegExp(`/demo/widgets/runs/${run.id}$`));
      assert.equal(run.output, { title: null, summary: null, text: null, annotations_count: 0, annotations_url: `${run.url}/annotations` });
      assert.equal(run.pull_requests.map((p) => [p.number, p.head.ref, p.head.sha, p.base.ref]), [[pull.number, "ra/checked", sha, "main"]]);

      const second = (await owner.rest.checks.create({ ...repo, name: "lint", head_sha: sha })).data;
      assert.is(second.check_suite?.id, run.check_suite?.id, "one suite per commit");
      const main = (await owner.rest.git.getRef({ ...repo, ref: "heads/main" })).data.object.sha;
      const elsewhere = (await owner.rest.checks.create({ ...repo, name: "build", head_sha: main })).data;
      assert.is.not(elsewhere.check_suite?.id, run.check_suite?.id);
      assert.equal(elsewhere.pull_requests, [], "no open pull request has main's head as its own");
      assert.equal((await owner.rest.checks.get({ ...repo, check_run_id: run.id })).data.name, "build");
      assert.is((await failure(owner.rest.checks.get({ ...repo, check_run_id: 99999 }))).status, 404);
    },
    { now: () => clock },
  ));

test("a conclusion completes a run; completed without one is 422; an update keeps what it does not name", () =>
  template.use(
    async ({ owner, seeded }) => {
      const sha = makeBranch(seeded.repository.clone_url, "ra/checked", "checked.txt");
      const run = (await owner.rest.checks.create({ ...repo, name: "build", head_sha: sha, details_url: "https://ci.invalid/7", external_id: "7", output: { title: "Building", summary: "Started" } })).data;
      const refused = await failure(owner.rest.checks.update({ ...repo, check_run_id: run.id, status: "completed" }));
      assert.is(refused.status, 422);
      const noSummary = await failure(owner.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { ...repo, check_run_id: run.id, output: { title: "Half" } } as never));
      assert.is(noSummary.status, 422);
      assert.is((await owner.rest.checks.update({ ...repo, check_run_id: run.id, status: "in_progress" })).data.status, "in_progress");
      at("2026-02-01T11:00:00Z");
      const done = (await owner.rest.checks.update({ ...repo, check_run_id: run.id, conclusion: "failure", output: { title: "Failed", summary: "2 tests failed", text: "details" } })).data;
      assert.equal([done.status, done.conclusion, done.completed_at], ["completed", "failure", "2026-02-01T11:00:00Z"]);
      assert.equal([done.output.title, done.output.summary, done.output.text], ["Failed", "2 tests failed", "details"]);
      assert.equal([done.details_url, done.external_id, done.name], ["https://ci.invalid/7", "7", "build"], "kept from the create");
      const renamed = (await owner.rest.checks.update({ ...repo, check_run_id: run.id, name: "build (node)" })).data;
      assert.equal([renamed.name, renamed.conclusion], ["build (node)", "failure"]);
      const given = (await owner.rest.checks.create({ ...repo, name: "x", head_sha: sha, status: "completed", conclusion: "success", completed_at: "2026-02-01T12:30:00+01:00" })).data;
      assert.is(given.completed_at, "2026-02-01T11:30:00Z");
    },
    { now: () => clock },
  ));

test("check runs for a ref (a sha or a branch): the newest of each name, or all; by check_name and status; total_count; an unknown ref is 404", () =>
  template.use(async ({ owner, seeded }) => {
    const sha = makeBranch(seeded.repository.clone_url, "ra/checked", "checked.txt");
    const build1 = (await owner.rest.checks.create({ ...repo, name: "build", head_sha: sha, conclusion: "failure" })).data;
    const lint = (await owner.rest.checks.create({ ...repo, name: "lint", head_sha: sha })).data;
    const build2 = (await owner.rest.checks.create({ ...repo, name: "build", head_sha: sha, conclusion: "success" })).data;
    const list = async (params: Record<string, string> = {}) => {
      const { data } = await owner.rest.checks.listForRef({ ...repo, ref: sha, ...params });
      return [data.total_count, data.check_runs.map((run) => `${run.name}:${run.conclusion ?? run.status}`)];
    };
    assert.equal(await list(), [2, ["build:success", "lint:queued"]], "the newest run of each name, newest first");
    assert.equal(await list({ filter: "all" }), [3, ["build:success", "lint:queued", "build:failure"]]);
    assert.equal(await list({ check_name: "build", filter: "all" }), [2, ["build:success", "build:failure"]]);
    assert.equal(await list({ status: "queued" }), [1, ["lint:queued"]]);
    const byBranch = await owner.rest.checks.listForRef({ ...repo, ref: "ra/checked", filter: "all", per_page: 2 });
    assert.equal([byBranch.data.total_count, byBranch.data.check_runs.map((run) => run.id)], [3, [build2.id, lint.id]], "total_count counts every page");
    assert.match(byBranch.headers.link ?? "", /rel="next"/);
    const next = await owner.rest.checks.listForRef({ ...repo, ref: "ra/checked", filter: "all", per_page: 2, page: 2 });
    assert.equal(next.data.check_runs.map((run) => run.id), [build1.id]);
    assert.is((await owner.rest.checks.listForRef({ ...repo, ref: "heads/ra/checked" })).data.total_count, 2);
    assert.is((await owner.rest.checks.listForRef({ ...repo, ref: "main" })).data.total_count, 0);
    assert.is((await failure(owner.rest.checks.listForRef({ ...repo, ref: "no-such-branch" }))).status, 404);
    assert.is((await failure(owner.rest.checks.listForRef({ ...repo, ref: "main~1" }))).status, 404, "no revision expressions");
  }));

test("only those who may push create or update check runs and statuses; a commit the repository lacks is 422", () =>
  template.use(async ({ owner, stranger, seeded }) => {
    const sha = makeBranch(seeded.repository.clone_url, "ra/checked", "checked.txt");
    const run = (await owner.rest.checks.create({ ...repo, name: "build", head_sha: sha })).data;
    const denied = await failure(stranger.rest.checks.create({ ...repo, name: "build", head_sha: sha }));
    assert.equal([denied.status, denied.data.message], [403, "Must have push access to repository"]);
    assert.is((await failure(stranger.rest.checks.update({ ...repo, check_run_id: run.id, conclusion: "success" }))).status, 403);
    assert.is((await failure(stranger.rest.repos.createCommitStatus({ ...repo, sha, state: "success" }))).status, 403);
    assert.is((await owner.rest.checks.get({ ...repo, check_run_id: run.id })).data.status, "queued", "the stranger changed nothing");
    const lacking = await failure(owner.rest.checks.create({ ...repo, name: "build", head_sha: "0".repeat(40) }));
    assert.equal([lacking.status, lacking.data.message], [422, `No commit found for SHA: ${"0".repeat(40)}`]);
    assert.is((await failure(owner.rest.repos.createCommitStatus({ ...repo, sha: "0".repeat(40), state: "success" }))).status, 422);
    assert.is((await failure(owner.rest.repos.createCommitStatus({ ...repo, sha, state: "sideways" as "success" }))).status, 422);
    assert.is((await stranger.rest.checks.listForRef({ ...repo, ref: sha })).data.total_count, 1, "anyone who may read may list them");
  }));

test("commit statuses: context `default` unless given; listed newest first; combined: the newest per context (whatever its case), failure before pending before success", () =>
  template.use(
    async ({ owner, seeded }) => {
      const sha = makeBranch(seeded.repository.clone_url, "ra/checked", "checked.txt");
      const combined = async (ref = sha) => {
        const { data } = await owner.rest.repos.getCombinedStatusForRef({ ...repo, ref });
        return [data.state, data.total_count, data.statuses.map((s) => `${s.context}:${s.state}`)];
      };
      assert.equal(await combined(), ["pending", 0, []], "no statuses at all is pending");
      at("2026-02-01T10:00:00Z");
      const first = await owner.rest.repos.createCommitStatus({ ...repo, sha, state: "pending", target_url: "https://ci.invalid/1", description: "Building" });
      assert.is(first.status, 201);
      assert.equal([first.data.context, first.data.state, first.data.creator?.login, first.data.created_at], ["default", "pending", "owner", "2026-02-01T10:00:00Z"]);
      assert.match(first.headers.location ?? "", new RegExp(`/repos/demo/widgets/statuses/${sha}$`));
      await owner.rest.repos.createCommitStatus({ ...repo, sha, state: "success" });
      await owner.rest.repos.createCommitStatus({ ...repo, sha, state: "success", context: "ci/lint" });
      assert.equal(await combined(), ["success", 2, ["ci/lint:success", "default:success"]]);
      await owner.rest.repos.createCommitStatus({ ...repo, sha, state: "pending", context: "CI/Lint" });
      assert.equal(await combined(), ["pending", 2, ["CI/Lint:pending", "default:success"]], "a context matches whatever its case");
      await owner.rest.repos.createCommitStatus({ ...repo, sha, state: "error", context: "deploy" });
      assert.equal((await combined("ra/checked"))[0], "failure", "an error is a failure, and a branch names its head");
      const all = (await owner.rest.repos.listCommitStatusesForRef({ ...repo, ref: sha })).data;
      assert.equal(all.map((s) => `${s.context}:${s.state}`), ["deploy:error", "CI/Lint:pending", "ci/lint:success", "default:success", "default:pending"], "every status, newest first");
      const { data } = await owner.rest.repos.getCombinedStatusForRef({ ...repo, ref: sha });
      assert.equal([data.sha, data.repository.full_name], [sha, "demo/widgets"]);
      assert.match(data.url, new RegExp(`/commits/${sha}/status$`));
      assert.is((await failure(owner.rest.repos.getCombinedStatusForRef({ ...repo, ref: "no-such-branch" }))).status, 404);
    },
    { now: () => clock },
  ));

test("the lists answer ETags: the same list again is 304, and a new check run or status changes the answer", () =>
  template.use(async ({ owner, seeded }) => {
    const sha = makeBranch(seeded.repository.clone_url, "ra/checked", "checked.txt");
    await owner.rest.checks.create({ ...repo, name: "build", head_sha: sha });
    await owner.rest.repos.createCommitStatus({ ...repo, sha, state: "pending" });
    const routes = [
      "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
      "GET /repos/{owner}/{repo}/commits/{ref}/statuses",
      "GET /repos/{owner}/{repo}/commits/{ref}/status",
    ] as const;
    const tags = [];
    for (const route of routes) {
      const first = await owner.request(route, { ...repo, ref: sha });
      assert.is((await failure(owner.request(route, { ...repo, ref: sha, headers: { "if-none-match": first.headers.etag } }))).status, 304, route);
      tags.push(first.headers.etag);
    }
    await owner.rest.checks.create({ ...repo, name: "lint", head_sha: sha });
    await owner.rest.repos.createCommitStatus({ ...repo, sha, state: "success" });
    for (const [i, route] of routes.entries()) {
      const again = await owner.request(route, { ...repo, ref: sha, headers: { "if-none-match": tags[i] } });
      assert.is(again.status, 200, route);
      assert.is.not(again.headers.etag, tags[i]);
    }
  }));

test.run();
