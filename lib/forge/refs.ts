/**
 * The forge's git references endpoints, answered as GitHub answers them, on the bare
 * repository itself (references live there, not in the forge's state):
 *
 * - `GET /repos/{o}/{r}/git/ref/<ref>`: one reference, any of them (`heads/main`,
 *   `tags/v1`, `robot-army/claims/12`); 404 when there is none of that name.
 * - `GET /repos/{o}/{r}/git/matching-refs/<ref>`: every reference whose full name starts
 *   with `refs/<ref>` (GitHub's prefix: `heads/feat` matches `heads/feature-a`), paginated.
 * - `POST /repos/{o}/{r}/git/refs` {ref, sha}: a new reference, named in full
 *   (`refs/robot-army/claims/12`), at a commit of the repository: 201 with `Location`;
 *   422 "Reference already exists", "Object does not exist", or a name git refuses.
 * - `PATCH /repos/{o}/{r}/git/refs/<ref>` {sha, force}: moved by fast-forward only unless
 *   forced, else 422 "Update is not a fast forward".
 * - `DELETE /repos/{o}/{r}/git/refs/<ref>`: 204; 422 "Reference does not exist", 422
 *   "Cannot delete the default branch". Deleting an open pull request's head branch closes
 *   that pull request, as on GitHub; every pull request's `refs/pull/<n>/head` stays
 *   (lib/forge/pulls.ts), so its commits are still on the remote, and no route here writes it.
 *
 * Every write is a compare-and-swap in git (`git update-ref <ref> <new> <old>`, an empty
 * old value for "must not exist yet"): of two writers racing for one reference (two creates
 * of it, two fast-forwards from one commit, or a push beside them) exactly one wins and the
 * other gets GitHub's 422. Creating and moving run beside the forge's other writes rather
 * than queued behind them (`gitOnly`): git's lock on the reference is what keeps them apart.
 *
 * The ref in a URL may come encoded (`robot-army%2Fclaims%2F12`, as Octokit sends it) or not,
 * and with `refs/` in front or not. Messages are GitHub's where its answers are on record;
 * where they are not, the closest one GitHub is known to give, and a comment says so.
 */
import { canPush, setIssueState } from "./state.ts";
import type { ForgeRepo } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError, bodyObject, invalidRequest, mustHavePush, notFound, paginate, repoOf, requiredString } from "./http.ts";
import { createRef as createGitRef, deleteRef as deleteGitRef, isAncestor, listRefs, moveRef, objectType, readRef, validRefName } from "./git.ts";
import type { GitRef } from "./git.ts";
import { freezeHeads } from "./pulls.ts";
import { nodeId, repoApi } from "./repo-shapes.ts";

const REPO = "/repos/{owner}/{repo}";

/** The git reference routes. */
export const refRoutes: Route[] = [
  { method: "GET", template: `${REPO}/git/ref/{ref+}`, handler: getRef },
  { method: "GET", template: `${REPO}/git/matching-refs/{ref+}`, handler: matchingRefs },
  { method: "POST", template: `${REPO}/git/refs`, writes: true, gitOnly: true, handler: createRef },
  { method: "PATCH", template: `${REPO}/git/refs/{ref+}`, writes: true, gitOnly: true, handler: updateRef },
  // Not gitOnly: deleting a branch may close pull requests, a change to the forge's state.
  { method: "DELETE", template: `${REPO}/git/refs/{ref+}`, writes: true, handler: deleteRef },
];

async function getRef(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const found = await readRef(ctx.shapes.clonePath(repo), fullName(ctx.params.ref));
  if (!found) throw notFound();
  return { status: 200, body: refJson(ctx, repo, found) };
}

async function matchingRefs(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const prefix = fullName(ctx.params.ref);
  const matching = (await listRefs(ctx.shapes.clonePath(repo))).filter((found) => found.ref.startsWith(prefix));
  const { page, headers } = paginate(ctx, matching);
  return { status: 200, body: page.map((found) => refJson(ctx, repo, found)), headers };
}

async function createRef(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const body = bodyObject(ctx);
  const ref = requiredString(body, "ref");
  const sha = requiredString(body, "sha");
  const path = ctx.shapes.clonePath(repo);
  await refuseName(path, ref);
  if ((await objectType(path, sha)) !== "commit") throw objectMissing();
  if (await createGitRef(path, ref, sha)) {
    const made = refJson(ctx, repo, { ref, sha, type: "commit" });
    return { status: 201, body: made, headers: { location: made.url } };
  }
  // Lost: the reference is there, made before or by a writer racing this one, unless one
  // above or below it in the hierarchy is in git's way (`refs/x` blocks `refs/x/y`).
  if (!(await readRef(path, ref)) && (await listRefs(path)).some((found) => found.ref.startsWith(`${ref}/`) || ref.startsWith(`${found.ref}/`))) throw updateFailed();
  throw new ForgeHttpError(422, { message: "Reference already exists" });
}

