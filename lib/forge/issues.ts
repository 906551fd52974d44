/**
 * The forge's issue endpoints: list (with `labels`, `state`, `since`, `creator`, `sort`,
 * `direction` and pagination), the user's issues across repositories (`/user/issues`), get, create, update, labels add/replace/remove, the
 * issue's events (who added and removed each label, who renamed it), comments list/create, and the
 * repository's comments in one list (`/issues/comments`). Pull
 * requests are issues here too, as on GitHub. A body changed by PATCH keeps its revision
 * and editor, which the GraphQL endpoint (graphql.ts) reports.
 */
import type { ForgeIssue, ForgeRepo } from "./state.ts";
import { addIssue, canPush, editBody, ensureLabel, findIssue, findLabel, nextId, renameIssue, setIssueState, setLabels } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import {
  bodyObject,
  choiceField,
  commentOrder,
  labelNames,
  mustHavePush,
  notFound,
  numberParam,
  paginate,
  queryChoice,
  refuseTooLong,
  querySince,
  repoOf,
  stringField,
  validationFailed,
} from "./http.ts";
import { repoJson } from "./repo-shapes.ts";
import { commentJson, issueEventJson, issueJson, labelJson } from "./shapes.ts";

const ISSUES = "/repos/{owner}/{repo}/issues";
const ISSUE = `${ISSUES}/{number}`;

/** The issue routes. */
export const issueRoutes: Route[] = [
  { method: "GET", template: ISSUES, handler: listIssues },
  { method: "GET", template: "/user/issues", handler: listOwnIssues },
  { method: "POST", template: ISSUES, writes: true, handler: createIssue },
  // Before `{number}`, which `comments` would otherwise be taken for.
  { method: "GET", template: `${ISSUES}/comments`, handler: listRepoComments },
  { method: "GET", template: ISSUE, handler: getIssue },
  { method: "PATCH", template: ISSUE, writes: true, handler: updateIssue },
  { method: "GET", template: `${ISSUE}/labels`, handler: listIssueLabels },
  { method: "POST", template: `${ISSUE}/labels`, writes: true, handler: (ctx) => changeLabels(ctx, "add") },
  { method: "PUT", template: `${ISSUE}/labels`, writes: true, handler: (ctx) => changeLabels(ctx, "replace") },
  { method: "DELETE", template: `${ISSUE}/labels/{name}`, writes: true, handler: removeLabel },
  { method: "GET", template: `${ISSUE}/events`, handler: listEvents },
  { method: "GET", template: `${ISSUE}/comments`, handler: listComments },
  { method: "POST", template: `${ISSUE}/comments`, writes: true, handler: createComment },
];

function listIssues(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const creator = ctx.query.get("creator")?.toLowerCase();
  const assignee = ctx.query.get("assignee");
  const milestone = ctx.query.get("milestone");
  const mentioned = ctx.query.get("mentioned")?.toLowerCase();
  // The forge keeps no assignees and no milestones: `none` keeps every issue, `*` or a name (a number) none, as GitHub would here.
  const none = (value: string | null) => value === null || value === "none";
  // A mention is `@login` in the issue's body or one of its comments, as GitHub reads one.
  const mentions = (issue: ForgeIssue) => [issue.body ?? "", ...repo.comments.filter((c) => c.issue === issue.number).map((c) => c.body)]
    .some((text) => [...text.matchAll(/(?:^|[^\w@/-])@([A-Za-z0-9-]+)/g)].some((m) => m[1].toLowerCase() === mentioned));
  const matching = listed(ctx, [repo], (issue) =>
    (creator === undefined || issue.user.toLowerCase() === creator) && none(assignee) && none(milestone) && (mentioned === undefined || mentions(issue)));
  const { page, headers } = paginate(ctx, matching);
  return { status: 200, body: page.map(({ issue }) => issueJson(ctx.shapes, repo, issue)), headers };
}

/**
 * `GET /user/issues`: issues across the repositories the user owns or may push to, as
 * GitHub lists them, each with its `repository`. `filter=created` is what the user opened;
 * `all` every issue there; `assigned` (the default), `mentioned` and `subscribed` find none,
 * as the forge keeps no assignees, mentions or subscriptions.
 */
