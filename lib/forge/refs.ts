/**
 * The forge's git references endpoints, the part an owner's "Delete branch" uses: a
 * reference read (`GET /repos/{o}/{r}/git/ref/heads/<branch>`) and a branch deleted
 * (`DELETE /repos/{o}/{r}/git/refs/heads/<branch>`), answered as GitHub answers them: 204,
 * 422 "Reference does not exist", 422 "Cannot delete the default branch". Deleting an
 * open pull request's head branch closes that pull request, as on GitHub; every pull
 * request's `refs/pull/<n>/head` stays (lib/forge/pulls.ts), so its commits are still on
 * the remote. The ref may come encoded (`heads%2Frobot-army%2Fissue-2`, as Octokit sends
 * it) or not.
 */
import { bareRepoPath, canPush, setIssueState } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError, mustHavePush, notFound, repoOf } from "./http.ts";
import { branchHead, deleteBranch } from "./git.ts";
import { freezeHeads } from "./pulls.ts";
import { nodeId } from "./repo-shapes.ts";

const REPO = "/repos/{owner}/{repo}";

/** The git reference routes. */
export const refRoutes: Route[] = [
  { method: "GET", template: `${REPO}/git/ref/{ref+}`, handler: getRef },
  { method: "DELETE", template: `${REPO}/git/refs/{ref+}`, writes: true, handler: deleteRef },
];

async function getRef(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const branch = branchOf(ctx.params.ref);
  const sha = branch === undefined ? undefined : await branchHead(bareRepoPath(ctx.dir, repo.owner, repo.name), branch);
  if (!sha) throw notFound();
  const api = `${ctx.shapes.base}/repos/${repo.owner}/${repo.name}/git`;
  return {
    status: 200,
    body: { ref: `refs/heads/${branch}`, node_id: nodeId("REF", repo.id, `refs/heads/${branch}`), url: `${api}/refs/heads/${branch}`, object: { sha, type: "commit", url: `${api}/commits/${sha}` } },
  };
}

async function deleteRef(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const branch = branchOf(ctx.params.ref);
  const path = bareRepoPath(ctx.dir, repo.owner, repo.name);
  const sha = branch === undefined ? undefined : await branchHead(path, branch);
  if (branch === undefined || !sha) throw new ForgeHttpError(422, { message: "Reference does not exist" });
  if (branch === repo.default_branch) throw new ForgeHttpError(422, { message: "Cannot delete the default branch" });
  const closing = repo.issues.filter((issue) => issue.state === "open" && issue.pull?.head === branch);
  for (const issue of closing) await freezeHeads(ctx, repo, issue);
  if (!(await deleteBranch(path, branch, sha))) throw new ForgeHttpError(422, { message: "Reference cannot be updated" });
  const at = ctx.now();
  for (const issue of closing) setIssueState(issue, "closed", ctx.user.login, at);
  return { status: 204 };
}

/** The branch a ref such as `heads/robot-army/issue-2` (or `refs/heads/...`) names; undefined for any other ref. */
function branchOf(ref: string): string | undefined {
  const match = /^(?:refs\/)?heads\/(.+)$/.exec(ref);
  return match ? match[1] : undefined;
}
