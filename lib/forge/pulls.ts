/**
 * The forge's pull request endpoints: list (by `state`, `head`, `base`), get, create
 * (the head branch must exist in the bare repository), update, and merge, which merges
 * for real in the bare repository and closes the issues the body names with
 * `Closes #N` / `Fixes #N` / `Resolves #N` when the base is the default branch.
 *
 * Each pull request has its `refs/pull/<n>/head` in the bare repository, as on GitHub:
 * written when it opens, moved to its head branch's tip whenever the forge sees that
 * branch moved while it is open (any read of it or of the list, its close, its merge),
 * and kept once it is merged or closed and after its head branch is deleted, so a
 * squash-merged branch's commits stay fetchable from the remote.
 *
 * As on GitHub, `mergeable` is computed by a background job: it is `null` (state
 * `unknown`) in the answer that opens a pull request and on the first read after it opens
 * or after its head or base moves, and known on a later read.
 */
import type { ForgeIssue, ForgeRepo } from "./state.ts";
import { addIssue, bareRepoPath, canPush, findIssue, setIssueState } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError, bodyObject, choiceField, mustHavePush, notFound, numberParam, paginate, queryChoice, repoOf, stringField, validationFailed } from "./http.ts";
import { pullJson } from "./shapes.ts";
import { branchHead, branchHeads, commitsAhead, diffStat, mergeBranch, mergedTree, pullHeads, writePullHead } from "./git.ts";

const PULLS = "/repos/{owner}/{repo}/pulls";
const PULL = `${PULLS}/{number}`;

/** The pull request routes. */
export const pullRoutes: Route[] = [
  { method: "GET", template: PULLS, handler: listPulls },
  { method: "POST", template: PULLS, writes: true, handler: createPull },
  { method: "GET", template: PULL, handler: getPull },
  { method: "PATCH", template: PULL, writes: true, handler: updatePull },
  { method: "GET", template: `${PULL}/merge`, handler: isMerged },
  { method: "PUT", template: `${PULL}/merge`, writes: true, handler: mergePull },
];

async function listPulls(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const state = queryChoice(ctx, "state", ["open", "closed", "all"] as const, "open");
  const sort = queryChoice(ctx, "sort", ["created", "updated"] as const, "created");
  const direction = queryChoice(ctx, "direction", ["asc", "desc"] as const, "desc");
  const head = headFilter(repo, ctx.query.get("head"));
  const base = ctx.query.get("base");
  const sign = direction === "asc" ? 1 : -1;
  const key = (issue: ForgeIssue) => Date.parse(sort === "created" ? issue.created_at : issue.updated_at);
  const matching = repo.issues
    .filter((issue) => issue.pull && (state === "all" || issue.state === state))
    .filter((issue) => head === undefined || issue.pull!.head === head)
    .filter((issue) => !base || issue.pull!.base === base)
    .sort((a, b) => sign * (key(a) - key(b) || a.number - b.number));
  const { page, headers } = paginate(ctx, matching);
  const heads = await branchHeads(gitPath(ctx, repo));
  await followHeads(gitPath(ctx, repo), repo, heads);
  return { status: 200, body: page.map((issue) => pullJson(ctx.shapes, repo, issue, heads)), headers };
}

async function getPull(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const issue = pullOf(ctx, repo);
  return { status: 200, body: await pullDetail(ctx, repo, issue) };
}

async function createPull(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const body = bodyObject(ctx);
  const title = stringField(body, "title", "PullRequest", true);
  const headField = stringField(body, "head", "PullRequest", true);
  const base = stringField(body, "base", "PullRequest", true);
  const text = stringField(body, "body", "PullRequest");
  const draft = body.draft === true;
  const head = headFilter(repo, headField);
  const path = gitPath(ctx, repo);
  const heads = await branchHeads(path);
  const headSha = head === undefined ? undefined : heads.get(head);
  if (head === undefined || !headSha) throw validationFailed({ resource: "PullRequest", field: "head", code: "invalid" });
  const baseSha = heads.get(base);
  if (!baseSha) throw validationFailed({ resource: "PullRequest", field: "base", code: "invalid" });
  if (repo.issues.some((issue) => issue.state === "open" && issue.pull?.head === head && issue.pull.base === base)) {
    throw validationFailed({ resource: "PullRequest", code: "custom", message: `A pull request already exists for ${repo.owner}:${head}.` });
  }
  if ((await commitsAhead(path, baseSha, headSha)) === 0) {
    throw validationFailed({ resource: "PullRequest", code: "custom", message: `No commits between ${base} and ${head}` });
  }
  const pull = { head, base, head_sha: headSha, base_sha: baseSha, draft, merged_at: null, merge_commit_sha: null, merged_by: null };
  const issue = addIssue(ctx.data, repo, { title, body: text ?? null, user: ctx.user.login, pull }, ctx.now());
  await writePullHead(path, issue.number, headSha);
  return { status: 201, body: await pullDetail(ctx, repo, issue, heads, { opening: true }), headers: { location: `${ctx.shapes.base}/repos/${repo.owner}/${repo.name}/pulls/${issue.number}` } };
}