function listOwnIssues(ctx: RouteContext): Reply {
  const filter = queryChoice(ctx, "filter", ["assigned", "created", "mentioned", "subscribed", "repos", "all"] as const, "assigned");
  const login = ctx.user.login.toLowerCase();
  const repos = ctx.data.repos.filter((repo) => canPush(repo, ctx.user.login));
  const matching = listed(ctx, repos, (issue) => filter === "all" || filter === "repos" || (filter === "created" && issue.user.toLowerCase() === login));
  const { page, headers } = paginate(ctx, matching);
  return { status: 200, body: page.map(({ repo, issue }) => ({ ...issueJson(ctx.shapes, repo, issue), repository: repoJson(ctx.shapes, repo, ctx.user.login) })), headers };
}

/** The issues of `repos` a list's `state`, `labels`, `since`, `sort` and `direction` select, and `keep` keeps, in its order. */
function listed(ctx: RouteContext, repos: ForgeRepo[], keep: (issue: ForgeIssue) => boolean): Array<{ repo: ForgeRepo; issue: ForgeIssue }> {
  const state = queryChoice(ctx, "state", ["open", "closed", "all"] as const, "open");
  const sort = queryChoice(ctx, "sort", ["created", "updated", "comments"] as const, "created");
  const direction = queryChoice(ctx, "direction", ["asc", "desc"] as const, "desc");
  const since = querySince(ctx);
  const labels = (ctx.query.get("labels") ?? "").split(",").map((name) => name.trim().toLowerCase()).filter(Boolean);
  const comments = (repo: ForgeRepo, issue: ForgeIssue) => repo.comments.filter((c) => c.issue === issue.number).length;
  const key = ({ repo, issue }: { repo: ForgeRepo; issue: ForgeIssue }) =>
    sort === "comments" ? comments(repo, issue) : Date.parse(sort === "created" ? issue.created_at : issue.updated_at);
  const sign = direction === "asc" ? 1 : -1;
  return repos
    .flatMap((repo) => repo.issues.map((issue) => ({ repo, issue })))
    .filter(({ issue }) => state === "all" || issue.state === state)
    .filter(({ issue }) => labels.every((wanted) => issue.labels.some((name) => name.toLowerCase() === wanted)))
    .filter(({ issue }) => since === undefined || Date.parse(issue.updated_at) >= since)
    .filter(({ issue }) => keep(issue))
    .sort((a, b) => sign * (key(a) - key(b) || (a.repo === b.repo ? a.issue.number - b.issue.number : a.issue.id - b.issue.id)));
}

function getIssue(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  return { status: 200, body: issueJson(ctx.shapes, repo, issueOf(ctx, repo)) };
}

function createIssue(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const body = bodyObject(ctx);
  const title = stringField(body, "title", "Issue", true);
  const text = stringField(body, "body", "Issue");
  refuseTooLong(text, "Issue");
  // As on GitHub, labels from someone without push access are dropped without a word.
  const labels = body.labels !== undefined && canPush(repo, ctx.user.login) ? labelNames(body.labels) : [];
  const issue = addIssue(ctx.data, repo, { title, body: text ?? null, user: ctx.user.login, labels }, ctx.now());
  return { status: 201, body: issueJson(ctx.shapes, repo, issue), headers: { location: `${ctx.shapes.base}/repos/${repo.owner}/${repo.name}/issues/${issue.number}` } };
}

