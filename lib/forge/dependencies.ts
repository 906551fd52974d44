/**
 * The forge's issue dependencies endpoints (GitHub's "blocked by" and "blocking"), answered
 * as GitHub answers them:
 *
 * - `GET /repos/{o}/{r}/issues/{n}/dependencies/blocked_by`: the issues blocking issue `n`,
 *   oldest dependency first, paginated, each in the issue shape.
 * - `POST` the same path {issue_id}: issue `n` is now blocked by the issue of that id (its
 *   `id`, not its number; any repository of the forge the caller can see): 201 with the
 *   blocking issue. 422 for an issue blocking itself or a dependency already there.
 * - `DELETE .../dependencies/blocked_by/{issue_id}`: that dependency gone: 200 with the
 *   issue that blocked it; 404 when there was none.
 * - `GET .../dependencies/blocking`: the issues `n` blocks.
 *
 * Adding or removing one needs push access to the blocked issue's repository, and updates
 * both issues (each one's `issue_dependencies_summary` changed), so a list asked `since` a
 * time sees them moved. Closing or reopening a blocking issue updates the issues it blocks
 * (state.ts `setIssueState`).
 */
import type { ForgeIssue, ForgeRepo } from "./state.ts";
import { canPush, issueById } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError, bodyObject, invalidRequest, mustHavePush, notFound, numberParam, paginate, repoOf, validationFailed } from "./http.ts";
import { issueOf } from "./issues.ts";
import { issueJson } from "./shapes.ts";

const DEPENDENCIES = "/repos/{owner}/{repo}/issues/{number}/dependencies";

/** The issue dependencies routes. */
export const dependencyRoutes: Route[] = [
  { method: "GET", template: `${DEPENDENCIES}/blocked_by`, handler: (ctx) => listRelated(ctx, "blocked_by") },
  { method: "POST", template: `${DEPENDENCIES}/blocked_by`, writes: true, handler: addBlocker },
  { method: "DELETE", template: `${DEPENDENCIES}/blocked_by/{issue_id}`, writes: true, handler: removeBlocker },
  { method: "GET", template: `${DEPENDENCIES}/blocking`, handler: (ctx) => listRelated(ctx, "blocking") },
];

/** The issues blocking the route's issue, or those it blocks, oldest dependency first. */
function listRelated(ctx: RouteContext, which: "blocked_by" | "blocking"): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  const related =
    which === "blocked_by"
      ? repo.dependencies.filter((d) => d.blocked === issue.id).flatMap((d) => visible(ctx, d.blocking) ?? [])
      : ctx.data.repos.flatMap((r) => r.dependencies.filter((d) => d.blocking === issue.id).map((d) => ({ at: d.created_at, found: visible(ctx, d.blocked) })))
        .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
        .flatMap(({ found }) => found ?? []);
  const { page, headers } = paginate(ctx, related);
  return { status: 200, body: page.map((found) => issueJson(ctx.shapes, found.repo, found.issue)), headers };
}

function addBlocker(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const body = bodyObject(ctx);
  if (body.issue_id === undefined) throw new ForgeHttpError(422, { message: `Invalid request.\n\n"issue_id" wasn't supplied.` });
  if (typeof body.issue_id !== "number" || !Number.isInteger(body.issue_id)) throw invalidRequest("issue_id", body.issue_id, "an integer");
  const blocking = visible(ctx, body.issue_id);
  if (!blocking) throw notFound();
  // GitHub's wording for these two refusals is not on record; the fields are its request's.
  if (blocking.issue.id === issue.id) throw validationFailed({ resource: "IssueDependency", code: "custom", field: "issue_id", message: "An issue cannot be blocked by itself" });
  if (repo.dependencies.some((d) => d.blocked === issue.id && d.blocking === blocking.issue.id)) {
    throw validationFailed({ resource: "IssueDependency", code: "already_exists", field: "issue_id", message: "The issue is already blocked by this issue" });
  }
  const at = ctx.now();
  repo.dependencies.push({ blocked: issue.id, blocking: blocking.issue.id, created_at: at });
  touch([issue, blocking.issue], at);
  const location = `${ctx.shapes.base}/repos/${repo.owner}/${repo.name}/issues/${issue.number}/dependencies/blocked_by`;
  return { status: 201, body: issueJson(ctx.shapes, blocking.repo, blocking.issue), headers: { location } };
}

function removeBlocker(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const blockingId = numberParam(ctx, "issue_id");
  const index = repo.dependencies.findIndex((d) => d.blocked === issue.id && d.blocking === blockingId);
  const blocking = issueById(ctx.data, blockingId);
  if (index < 0 || !blocking) throw notFound();
  repo.dependencies.splice(index, 1);
  touch([issue, blocking.issue], ctx.now());
  return { status: 200, body: issueJson(ctx.shapes, blocking.repo, blocking.issue) };
}

/** The issue of that id, when the caller may see its repository (a private one only with push access). */
function visible(ctx: RouteContext, id: number): { repo: ForgeRepo; issue: ForgeIssue } | undefined {
  const found = issueById(ctx.data, id);
  return found && (!found.repo.private || canPush(found.repo, ctx.user.login)) ? found : undefined;
}

function touch(issues: ForgeIssue[], at: string): void {
  for (const issue of issues) issue.updated_at = at;
}