async function updatePull(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const issue = pullOf(ctx, repo);
  if (!canPush(repo, ctx.user.login) && issue.user.toLowerCase() !== ctx.user.login.toLowerCase()) throw mustHavePush();
  const body = bodyObject(ctx);
  const title = stringField(body, "title", "PullRequest");
  const text = stringField(body, "body", "PullRequest");
  const state = choiceField(body, "state", "PullRequest", ["open", "closed"] as const);
  const base = stringField(body, "base", "PullRequest");
  if (title === null) throw validationFailed({ resource: "PullRequest", code: "missing_field", field: "title" });
  if (base && !(await branchHead(gitPath(ctx, repo), base))) throw validationFailed({ resource: "PullRequest", field: "base", code: "invalid" });
  if (state === "open" && issue.pull!.merged_at) throw validationFailed({ resource: "PullRequest", code: "custom", field: "state", message: "state cannot be changed. The pull request cannot be reopened." });
  const before = JSON.stringify(issue);
  const at = ctx.now();
  if (title !== undefined) issue.title = title;
  if (text !== undefined) issue.body = text;
  if (base) issue.pull!.base = base;
  if (state === "closed" && issue.state === "open") await freezeHeads(ctx, repo, issue);
  if (state !== undefined) setIssueState(ctx.data, issue, state, ctx.user.login, at);
  if (JSON.stringify(issue) !== before) issue.updated_at = at;
  return { status: 200, body: await pullDetail(ctx, repo, issue) };
}

function isMerged(ctx: RouteContext): Reply {
  const issue = pullOf(ctx, repoOf(ctx));
  if (!issue.pull!.merged_at) throw notFound();
  return { status: 204 };
}

async function mergePull(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const issue = pullOf(ctx, repo);
  const pull = issue.pull!;
  if (!canPush(repo, ctx.user.login)) throw mustHavePush();
  const body = bodyObject(ctx);
  const method = choiceField(body, "merge_method", "PullRequest", ["merge", "squash", "rebase"] as const) ?? "merge";
  const sha = stringField(body, "sha", "PullRequest");
  const commitTitle = stringField(body, "commit_title", "PullRequest");
  const commitMessage = stringField(body, "commit_message", "PullRequest");
  if (method === "rebase") throw new ForgeHttpError(405, { message: "Rebase merges are not allowed on this repository." });
  if (issue.state !== "open") throw new ForgeHttpError(405, { message: "Pull Request is not mergeable" });
  if (pull.draft) throw new ForgeHttpError(405, { message: "Pull Request is still a draft" });
  const path = gitPath(ctx, repo);
  const headSha = await branchHead(path, pull.head);
  if (sha && sha !== headSha) throw new ForgeHttpError(409, { message: "Head branch was modified. Review and try the merge again." });
  const at = ctx.now();
  const source = `${repo.owner}/${pull.head}`;
  const subject = commitTitle ?? (method === "merge" ? `Merge pull request #${issue.number} from ${source}` : `${issue.title} (#${issue.number})`);
  const rest = commitMessage ?? (method === "merge" ? issue.title : (issue.body ?? ""));
  const result = await mergeBranch(path, {
    base: pull.base,
    head: pull.head,
    method,
    message: rest ? `${subject}\n\n${rest}` : subject,
    who: { name: ctx.user.login, email: `${ctx.user.login}@users.noreply.forge.invalid`, date: at },
  });
  if (!result.merged) throw new ForgeHttpError(405, { message: "Pull Request is not mergeable" });
  await writePullHead(path, issue.number, headSha!);
  pull.head_sha = headSha!;
  pull.base_sha = result.sha;
  pull.merged_at = at;
  pull.merge_commit_sha = result.sha;
  pull.merged_by = ctx.user.login;
  setIssueState(ctx.data, issue, "closed", ctx.user.login, at);
  if (pull.base === repo.default_branch) {
    for (const number of closingReferences(repo, issue.body ?? "")) {
      const closed = findIssue(repo, number);
      if (closed && !closed.pull && closed.state === "open") setIssueState(ctx.data, closed, "closed", ctx.user.login, at, "completed");
    }
  }
  return { status: 200, body: { sha: result.sha, merged: true, message: "Pull Request successfully merged" } };
}

/**
 * The issue numbers a pull request's body closes on merge: `Closes #N`, `Fixes #N`,
 * `Resolves #N` (any tense, any case), or `... owner/repo#N` naming this repository.
 */
