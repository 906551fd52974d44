/**
 * The forge's pull request review endpoints, answered as GitHub answers them:
 *
 * - `GET /repos/{o}/{r}/pulls/{n}/reviews`: the pull request's reviews, oldest first, paginated.
 * - `POST /repos/{o}/{r}/pulls/{n}/reviews` {event, body, commit_id?, comments?}: a review
 *   submitted at once (APPROVED, CHANGES_REQUESTED or COMMENTED; 200, as on GitHub), of the
 *   pull request's head unless `commit_id` names another of its commits; each of `comments`
 *   ({path, line, side?, body}) becomes a review comment of it. 422 as GitHub words it for
 *   approving or requesting changes on one's own pull request, and for REQUEST_CHANGES or
 *   COMMENT with neither a body nor comments. A review without `event` would be GitHub's
 *   pending one, which the forge does not keep: 422.
 * - `GET /repos/{o}/{r}/pulls/{n}/comments` and the repository's `GET /repos/{o}/{r}/pulls/comments`:
 *   review comments in ascending order of id, or by `sort` and `direction`, since `since` (http.ts `commentOrder`).
 * - `POST /repos/{o}/{r}/pulls/{n}/comments` {body, commit_id, path, line, side?}: one review
 *   comment, in a COMMENTED review of its own, as GitHub makes one: 201.
 *
 * A commented line must be in the diff of its file between the pull request's base and the
 * commit (`git diff base...commit`), as on GitHub; its `position` and `diff_hunk` are read
 * from that diff. Every review and review comment updates the pull request (`updated_at`),
 * as GitHub does, so a list sorted by `updated` shows it moved.
 */
import type { ForgeIssue, ForgeRepo, ForgeReview, ForgeReviewComment } from "./state.ts";
import { nextId } from "./state.ts";
import type { Reply, Route, RouteContext } from "./http.ts";
import { ForgeHttpError, bodyObject, choiceField, commentOrder, invalidRequest, paginate, refuseTooLong, repoOf, requiredString, stringField, validationFailed } from "./http.ts";
import { branchHeads, fileDiff, isAncestor, objectType } from "./git.ts";
import { pullOf } from "./pulls.ts";
import { placeInDiff } from "./_diff-hunks.ts";
import type { DiffPlace } from "./_diff-hunks.ts";
import { nodeId, repoApi, userJson } from "./repo-shapes.ts";
import type { ShapeContext } from "./repo-shapes.ts";
import { association, repoHtml } from "./shapes.ts";

const PULLS = "/repos/{owner}/{repo}/pulls";
const PULL = `${PULLS}/{number}`;

/** The review routes; server.ts tries them before pulls.ts's, whose `{number}` would take `comments`. */
export const reviewRoutes: Route[] = [
  { method: "GET", template: `${PULLS}/comments`, handler: listRepoReviewComments },
  { method: "GET", template: `${PULL}/reviews`, handler: listReviews },
  { method: "POST", template: `${PULL}/reviews`, writes: true, handler: createReview },
  { method: "GET", template: `${PULL}/comments`, handler: listReviewComments },
  { method: "POST", template: `${PULL}/comments`, writes: true, handler: createReviewComment },
];

const EVENTS = { APPROVE: "APPROVED", REQUEST_CHANGES: "CHANGES_REQUESTED", COMMENT: "COMMENTED" } as const;
type ReviewEvent = keyof typeof EVENTS;

function listReviews(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = pullOf(ctx, repo);
  const reviews = repo.reviews.filter((review) => review.pull === issue.number).sort((a, b) => a.id - b.id);
  const { page, headers } = paginate(ctx, reviews);
  return { status: 200, body: page.map((review) => reviewJson(ctx.shapes, repo, review)), headers };
}

