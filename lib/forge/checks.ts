/**
 * The forge's check runs and commit statuses, answered as GitHub answers them:
 *
 * - `POST /repos/{o}/{r}/check-runs` {name, head_sha, status?, conclusion?, details_url?,
 *   external_id?, started_at?, completed_at?, output? {title, summary, text?}}: 201. A
 *   conclusion completes the run; `completed` without one is 422. Each is reported by one
 *   fixed app, `forge-ci`, and the runs on one commit share a check suite, as one app's do.
 * - `PATCH /repos/{o}/{r}/check-runs/{id}` (the same fields but head_sha) and `GET` one run.
 * - `GET /repos/{o}/{r}/commits/{ref}/check-runs` (a sha, branch or tag): `{total_count,
 *   check_runs}`, newest first, by `check_name` and `status`; `filter=latest` (the default)
 *   keeps the newest run of each name, `all` every one.
 * - `POST /repos/{o}/{r}/statuses/{sha}` {state, target_url?, description?, context?}: 201
 *   (context `default` unless given, matched whatever its case, as GitHub matches it).
 * - `GET /repos/{o}/{r}/commits/{ref}/statuses`: every status, newest first, and
 *   `GET .../commits/{ref}/status`: the newest of each context and the state they combine
 *   to (failure if one is error or failure, pending if one is pending or there are none,
 *   success otherwise).
 *
 * Writing any of them needs push access. A commit the repository lacks is 422 "No commit
 * found for SHA" to a write, 404 to a read, in GitHub's words.
 */
import type { ForgeCheckRun, ForgeRepo, ForgeStatus } from "./state.ts";
import { canPush, nextId } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError, bodyObject, choiceField, invalidRequest, mustHavePush, notFound, numberParam, paginate, queryChoice, repoOf, stringField, validationFailed } from "./http.ts";
import { branchHeads, resolveCommit } from "./git.ts";
import { nodeId, repoApi, repoJson, userJson } from "./repo-shapes.ts";
import type { ShapeContext } from "./repo-shapes.ts";
import { repoHtml } from "./shapes.ts";

const REPO = "/repos/{owner}/{repo}";

/** The check run and commit status routes. */
export const checkRoutes: Route[] = [
  { method: "POST", template: `${REPO}/check-runs`, writes: true, handler: createCheckRun },
  { method: "GET", template: `${REPO}/check-runs/{check_run_id}`, handler: getCheckRun },
  { method: "PATCH", template: `${REPO}/check-runs/{check_run_id}`, writes: true, handler: updateCheckRun },
  { method: "GET", template: `${REPO}/commits/{ref+}/check-runs`, handler: listCheckRuns },
  { method: "POST", template: `${REPO}/statuses/{sha}`, writes: true, handler: createStatus },
  { method: "GET", template: `${REPO}/commits/{ref+}/statuses`, handler: listStatuses },
  { method: "GET", template: `${REPO}/commits/{ref+}/status`, handler: combinedStatus },
];

const CONCLUSIONS = ["action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"] as const;
const RUN_STATES = ["queued", "in_progress", "completed"] as const;

async function createCheckRun(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const body = bodyObject(ctx);
  const name = stringField(body, "name", "CheckRun", true);
  const asked = stringField(body, "head_sha", "CheckRun", true);
  const sha = /^[0-9a-f]{40}$/.test(asked) ? await resolveCommit(ctx.shapes.clonePath(repo), asked) : undefined;
  if (!sha) throw new ForgeHttpError(422, { message: `No commit found for SHA: ${asked}` });
  const at = ctx.now();
  const sameCommit = repo.check_runs.find((run) => run.head_sha === sha);
  const run: ForgeCheckRun = {
    id: nextId(ctx.data),
    head_sha: sha,
    name,
    status: "queued",
    conclusion: null,
    details_url: null,
    external_id: null,
    started_at: at,
    completed_at: null,
    output: { title: null, summary: null, text: null },
    suite_id: sameCommit?.suite_id ?? nextId(ctx.data),
  };
  applyRunFields(run, body, at);
  repo.check_runs.push(run);
  return { status: 201, body: await checkRunJson(ctx, repo, run), headers: { location: `${repoApi(ctx.shapes, repo)}/check-runs/${run.id}` } };
}

async function getCheckRun(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  return { status: 200, body: await checkRunJson(ctx, repo, runOf(ctx, repo)) };
}

async function updateCheckRun(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const run = runOf(ctx, repo);
  const body = bodyObject(ctx);
  const name = stringField(body, "name", "CheckRun");
  if (name === null || name?.trim() === "") throw validationFailed({ resource: "CheckRun", code: "missing_field", field: "name" });
  const changed: ForgeCheckRun = { ...run, output: { ...run.output }, name: name ?? run.name };
  applyRunFields(changed, body, ctx.now());
  Object.assign(run, changed);
  return { status: 200, body: await checkRunJson(ctx, repo, run) };
}

