/**
 * The forge's answers in GitHub's JSON shapes: labels, issues, comments, issue events and
 * pull requests (users and repositories in repo-shapes.ts), built from the stored state
 * and the URL the forge is reached at (API links under it; web links as
 * `<base>/<owner>/<repo>/...`), with every field GitHub's OpenAPI description requires.
 */
import type { ForgeComment, ForgeIssue, ForgeIssueEvent, ForgeLabel, ForgeRepo } from "./state.ts";
import { canPush, findLabel, issueById } from "./state.ts";
import { nodeId, repoApi, repoJson, userJson } from "./repo-shapes.ts";
import type { ShapeContext } from "./repo-shapes.ts";

type Json = Record<string, unknown>;

/** A label. */
export function labelJson(ctx: ShapeContext, repo: ForgeRepo, label: ForgeLabel): Json {
  return {
    id: label.id,
    node_id: nodeId("LA", label.id),
    url: `${repoApi(ctx, repo)}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    color: label.color,
    default: false,
    description: label.description,
  };
}

/** An issue, as the issues endpoints answer; a pull request carries `pull_request`, as on GitHub. */
export function issueJson(ctx: ShapeContext, repo: ForgeRepo, issue: ForgeIssue): Json {
  const api = `${repoApi(ctx, repo)}/issues/${issue.number}`;
  const html = `${repoHtml(ctx, repo)}/${issue.pull ? "pull" : "issues"}/${issue.number}`;
  return {
    url: api,
    repository_url: repoApi(ctx, repo),
    labels_url: `${api}/labels{/name}`,
    comments_url: `${api}/comments`,
    events_url: `${api}/events`,
    html_url: html,
    id: issue.id,
    node_id: nodeId(issue.pull ? "PR" : "I", issue.id),
    number: issue.number,
    title: issue.title,
    user: userJson(ctx, issue.user),
    labels: labelsJson(ctx, repo, issue),
    state: issue.state,
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments: repo.comments.filter((comment) => comment.issue === issue.number).length,
    created_at: issue.created_at,
    updated_at: issue.updated_at,
    closed_at: issue.closed_at,
    author_association: association(repo, issue.user),
    active_lock_reason: null,
    ...(issue.pull ? { draft: issue.pull.draft, pull_request: pullLinks(ctx, repo, issue) } : {}),
    body: issue.body,
    closed_by: issue.closed_by ? userJson(ctx, issue.closed_by) : null,
    state_reason: issue.pull ? null : issue.state_reason,
    issue_dependencies_summary: dependenciesSummary(ctx, repo, issue),
  };
}

/**
 * How many issues block this one and how many it blocks, as GitHub counts them: `blocked_by`
 * and `blocking` count the open issues on the other end, `total_*` all of them.
 */
function dependenciesSummary(ctx: ShapeContext, repo: ForgeRepo, issue: ForgeIssue): Json {
  const blockers = (repo.dependencies ?? []).filter((d) => d.blocked === issue.id).flatMap((d) => issueById(ctx.data, d.blocking) ?? []);
  const blocked = ctx.data.repos.flatMap((r) => (r.dependencies ?? []).filter((d) => d.blocking === issue.id).flatMap((d) => r.issues.find((i) => i.id === d.blocked) ?? []));
  const open = (list: ForgeIssue[]) => list.filter((i) => i.state === "open").length;
  return { blocked_by: open(blockers.map((found) => found.issue)), total_blocked_by: blockers.length, blocking: open(blocked), total_blocking: blocked.length };
}

/** A comment on an issue or pull request. */
export function commentJson(ctx: ShapeContext, repo: ForgeRepo, comment: ForgeComment): Json {
  const issue = repo.issues.find((i) => i.number === comment.issue);
  return {
    url: `${repoApi(ctx, repo)}/issues/comments/${comment.id}`,
    html_url: `${repoHtml(ctx, repo)}/${issue?.pull ? "pull" : "issues"}/${comment.issue}#issuecomment-${comment.id}`,
    issue_url: `${repoApi(ctx, repo)}/issues/${comment.issue}`,
    id: comment.id,
    node_id: nodeId("IC", comment.id),
    user: userJson(ctx, comment.user),
    created_at: comment.created_at,
    updated_at: comment.updated_at,
    author_association: association(repo, comment.user),
    body: comment.body,
  };
}

/**
 * An issue event, as `GET /repos/{owner}/{repo}/issues/{n}/events` lists it: who acted,
 * and a label's name and colour or, for `renamed`, the title it had and has.
 */
export function issueEventJson(ctx: ShapeContext, repo: ForgeRepo, event: ForgeIssueEvent): Json {
  const common = {
    id: event.id,
    node_id: nodeId(event.event === "renamed" ? "RTE" : event.event === "labeled" ? "LE" : "UNLE", event.id),
    url: `${repoApi(ctx, repo)}/issues/events/${event.id}`,
    actor: userJson(ctx, event.actor),
    event: event.event,
    commit_id: null,
    commit_url: null,
    created_at: event.created_at,
  };
  if (event.event === "renamed") return { ...common, rename: { from: event.rename.from, to: event.rename.to }, performed_via_github_app: null };
  const label = findLabel(repo, event.label);
  return { ...common, label: { name: event.label, color: label?.color ?? "ededed" }, performed_via_github_app: null };
}