async function createReview(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const issue = pullOf(ctx, repo);
  const body = bodyObject(ctx);
  const event = body.event;
  if (event === undefined || event === null) throw unprocessable("The sandbox forge keeps no pending reviews: event must be APPROVE, REQUEST_CHANGES or COMMENT");
  if (typeof event !== "string" || !(event in EVENTS)) throw invalidRequest("event", event, "one of APPROVE, REQUEST_CHANGES and COMMENT");
  const text = stringField(body, "body", "PullRequestReview") ?? "";
  refuseTooLong(text, "PullRequestReview");
  const asked = commentsOf(body.comments);
  const own = issue.user.toLowerCase() === ctx.user.login.toLowerCase();
  if (own && event === "APPROVE") throw unprocessable("Review Can not approve your own pull request");
  if (own && event === "REQUEST_CHANGES") throw unprocessable("Review Can not request changes on your own pull request");
  // GitHub's wording for this refusal is not on record; the rule is its documented one.
  if (event !== "APPROVE" && text.trim() === "" && asked.length === 0) throw unprocessable(`Review body is required when the event is ${event}`);
  const tips = await pullTips(ctx, repo, issue);
  const commit = stringField(body, "commit_id", "PullRequestReview") ?? tips.head;
  if (!(await inPull(ctx, repo, tips, commit))) throw unprocessable(`No commit found for SHA: ${commit}`);
  const placed: Array<{ comment: AskedComment; place: DiffPlace }> = [];
  for (const comment of asked) {
    const diff = await fileDiff(ctx.shapes.clonePath(repo), tips.base, commit, comment.path);
    if (diff === "") throw unprocessable("Path could not be resolved");
    const place = placeInDiff(diff, comment.line, comment.side);
    if (!place) throw unprocessable("Line could not be resolved");
    placed.push({ comment, place });
  }
  const at = ctx.now();
  const review = addReview(ctx, repo, issue, { body: text, state: EVENTS[event as ReviewEvent], commit_id: commit }, at);
  for (const { comment, place } of placed) addComment(ctx, repo, review, { ...comment, ...place }, at);
  return { status: 200, body: reviewJson(ctx.shapes, repo, review) };
}

function listReviewComments(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  const issue = pullOf(ctx, repo);
  return commentList(ctx, repo, repo.review_comments.filter((comment) => comment.pull === issue.number));
}

function listRepoReviewComments(ctx: RouteContext): Reply {
  const repo = repoOf(ctx);
  return commentList(ctx, repo, repo.review_comments);
}

function commentList(ctx: RouteContext, repo: ForgeRepo, comments: ForgeReviewComment[]): Reply {
  const { page, headers } = paginate(ctx, commentOrder(ctx, comments));
  return { status: 200, body: page.map((comment) => reviewCommentJson(ctx.shapes, repo, comment)), headers };
}

async function createReviewComment(ctx: RouteContext): Promise<Reply> {
  const repo = repoOf(ctx);
  const issue = pullOf(ctx, repo);
  const body = bodyObject(ctx);
  const resource = "PullRequestReviewComment";
  const text = stringField(body, "body", resource, true);
  const commit = stringField(body, "commit_id", resource, true);
  const path = stringField(body, "path", resource, true);
  const side = choiceField(body, "side", resource, ["LEFT", "RIGHT"] as const) ?? "RIGHT";
  if (body.line === undefined || body.line === null) throw validationFailed({ resource, code: "missing_field", field: "line" });
  if (typeof body.line !== "number" || !Number.isInteger(body.line)) throw invalidRequest("line", body.line, "an integer");
  refuseTooLong(text, resource);
  const tips = await pullTips(ctx, repo, issue);
  if (!(await inPull(ctx, repo, tips, commit))) throw validationFailed({ resource, code: "custom", field: "commit_id", message: "commit_id is not part of the pull request" });
  // GitHub's words for a line outside the diff; a file the diff does not touch gets the same, naming the path.
  const diff = await fileDiff(ctx.shapes.clonePath(repo), tips.base, commit, path);
  if (diff === "") throw validationFailed({ resource, code: "custom", field: "pull_request_review_thread.path", message: "could not be resolved" });
  const place = placeInDiff(diff, body.line, side);
  if (!place) throw validationFailed({ resource, code: "custom", field: "pull_request_review_thread.line", message: "could not be resolved" });
  const at = ctx.now();
  const review = addReview(ctx, repo, issue, { body: "", state: "COMMENTED", commit_id: commit }, at);
  const comment = addComment(ctx, repo, review, { path, line: body.line, side, body: text, ...place }, at);
  const made = reviewCommentJson(ctx.shapes, repo, comment);
  return { status: 201, body: made, headers: { location: String(made.url) } };
}

/** A review submitted at `at`, which updates its pull request. */
function addReview(ctx: RouteContext, repo: ForgeRepo, issue: ForgeIssue, review: Pick<ForgeReview, "body" | "state" | "commit_id">, at: string): ForgeReview {
  const made: ForgeReview = { id: nextId(ctx.data), pull: issue.number, user: ctx.user.login, ...review, submitted_at: at };
  repo.reviews.push(made);
  issue.updated_at = at;
  return made;
}

function addComment(ctx: RouteContext, repo: ForgeRepo, review: ForgeReview, comment: AskedComment & DiffPlace, at: string): ForgeReviewComment {
  const made: ForgeReviewComment = {
    id: nextId(ctx.data),
    pull: review.pull,
    review_id: review.id,
    user: review.user,
    body: comment.body,
    path: comment.path,
    line: comment.line,
    side: comment.side,
    position: comment.position,
    diff_hunk: comment.diff_hunk,
    commit_id: review.commit_id,
    created_at: at,
    updated_at: at,
  };
  repo.review_comments.push(made);
  return made;
}

