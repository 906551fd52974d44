/**
 * The forge's git commit endpoints, answered as GitHub answers them:
 *
 * - `POST /repos/{o}/{r}/git/commits` {message, tree, parents?, author?, committer?}: a
 *   commit object written with `git commit-tree` in the bare repository, moving no reference
 *   (refs.ts does that): 201 with `Location`; 422 "Tree SHA does not exist", "Parent SHA does
 *   not exist or is not a commit object". The author is the token's user and now unless
 *   given; the committer is the author unless given, as on GitHub. The message is kept as
 *   given, byte for byte. The empty tree (`4b825dc…`) is a tree like any other.
 * - `GET /repos/{o}/{r}/git/commits/<sha>`: any commit of the repository; 404 otherwise.
 *
 * Both answer GitHub's git commit shape, with the `verification` of an unsigned commit: the
 * forge signs nothing and checks no signature.
 */
import { canPush } from "./state.ts";
import type { ForgeRepo } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError, bodyObject, invalidRequest, mustHavePush, notFound, repoOf, requiredString } from "./http.ts";
import { objectType, readCommit, writeCommit } from "./git.ts";
import type { GitCommit, GitIdentity } from "./git.ts";
import { nodeId, repoApi } from "./repo-shapes.ts";
import { isoSeconds } from "../clock.ts";

const REPO = "/repos/{owner}/{repo}";

/** The git commit routes. */
export const commitRoutes: Route[] = [
  { method: "POST", template: `${REPO}/git/commits`, writes: true, gitOnly: true, handler: createCommit },
  { method: "GET", template: `${REPO}/git/commits/{commit_sha}`, handler: getCommit },
];

async function createCommit(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const body = bodyObject(ctx);
  const message = requiredString(body, "message");
  const tree = requiredString(body, "tree");
  const parents = parentsOf(body.parents);
  const now = ctx.now();
  const author = identityOf(body, "author", { name: ctx.user.login, email: `${ctx.user.login}@users.noreply.forge.invalid`, date: now }, now);
  const committer = identityOf(body, "committer", author, now);
  const path = ctx.shapes.clonePath(repo);
  if ((await objectType(path, tree)) !== "tree") throw new ForgeHttpError(422, { message: "Tree SHA does not exist" });
  for (const parent of parents) {
    if ((await objectType(path, parent)) !== "commit") throw new ForgeHttpError(422, { message: "Parent SHA does not exist or is not a commit object" });
  }
  const sha = await writeCommit(path, { tree, parents, message, author, committer });
  const made = commitJson(ctx, repo, (await readCommit(path, sha))!);
  return { status: 201, body: made, headers: { location: made.url } };
}

async function getCommit(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const commit = await readCommit(ctx.shapes.clonePath(repo), ctx.params.commit_sha);
  if (!commit) throw notFound();
  return { status: 200, body: commitJson(ctx, repo, commit) };
}

/** The `parents` field: none when absent (a root commit), else full SHAs, worded as GitHub refuses a short or malformed one. */
function parentsOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidRequest("parents", value, "an array");
  return value.map((parent) => {
    if (typeof parent !== "string") throw invalidRequest("parents", value, "an array of strings");
    if (!/^[0-9a-f]{40}$/.test(parent)) throw new ForgeHttpError(422, { message: "Each SHA in the 'parents' parameter must be exactly 40 characters and contain only [0-9a-f]." });
    return parent;
  });
}

/** An `author` or `committer` object ({name, email, date?}), or `fallback` when the body has none; a missing date is now. */
function identityOf(body: Record<string, unknown>, field: "author" | "committer", fallback: GitIdentity, now: string): GitIdentity {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "object" || Array.isArray(value)) throw invalidRequest(field, value, "an object");
  const given = value as Record<string, unknown>;
  const name = requiredString(given, "name");
  const email = requiredString(given, "email");
  if (given.date === undefined || given.date === null) return { name, email, date: now };
  const time = typeof given.date === "string" ? Date.parse(given.date) : Number.NaN;
  if (Number.isNaN(time)) throw invalidRequest(`${field}/date`, given.date, "a date-time");
  return { name, email, date: isoSeconds(new Date(time)) };
}

/** A commit in GitHub's git commit shape. */
function commitJson(ctx: RouteContext, repo: ForgeRepo, commit: GitCommit) {
  const api = `${repoApi(ctx.shapes, repo)}/git`;
  const html = `${ctx.shapes.base}/${repo.owner}/${repo.name}/commit`;
  return {
    sha: commit.sha,
    node_id: nodeId("C", repo.id, commit.sha),
    url: `${api}/commits/${commit.sha}`,
    html_url: `${html}/${commit.sha}`,
    author: commit.author,
    committer: commit.committer,
    tree: { sha: commit.tree, url: `${api}/trees/${commit.tree}` },
    message: commit.message,
    parents: commit.parents.map((sha) => ({ sha, url: `${api}/commits/${sha}`, html_url: `${html}/${sha}` })),
    verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
  };
}