/**
 * The fields a create or update sets on a run, checked as GitHub checks them: a conclusion
 * completes it (at `completed_at`, or now), and `completed` without a conclusion is refused.
 */
function applyRunFields(run: ForgeCheckRun, body: Record<string, unknown>, at: string): void {
  const status = choiceField(body, "status", "CheckRun", RUN_STATES);
  const conclusion = choiceField(body, "conclusion", "CheckRun", CONCLUSIONS);
  const details = stringField(body, "details_url", "CheckRun");
  const external = stringField(body, "external_id", "CheckRun");
  const startedAt = timeField(body, "started_at");
  const completedAt = timeField(body, "completed_at");
  const output = outputOf(body.output);
  if (details !== undefined) run.details_url = details;
  if (external !== undefined) run.external_id = external;
  if (startedAt) run.started_at = startedAt;
  if (output) run.output = output;
  if (conclusion) {
    run.status = "completed";
    run.conclusion = conclusion;
    run.completed_at = completedAt ?? at;
    return;
  }
  if (status === "completed" || completedAt) {
    // GitHub's wording for this refusal is not on record; its rule is the documented one.
    throw validationFailed({ resource: "CheckRun", code: "missing_field", field: "conclusion", message: "conclusion is required when the run is completed" });
  }
  if (status) {
    run.status = status;
    run.conclusion = null;
    run.completed_at = null;
  }
}

function timeField(body: Record<string, unknown>, field: string): string | undefined {
  const value = stringField(body, field, "CheckRun");
  if (value === undefined || value === null) return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw invalidRequest(field, value, "a date-time");
  return new Date(time).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A run's `output`: title and summary required, text optional (annotations and images are not kept). */
function outputOf(value: unknown): ForgeCheckRun["output"] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw invalidRequest("output", value, "an object");
  const given = value as Record<string, unknown>;
  const text = (field: string, required: boolean): string | null => {
    const found = given[field];
    if (found === undefined && required) throw new ForgeHttpError(422, { message: `Invalid request.\n\n"${field}" wasn't supplied.` });
    if (found === undefined || found === null) return null;
    if (typeof found !== "string") throw invalidRequest(`output/${field}`, found, "a string");
    return found;
  };
  return { title: text("title", true), summary: text("summary", true), text: text("text", false) };
}

async function listCheckRuns(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const sha = await commitOfRef(ctx, repo);
  const filter = queryChoice(ctx, "filter", ["latest", "all"] as const, "latest");
  const status = queryChoice(ctx, "status", [...RUN_STATES, ""] as const, "");
  const name = ctx.query.get("check_name");
  const newestFirst = repo.check_runs.filter((run) => run.head_sha === sha).sort((a, b) => b.id - a.id);
  const runs = newestFirst
    .filter((run, i) => filter === "all" || newestFirst.findIndex((other) => other.name === run.name) === i)
    .filter((run) => (name === null || run.name === name) && (status === "" || run.status === status));
  const { page, headers } = paginate(ctx, runs);
  const heads = await branchHeads(ctx.shapes.clonePath(repo));
  return { status: 200, body: { total_count: runs.length, check_runs: page.map((run) => runJson(ctx, repo, run, heads)) }, headers };
}

async function createStatus(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const body = bodyObject(ctx);
  const state = choiceField(body, "state", "Status", ["error", "failure", "pending", "success"] as const);
  if (!state) throw validationFailed({ resource: "Status", code: "missing_field", field: "state" });
  const target = stringField(body, "target_url", "Status") ?? null;
  const description = stringField(body, "description", "Status") ?? null;
  const context = stringField(body, "context", "Status") || "default";
  const sha = /^[0-9a-f]{40}$/.test(ctx.params.sha) ? await resolveCommit(ctx.shapes.clonePath(repo), ctx.params.sha) : undefined;
  if (!sha) throw new ForgeHttpError(422, { message: `No commit found for SHA: ${ctx.params.sha}` });
  const at = ctx.now();
  const status: ForgeStatus = { id: nextId(ctx.data), sha, state, target_url: target, description, context, creator: ctx.user.login, created_at: at, updated_at: at };
  repo.statuses.push(status);
  return { status: 201, body: statusJson(ctx.shapes, repo, status), headers: { location: `${repoApi(ctx.shapes, repo)}/statuses/${sha}` } };
}

async function listStatuses(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const sha = await commitOfRef(ctx, repo);
  const { page, headers } = paginate(ctx, statusesOf(repo, sha));
  return { status: 200, body: page.map((status) => statusJson(ctx.shapes, repo, status)), headers };
}