async function updateRef(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const body = bodyObject(ctx);
  const sha = requiredString(body, "sha");
  const force = body.force ?? false;
  if (typeof force !== "boolean") throw invalidRequest("force", body.force, "a boolean");
  const ref = fullName(ctx.params.ref);
  if (isPullRef(ref)) throw updateFailed();
  const path = ctx.shapes.clonePath(repo);
  let current = await readRef(path, ref);
  if (!current) throw referenceMissing();
  if ((await objectType(path, sha)) !== "commit") throw objectMissing();
  for (let attempt = 1; ; attempt++) {
    if (!force && !(await isAncestor(path, current.sha, sha))) throw notFastForward();
    if (await moveRef(path, ref, sha, current.sha)) return { status: 200, body: refJson(ctx, repo, { ref, sha, type: "commit" }) };
    // Another writer moved it (or holds git's lock on it) since it was read. Unforced, this
    // update was asked against a head that is no longer the head: GitHub's answer is the
    // fast-forward refusal. Forced, it is read again and tried again.
    const now: GitRef | undefined = await readRef(path, ref);
    if (!now) throw referenceMissing();
    if (!force) throw notFastForward();
    if (attempt === 5) throw updateFailed();
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    current = now;
  }
}

async function deleteRef(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const ref = fullName(ctx.params.ref);
  const path = ctx.shapes.clonePath(repo);
  const current = await readRef(path, ref);
  if (!current) throw referenceMissing();
  if (isPullRef(ref)) throw updateFailed();
  const branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : undefined;
  if (branch === repo.default_branch) throw new ForgeHttpError(422, { message: "Cannot delete the default branch" });
  const closing = branch === undefined ? [] : repo.issues.filter((issue) => issue.state === "open" && issue.pull?.head === branch);
  for (const issue of closing) await freezeHeads(ctx, repo, issue);
  if (!(await deleteGitRef(path, ref, current.sha))) throw updateFailed();
  const at = ctx.now();
  for (const issue of closing) setIssueState(ctx.data, issue, "closed", ctx.user.login, at);
  return { status: 204 };
}

/**
 * Refuses a name GitHub would not create. The two messages are GitHub's own answers on
 * record (octokit/octokit.rb#675 and others); GitHub's wording for a name with enough
 * slashes that does not start with `refs/` is not, so it gets the invalid-name one.
 */
async function refuseName(path: string, ref: string): Promise<void> {
  if (ref.split("/").length < 3) throw new ForgeHttpError(422, { message: "Reference name must contain at least three slash-separated components." });
  if (!ref.startsWith("refs/") || !(await validRefName(path, ref))) throw new ForgeHttpError(422, { message: `${ref} is not a valid ref name.` });
  if (isPullRef(ref)) throw updateFailed();
}

/** The full name a ref in a URL stands for: `heads/main` and `refs/heads/main` are both `refs/heads/main`. */
function fullName(ref: string): string {
  return ref.startsWith("refs/") ? ref : `refs/${ref}`;
}

/** GitHub keeps `refs/pull/*` itself (pulls.ts writes them here): no route may make, move or delete one. */
function isPullRef(ref: string): boolean {
  return ref.startsWith("refs/pull/");
}

/** A reference in GitHub's shape; the object's `url` is where the git database serves it (`commits/<sha>`, `tags/<sha>`). */
function refJson(ctx: RouteContext, repo: ForgeRepo, found: GitRef) {
  const api = `${repoApi(ctx.shapes, repo)}/git`;
  const url = `${api}/${found.ref.split("/").map(encodeURIComponent).join("/")}`;
  return { ref: found.ref, node_id: nodeId("REF", repo.id, found.ref), url, object: { sha: found.sha, type: found.type, url: `${api}/${found.type}s/${found.sha}` } };
}

function referenceMissing(): ForgeHttpError {
  return new ForgeHttpError(422, { message: "Reference does not exist" });
}

function objectMissing(): ForgeHttpError {
  return new ForgeHttpError(422, { message: "Object does not exist" });
}

function notFastForward(): ForgeHttpError {
  return new ForgeHttpError(422, { message: "Update is not a fast forward" });
}

/**
 * GitHub's catch-all for a reference write git refused (github/rest-api-description#4887:
 * a ref that another blocks, as `refs/x` blocks `refs/x/y`). Its wording for a write to
 * `refs/pull/*` is not on record; this is the closest.
 */
function updateFailed(): ForgeHttpError {
  return new ForgeHttpError(422, { message: "Reference update failed" });
}