function updateIssue(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  const body = bodyObject(ctx);
  const pusher = canPush(repo, ctx.user.login);
  if (!pusher && issue.user.toLowerCase() !== ctx.user.login.toLowerCase()) throw mustHavePush();
  const title = stringField(body, "title", "Issue");
  const text = stringField(body, "body", "Issue");
  refuseTooLong(text, "Issue");
  const state = choiceField(body, "state", "Issue", ["open", "closed"] as const);
  const reason = choiceField(body, "state_reason", "Issue", ["completed", "not_planned", "reopened"] as const);
  const labels = body.labels !== undefined && body.labels !== null ? labelNames(body.labels) : undefined;
  if (title === null) throw validationFailed({ resource: "Issue", code: "missing_field", field: "title" });
  const before = JSON.stringify(issue);
  const at = ctx.now();
  if (title !== undefined) renameIssue(ctx.data, issue, title, ctx.user.login, at);
  if (text !== undefined) editBody(ctx.data, issue, text, ctx.user.login, at);
  if (labels !== undefined && pusher) setLabels(ctx.data, issue, labels.map((name) => ensureLabel(ctx.data, repo, name, at).name), ctx.user.login, at);
  if (state !== undefined) setIssueState(ctx.data, issue, state, ctx.user.login, at, state === "closed" ? (reason ?? "completed") : undefined);
  else if (reason !== undefined && issue.state === "closed" && reason !== "reopened") issue.state_reason = reason;
  if (JSON.stringify(issue) !== before) issue.updated_at = at;
  return { status: 200, body: issueJson(ctx.shapes, repo, issue) };
}

function changeLabels(ctx: RouteContext, how: "add" | "replace"): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const given = Array.isArray(ctx.body) ? ctx.body : bodyObject(ctx).labels;
  if (given === undefined) throw validationFailed({ resource: "Label", code: "missing_field", field: "labels" });
  const at = ctx.now();
  const names = labelNames(typeof given === "string" ? [given] : given).map((name) => ensureLabel(ctx.data, repo, name, at).name);
  if (setLabels(ctx.data, issue, [...(how === "add" ? issue.labels : []), ...names], ctx.user.login, at)) issue.updated_at = at;
  return issueLabels(ctx, issue, repo);
}

function removeLabel(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const wanted = ctx.params.name.toLowerCase();
  if (!issue.labels.some((name) => name.toLowerCase() === wanted)) throw notFound("Label does not exist");
  const at = ctx.now();
  setLabels(ctx.data, issue, issue.labels.filter((name) => name.toLowerCase() !== wanted), ctx.user.login, at);
  issue.updated_at = at;
  return issueLabels(ctx, issue, repo);
}

function listIssueLabels(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  return issueLabels(ctx, issueOf(ctx, repo), repo);
}

function issueLabels(ctx: RouteContext, issue: ForgeIssue, repo: ForgeRepo): Reply {
  const labels = issue.labels.flatMap((name) => findLabel(repo, name) ?? []);
  return { status: 200, body: labels.map((label) => labelJson(ctx.shapes, repo, label)) };
}

/** An issue's events, oldest first and paginated, as GitHub lists them (only label and rename events are kept here). */
function listEvents(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  const { page, headers } = paginate(ctx, issue.events ?? []);
  return { status: 200, body: page.map((event) => issueEventJson(ctx.shapes, repo, event)), headers };
}

function listComments(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  const since = querySince(ctx);
  const comments = repo.comments
    .filter((comment) => comment.issue === issue.number)
    .filter((comment) => since === undefined || Date.parse(comment.updated_at) >= since)
    .sort((a, b) => a.id - b.id);
  const { page, headers } = paginate(ctx, comments);
  return { status: 200, body: page.map((comment) => commentJson(ctx.shapes, repo, comment)), headers };
}

/** Every issue and pull request comment of the repository, in GitHub's order (`commentOrder`), paginated. */
function listRepoComments(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const { page, headers } = paginate(ctx, commentOrder(ctx, repo.comments));
  return { status: 200, body: page.map((comment) => commentJson(ctx.shapes, repo, comment)), headers };
}

function createComment(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = issueOf(ctx, repo);
  const text = stringField(bodyObject(ctx), "body", "IssueComment", true);
  refuseTooLong(text, "IssueComment");
  const at = ctx.now();
  const comment = { id: nextId(ctx.data), issue: issue.number, user: ctx.user.login, body: text, created_at: at, updated_at: at };
  repo.comments.push(comment);
  issue.updated_at = at;
  return { status: 201, body: commentJson(ctx.shapes, repo, comment), headers: { location: `${ctx.shapes.base}/repos/${repo.owner}/${repo.name}/issues/comments/${comment.id}` } };
}

/** The issue (or pull request) the route names. */
export function issueOf(ctx: RouteContext, repo: ForgeRepo): ForgeIssue {
  const issue = findIssue(repo, numberParam(ctx));
  if (!issue) throw notFound();
  return issue;
}