async function combinedStatus(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const sha = await commitOfRef(ctx, repo);
  const all = statusesOf(repo, sha);
  const latest = all.filter((status, i) => all.findIndex((other) => other.context.toLowerCase() === status.context.toLowerCase()) === i);
  const state = latest.some((s) => s.state === "error" || s.state === "failure") ? "failure" : latest.length === 0 || latest.some((s) => s.state === "pending") ? "pending" : "success";
  const { page, headers } = paginate(ctx, latest);
  const api = repoApi(ctx.shapes, repo);
  const simple = page.map((status) => {
    const { creator: _creator, ...rest } = statusJson(ctx.shapes, repo, status);
    return { ...rest, required: null };
  });
  return {
    status: 200,
    body: { state, statuses: simple, sha, total_count: latest.length, repository: repoJson(ctx.shapes, repo, ctx.user.login), commit_url: `${api}/commits/${sha}`, url: `${api}/commits/${sha}/status` },
    headers,
  };
}

/** A commit's statuses, newest first. */
function statusesOf(repo: ForgeRepo, sha: string): ForgeStatus[] {
  return repo.statuses.filter((status) => status.sha === sha).sort((a, b) => b.id - a.id);
}

/** The commit the route's `{ref}` names; 404 in GitHub's words when none. */
async function commitOfRef(ctx: RouteContext, repo: ForgeRepo): Promise<string> {
  const sha = await resolveCommit(ctx.shapes.clonePath(repo), ctx.params.ref);
  if (!sha) throw notFound(`No commit found for SHA: ${ctx.params.ref}`);
  return sha;
}

function runOf(ctx: RouteContext, repo: ForgeRepo): ForgeCheckRun {
  const id = numberParam(ctx, "check_run_id");
  const run = repo.check_runs.find((candidate) => candidate.id === id);
  if (!run) throw notFound();
  return run;
}

async function checkRunJson(ctx: RouteContext, repo: ForgeRepo, run: ForgeCheckRun): Promise<Record<string, unknown>> {
  return runJson(ctx, repo, run, await branchHeads(ctx.shapes.clonePath(repo)));
}

/** A check run in GitHub's shape; `pull_requests` are the open ones whose head is its commit now. */
function runJson(ctx: RouteContext, repo: ForgeRepo, run: ForgeCheckRun, heads: Map<string, string>): Record<string, unknown> {
  const api = repoApi(ctx.shapes, repo);
  const app = forgeCiApp(ctx.shapes);
  const branch = (ref: string) => ({ ref, sha: heads.get(ref) ?? "", repo: { id: repo.id, url: api, name: repo.name } });
  const pulls = repo.issues.filter((issue) => issue.pull && issue.state === "open" && heads.get(issue.pull.head) === run.head_sha);
  return {
    id: run.id,
    head_sha: run.head_sha,
    node_id: nodeId("CR", run.id),
    external_id: run.external_id,
    url: `${api}/check-runs/${run.id}`,
    html_url: `${repoHtml(ctx.shapes, repo)}/runs/${run.id}`,
    details_url: run.details_url ?? app.external_url,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.started_at,
    completed_at: run.completed_at,
    output: { ...run.output, annotations_count: 0, annotations_url: `${api}/check-runs/${run.id}/annotations` },
    name: run.name,
    check_suite: { id: run.suite_id },
    app,
    pull_requests: pulls.map((issue) => ({ id: issue.id, number: issue.number, url: `${api}/pulls/${issue.number}`, head: branch(issue.pull!.head), base: branch(issue.pull!.base) })),
  };
}

/** The one app the forge's check runs are reported by. */
function forgeCiApp(ctx: ShapeContext) {
  const at = "2026-01-01T00:00:00Z";
  return {
    id: 1,
    slug: "forge-ci",
    node_id: nodeId("A", 1),
    client_id: "Iv1.forgeci",
    owner: userJson(ctx, "forge"),
    name: "Forge CI",
    description: "The sandbox forge's stand-in for a CI app",
    external_url: `${ctx.base}/_forge/apps/forge-ci`,
    html_url: `${ctx.base}/apps/forge-ci`,
    created_at: at,
    updated_at: at,
    permissions: { checks: "write", statuses: "write", metadata: "read" },
    events: ["check_run", "check_suite"],
  };
}

/** A commit status in GitHub's shape. */
function statusJson(ctx: ShapeContext, repo: ForgeRepo, status: ForgeStatus): Record<string, unknown> {
  return {
    url: `${repoApi(ctx, repo)}/statuses/${status.sha}`,
    avatar_url: userJson(ctx, status.creator).avatar_url,
    id: status.id,
    node_id: nodeId("SC", status.id),
    state: status.state,
    description: status.description,
    target_url: status.target_url,
    context: status.context,
    created_at: status.created_at,
    updated_at: status.updated_at,
    creator: userJson(ctx, status.creator),
  };
}