/** A comment a review's `comments` asks for. */
interface AskedComment {
  path: string;
  line: number;
  side: "LEFT" | "RIGHT";
  body: string;
}

/** A review's `comments`, each checked as GitHub's schema checks it. */
function commentsOf(value: unknown): AskedComment[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidRequest("comments", value, "an array");
  return value.map((item, i) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw invalidRequest(`comments/items/${i}`, item, "an object");
    const given = item as Record<string, unknown>;
    const path = requiredString(given, "path");
    const body = requiredString(given, "body");
    if (typeof given.line !== "number" || !Number.isInteger(given.line)) {
      throw given.line === undefined ? unprocessable("Line could not be resolved") : invalidRequest(`comments/items/${i}/line`, given.line, "an integer");
    }
    const side = given.side ?? "RIGHT";
    if (side !== "LEFT" && side !== "RIGHT") throw invalidRequest(`comments/items/${i}/side`, side, "one of LEFT and RIGHT");
    refuseTooLong(body, "PullRequestReviewComment");
    return { path, body, line: given.line, side };
  });
}

/** Where a pull request's diff runs from and to: its base and head now while it is open, as they were when it closed after. */
async function pullTips(ctx: RouteContext, repo: ForgeRepo, issue: ForgeIssue): Promise<{ base: string; head: string }> {
  const pull = issue.pull!;
  if (issue.state !== "open") return { base: pull.merge_commit_sha ? `${pull.merge_commit_sha}^1` : pull.base_sha, head: pull.head_sha };
  const heads = await branchHeads(ctx.shapes.clonePath(repo));
  return { base: heads.get(pull.base) ?? pull.base_sha, head: heads.get(pull.head) ?? pull.head_sha };
}

/** Whether `sha` is one of the pull request's commits: the head or an ancestor of it, not reachable from the base. */
async function inPull(ctx: RouteContext, repo: ForgeRepo, tips: { base: string; head: string }, sha: string): Promise<boolean> {
  const path = ctx.shapes.clonePath(repo);
  if ((await objectType(path, sha)) !== "commit") return false;
  return (await isAncestor(path, sha, tips.head)) && !(await isAncestor(path, sha, tips.base));
}

/** 422 "Unprocessable Entity" with GitHub's list of sentences (`validation-error-simple`), as the review endpoint answers. */
function unprocessable(sentence: string): ForgeHttpError {
  return new ForgeHttpError(422, { message: "Unprocessable Entity", errors: [sentence] });
}

/** A pull request review, in GitHub's shape. */
export function reviewJson(ctx: ShapeContext, repo: ForgeRepo, review: ForgeReview): Record<string, unknown> {
  const html = `${repoHtml(ctx, repo)}/pull/${review.pull}#pullrequestreview-${review.id}`;
  const pull = `${repoApi(ctx, repo)}/pulls/${review.pull}`;
  return {
    id: review.id,
    node_id: nodeId("PRR", review.id),
    user: userJson(ctx, review.user),
    body: review.body,
    state: review.state,
    html_url: html,
    pull_request_url: pull,
    author_association: association(repo, review.user),
    _links: { html: { href: html }, pull_request: { href: pull } },
    submitted_at: review.submitted_at,
    commit_id: review.commit_id,
  };
}

/** A pull request review comment, in GitHub's shape; the forge moves no comment to a later commit, so `original_*` are its own. */
export function reviewCommentJson(ctx: ShapeContext, repo: ForgeRepo, comment: ForgeReviewComment): Record<string, unknown> {
  const url = `${repoApi(ctx, repo)}/pulls/comments/${comment.id}`;
  const html = `${repoHtml(ctx, repo)}/pull/${comment.pull}#discussion_r${comment.id}`;
  const pull = `${repoApi(ctx, repo)}/pulls/${comment.pull}`;
  return {
    url,
    pull_request_review_id: comment.review_id,
    id: comment.id,
    node_id: nodeId("PRRC", comment.id),
    diff_hunk: comment.diff_hunk,
    path: comment.path,
    position: comment.position,
    original_position: comment.position,
    commit_id: comment.commit_id,
    original_commit_id: comment.commit_id,
    user: userJson(ctx, comment.user),
    body: comment.body,
    created_at: comment.created_at,
    updated_at: comment.updated_at,
    html_url: html,
    pull_request_url: pull,
    author_association: association(repo, comment.user),
    _links: { self: { href: url }, html: { href: html }, pull_request: { href: pull } },
    start_line: null,
    original_start_line: null,
    start_side: null,
    line: comment.line,
    original_line: comment.line,
    side: comment.side,
    subject_type: "line",
  };
}
