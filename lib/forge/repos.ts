/**
 * The forge's user and repository endpoints: who the token is (`GET /user`), a user by
 * login, repository metadata, and the repository's labels.
 */
import { ensureLabel, findLabel, userByLogin } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { bodyObject, mustHavePush, notFound, paginate, repoOf, stringField, validationFailed } from "./http.ts";
import { labelJson } from "./shapes.ts";
import { privateUserJson, profileJson, repoJson } from "./repo-shapes.ts";
import { canPush } from "./state.ts";

const REPO = "/repos/{owner}/{repo}";

/** The user and repository routes. */
export const repoRoutes: Route[] = [
  { method: "GET", template: "/user", handler: (ctx) => ({ status: 200, body: privateUserJson(ctx.shapes, ctx.user.login) }) },
  { method: "GET", template: "/users/{login}", handler: getUser },
  { method: "GET", template: REPO, handler: (ctx) => ({ status: 200, body: repoJson(ctx.shapes, repoOf(ctx), ctx.user.login) }) },
  { method: "GET", template: `${REPO}/labels`, handler: listLabels },
  { method: "POST", template: `${REPO}/labels`, writes: true, handler: createLabel },
  { method: "GET", template: `${REPO}/labels/{name}`, handler: getLabel },
];

function getUser(ctx: RouteContext): Reply {
  const user = userByLogin(ctx.data, ctx.params.login);
  if (!user) throw notFound();
  return { status: 200, body: profileJson(ctx.shapes, user.login) };
}

function listLabels(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const { page, headers } = paginate(ctx, [...repo.labels].sort((a, b) => a.id - b.id));
  return { status: 200, body: page.map((label) => labelJson(ctx.shapes, repo, label)), headers };
}

function getLabel(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const label = findLabel(repo, ctx.params.name);
  if (!label) throw notFound();
  return { status: 200, body: labelJson(ctx.shapes, repo, label) };
}

function createLabel(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const body = bodyObject(ctx);
  const name = stringField(body, "name", "Label", true);
  const color = stringField(body, "color", "Label") ?? "ededed";
  const description = stringField(body, "description", "Label") ?? null;
  if (!/^#?[0-9a-fA-F]{6}$/.test(color)) throw validationFailed({ resource: "Label", code: "invalid", field: "color" });
  if (findLabel(repo, name)) throw validationFailed({ resource: "Label", code: "already_exists", field: "name" });
  const label = ensureLabel(ctx.data, repo, name, ctx.now(), color.replace(/^#/, "").toLowerCase(), description);
  const made = labelJson(ctx.shapes, repo, label);
  // As GitHub answers a creation: where the new label is read.
  return { status: 201, body: made, headers: { location: String(made.url) } };
}