export function closingReferences(repo: ForgeRepo, body: string): number[] {
  const found = new Set<number>();
  const pattern = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+([\w.-]+\/[\w.-]+)?#(\d+)\b/gi;
  for (const match of body.matchAll(pattern)) {
    if (match[1] && match[1].toLowerCase() !== `${repo.owner}/${repo.name}`.toLowerCase()) continue;
    found.add(Number(match[2]));
  }
  return [...found];
}

/**
 * The head and base each open pull request's mergeability job last started on, per forge
 * folder and pull request: kept in memory, as GitHub's job is no part of the pull request
 * (a forge restarted computes again, answering null once more).
 */
const mergeabilityJobs = new Map<string, string>();

async function pullDetail(ctx: RouteContext, repo: ForgeRepo, issue: ForgeIssue, known?: Map<string, string>, how: { opening?: boolean } = {}) {
  const path = gitPath(ctx, repo);
  const heads = known ?? (await branchHeads(path));
  await followHeads(path, repo, heads);
  const pull = issue.pull!;
  const head = heads.get(pull.head);
  const base = heads.get(pull.base);
  const open = issue.state === "open" && head && base;
  const mergeable = open && mergeabilityKnown(ctx, repo, issue, `${base}..${head}`, how.opening === true) ? (await mergedTree(path, base, head)) !== undefined : null;
  // A closed pull request counts what it had: from where its base stood to its last head.
  const from = pull.merge_commit_sha ? `${pull.merge_commit_sha}^1` : pull.base_sha;
  const commits = open ? await commitsAhead(path, base, head) : await commitsAhead(path, from, pull.head_sha).catch(() => 0);
  const none = { additions: 0, deletions: 0, changed_files: 0 };
  const changes = open ? await diffStat(path, base, head) : await diffStat(path, from, pull.head_sha).catch(() => none);
  return pullJson(ctx.shapes, repo, issue, heads, { mergeable, commits, ...changes });
}

/**
 * Whether the mergeability job for this head and base has had time to finish: not in the
 * answer that opens the pull request, nor on the first read after it opened or its head or
 * base moved (that read starts the job); yes on any later read.
 */
function mergeabilityKnown(ctx: RouteContext, repo: ForgeRepo, issue: ForgeIssue, tips: string, opening: boolean): boolean {
  const job = `${ctx.dir}\0${repo.id}\0${issue.number}`;
  if (opening) {
    mergeabilityJobs.delete(job);
    return false;
  }
  if (mergeabilityJobs.get(job) === tips) return true;
  mergeabilityJobs.set(job, tips);
  return false;
}

/**
 * Moves each open pull request's `refs/pull/<n>/head` to where its head branch is now, as
 * GitHub does on a push (pushes reach the bare repository without the forge, so it looks
 * whenever it reads); a closed one's ref stays where it was, and so does one whose head
 * branch is gone.
 */
export async function followHeads(path: string, repo: ForgeRepo, heads: Map<string, string>): Promise<void> {
  const open = repo.issues.filter((issue) => issue.pull && issue.state === "open");
  if (open.length === 0) return;
  const refs = await pullHeads(path);
  for (const issue of open) {
    const tip = heads.get(issue.pull!.head);
    // A read is not failed for a ref it could not move: the next read moves it.
    if (tip && refs.get(issue.number) !== tip) await writePullHead(path, issue.number, tip).catch(() => {});
  }
}

/** Before a pull request closes: its head and base as they are now, and its `refs/pull/<n>/head` at that head. */
export async function freezeHeads(ctx: RouteContext, repo: ForgeRepo, issue: ForgeIssue): Promise<void> {
  const heads = await branchHeads(gitPath(ctx, repo));
  await followHeads(gitPath(ctx, repo), repo, heads);
  issue.pull!.head_sha = heads.get(issue.pull!.head) ?? issue.pull!.head_sha;
  issue.pull!.base_sha = heads.get(issue.pull!.base) ?? issue.pull!.base_sha;
}

/** `owner:branch` (or a bare branch) as a branch of this repository; another owner's branch is none of ours. */
function headFilter(repo: ForgeRepo, value: string | null | undefined): string | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  const colon = value.indexOf(":");
  if (colon < 0) return value;
  return value.slice(0, colon).toLowerCase() === repo.owner.toLowerCase() ? value.slice(colon + 1) : "\0no-such-branch";
}

/** The pull request the route's `{number}` names; an issue, or nothing, is Not Found. */
export function pullOf(ctx: RouteContext, repo: ForgeRepo): ForgeIssue {
  const issue = findIssue(repo, numberParam(ctx));
  if (!issue?.pull) throw notFound();
  return issue;
}

function gitPath(ctx: RouteContext, repo: ForgeRepo): string {
  return bareRepoPath(ctx.dir, repo.owner, repo.name);
}