/** Branch heads read from the bare repository when the answer is built; closed pull requests keep what they had. */
export type BranchHeads = Map<string, string>;

/**
 * A pull request. `detail` adds what only `GET /pulls/{n}` carries on GitHub (merged,
 * mergeable, counts); lists leave it out.
 */
export function pullJson(ctx: ShapeContext, repo: ForgeRepo, issue: ForgeIssue, heads: BranchHeads, detail?: PullDetail): Json {
  const pull = issue.pull!;
  const api = `${repoApi(ctx, repo)}/pulls/${issue.number}`;
  const html = `${repoHtml(ctx, repo)}/pull/${issue.number}`;
  const open = issue.state === "open";
  const headSha = (open && heads.get(pull.head)) || pull.head_sha;
  const baseSha = (open && heads.get(pull.base)) || pull.base_sha;
  const branch = (ref: string, sha: string) => ({
    label: `${repo.owner}:${ref}`,
    ref,
    sha,
    user: userJson(ctx, repo.owner),
    repo: repoJson(ctx, repo, repo.owner),
  });
  const shape: Json = {
    url: api,
    id: issue.id,
    node_id: nodeId("PR", issue.id),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${repoApi(ctx, repo)}/issues/${issue.number}`,
    commits_url: `${api}/commits`,
    review_comments_url: `${api}/comments`,
    review_comment_url: `${repoApi(ctx, repo)}/pulls/comments{/number}`,
    comments_url: `${repoApi(ctx, repo)}/issues/${issue.number}/comments`,
    statuses_url: `${repoApi(ctx, repo)}/statuses/${headSha}`,
    number: issue.number,
    state: issue.state,
    locked: false,
    title: issue.title,
    user: userJson(ctx, issue.user),
    body: issue.body,
    labels: labelsJson(ctx, repo, issue),
    milestone: null,
    active_lock_reason: null,
    created_at: issue.created_at,
    updated_at: issue.updated_at,
    closed_at: issue.closed_at,
    merged_at: pull.merged_at,
    merge_commit_sha: pull.merge_commit_sha,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: branch(pull.head, headSha),
    base: branch(pull.base, baseSha),
    author_association: association(repo, issue.user),
    auto_merge: null,
    draft: pull.draft,
    _links: pullLinksJson(ctx, repo, issue, headSha),
  };
  if (!detail) return shape;
  return {
    ...shape,
    merged: pull.merged_at !== null,
    mergeable: detail.mergeable,
    mergeable_state: detail.mergeable === null ? "unknown" : detail.mergeable ? "clean" : "dirty",
    merged_by: pull.merged_by ? userJson(ctx, pull.merged_by) : null,
    comments: repo.comments.filter((comment) => comment.issue === issue.number).length,
    review_comments: (repo.review_comments ?? []).filter((comment) => comment.pull === issue.number).length,
    maintainer_can_modify: false,
    commits: detail.commits,
    additions: detail.additions,
    deletions: detail.deletions,
    changed_files: detail.changed_files,
  };
}

/** What only `GET /pulls/{n}` carries: whether it can merge (null while not known) and what it changes. */
export interface PullDetail {
  mergeable: boolean | null;
  commits: number;
  additions: number;
  deletions: number;
  changed_files: number;
}

function pullLinksJson(ctx: ShapeContext, repo: ForgeRepo, issue: ForgeIssue, headSha: string): Json {
  const api = `${repoApi(ctx, repo)}/pulls/${issue.number}`;
  const issueApi = `${repoApi(ctx, repo)}/issues/${issue.number}`;
  const href = (url: string) => ({ href: url });
  return {
    self: href(api),
    html: href(`${repoHtml(ctx, repo)}/pull/${issue.number}`),
    issue: href(issueApi),
    comments: href(`${issueApi}/comments`),
    review_comments: href(`${api}/comments`),
    review_comment: href(`${repoApi(ctx, repo)}/pulls/comments{/number}`),
    commits: href(`${api}/commits`),
    statuses: href(`${repoApi(ctx, repo)}/statuses/${headSha}`),
  };
}

/** A repository's web address, `<base>/<owner>/<repo>`. */
export function repoHtml(ctx: ShapeContext, repo: ForgeRepo): string {
  return `${ctx.base}/${repo.owner}/${repo.name}`;
}

function labelsJson(ctx: ShapeContext, repo: ForgeRepo, issue: ForgeIssue): Json[] {
  return issue.labels.flatMap((name) => {
    const label = findLabel(repo, name);
    return label ? [labelJson(ctx, repo, label)] : [];
  });
}

function pullLinks(ctx: ShapeContext, repo: ForgeRepo, issue: ForgeIssue): Json {
  const html = `${repoHtml(ctx, repo)}/pull/${issue.number}`;
  return {
    url: `${repoApi(ctx, repo)}/pulls/${issue.number}`,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    merged_at: issue.pull?.merged_at ?? null,
  };
}

/** What a user is to a repository, as GitHub's `author_association` says it. */
export function association(repo: ForgeRepo, login: string): string {
  if (login.toLowerCase() === repo.owner.toLowerCase()) return "OWNER";
  return canPush(repo, login) ? "COLLABORATOR" : "NONE";
}

