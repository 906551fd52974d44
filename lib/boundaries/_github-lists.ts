/**
 * The lists the GitHub boundary polls with conditional requests: one repository's issues or
 * pull requests, and every repository's issues the token's own user opened
 * (`GET /user/issues?filter=created`), each read as `readChangedList` reads a list, and the
 * issues and pull requests of GitHub's JSON as robot-army sees them.
 */
import type { Octokit } from "@octokit/rest";
import type { CommentChanges, GitHubIssue, GitHubIssueComment, GitHubMemory, GitHubPullRequest, GitHubReviewComment, IssueChanges, ListMark, OwnIssueChanges, PullChanges } from "./github-types.ts";

/** The page size of lists: GitHub's largest. */
export const PER_PAGE = 100;

/** An issue (or pull request) as GitHub's JSON has it. */
export type RawIssue = {
  number: number; title: string; body?: string | null; state: string; user: { login: string } | null;
  labels: Array<string | { name?: string }>; created_at: string; updated_at: string; closed_at: string | null;
  html_url: string; pull_request?: unknown; repository?: { full_name?: string };
  issue_dependencies_summary?: { blocked_by?: number; total_blocked_by?: number } | null;
};

/**
 * An issue list's changes: one conditional read of page 1 (sorted by last update, newest
 * first), 304 meaning no issue changed; see `readChangedList`.
 */
export async function readIssueChanges(
  octokit: Octokit,
  memory: GitHubMemory,
  apiBase: string,
  repo: string,
  simulated: boolean,
): Promise<Omit<IssueChanges, "requests" | "notModified">> {
  const list = await readChangedList<RawIssue>(octokit, memory, {
    route: "GET /repos/{owner}/{repo}/issues", params: split(repo), key: issueListKey(apiBase, repo, simulated),
  });
  if (!list.changed) return { changed: false, issues: [], commit() {} };
  // Equal times are kept: GitHub's times are to the second, and taking an issue twice is harmless.
  const fresh = list.items.filter((item) => list.since === undefined || Date.parse(item.updated_at) >= list.since);
  return { changed: true, issues: fresh.filter((item) => item.pull_request === undefined).map(toIssue), commit: list.commit };
}

/** Where the memory keeps a repository's pull request list: its page-1 address. */
export function pullListKey(apiBase: string, repo: string): string {
  return `${apiBase}/repos/${repo}/pulls?state=all&sort=updated&direction=desc&per_page=${PER_PAGE}`;
}

/** Where the memory keeps a repository's own issue list: its page-1 address (simulated passes apart). */
export function issueListKey(apiBase: string, repo: string, simulated: boolean): string {
  const url = `${apiBase}/repos/${repo}/issues?state=all&sort=updated&direction=desc&per_page=${PER_PAGE}`;
  return simulated ? `${url} (simulated passes)` : url;
}

/**
 * How far back a list covering these repositories must read at first: the oldest of their
 * own lists' high-water marks; undefined (every page) when one has none.
 */
export function oldestMark(marks: ReadonlyArray<ListMark | undefined>): string | undefined {
  let oldest: string | undefined;
  for (const mark of marks) {
    if (!mark?.highWater) return undefined;
    if (oldest === undefined || Date.parse(mark.highWater) < Date.parse(oldest)) oldest = mark.highWater;
  }
  return oldest;
}

/**
 * The issues the token's own user opened, in every repository of `repos`, changed since
 * the last committed read: one conditional read of `GET /user/issues?filter=created` (state
 * all, newest update first) for them all, 304 meaning none changed, read as
 * `readChangedList` reads a list. Its issues name their repository; those of a repository
 * not in `repos`, and pull requests, are left out. `key` names the list in the memory (the
 * repositories it covers, the token's user and whether the passes are simulated are part
 * of it). Its first read goes back only to `since`: the oldest of the repositories' own
 * marks, which they were each read up to.
 */
export async function readOwnIssueChanges(
  octokit: Octokit,
  memory: GitHubMemory,
  key: string,
  repos: readonly string[],
  since: string | undefined,
): Promise<Omit<OwnIssueChanges, "requests" | "notModified">> {
  const list = await readChangedList<RawIssue>(octokit, memory, { route: "GET /user/issues", params: { filter: "created" }, key, since });
  const issues: Record<string, GitHubIssue[]> = Object.fromEntries(repos.map((repo) => [repo, []]));
  if (!list.changed) return { changed: false, issues, commit() {} };
  const named = new Map(repos.map((repo) => [repo.toLowerCase(), repo]));
  for (const item of list.items) {
    // Equal times are kept: GitHub's times are to the second, and taking an issue twice is harmless.
    if (list.since !== undefined && Date.parse(item.updated_at) < list.since) continue;
    const repo = named.get(item.repository?.full_name?.toLowerCase() ?? "");
    if (repo !== undefined && item.pull_request === undefined) issues[repo].push(toIssue(item));
  }
  return { changed: true, issues, commit: list.commit };
}

/** A pull request as GitHub's list has it. */
export type RawPull = {
  number: number; state: string; merged_at: string | null; updated_at: string; html_url: string;
  head: { ref: string; sha: string; repo?: { full_name?: string } | null };
};

/**
 * A pull request list's changes, as `readChangedList` reads them. Every pull request read
 * is returned, page 1's older ones too: storing one again is harmless, and a push moves a
 * head without always moving `updated_at`.
 */
export async function readPullChanges(
  octokit: Octokit,
  memory: GitHubMemory,
  apiBase: string,
  repo: string,
  since: string | undefined,
): Promise<Omit<PullChanges, "requests" | "notModified">> {
  const key = pullListKey(apiBase, repo);
  const list = await readChangedList<RawPull>(octokit, memory, { route: "GET /repos/{owner}/{repo}/pulls", params: split(repo), key, since });
  if (!list.changed) return { changed: false, pulls: [], commit() {} };
  // A pull request from a fork has a head branch of the fork's: a branch of the same name is not the item's.
  const own = list.items.filter((raw) => raw.head.repo?.full_name?.toLowerCase() === repo.toLowerCase());
  return { changed: true, pulls: own.map(toPullRequest), commit: list.commit };
}

type RawComment = { id: number; body?: string | null; user: { login: string } | null; html_url: string; created_at: string; updated_at: string };
type RawIssueComment = RawComment & { issue_url: string };
type RawReviewComment = RawComment & { pull_request_url: string; pull_request_review_id?: number | null; path: string; line?: number | null };

/**
 * A repository's conversation comments (`GET /repos/{owner}/{repo}/issues/comments`) and line
 * comments (`GET /repos/{owner}/{repo}/pulls/comments`) made or edited since the last
 * committed read, each list read as `readChangedList` reads one (sorted by last update, newest
 * first; a 304 when nothing changed).
 */
export async function readCommentChanges(
  octokit: Octokit,
  memory: GitHubMemory,
  apiBase: string,
  repo: string,
  since: string | undefined,
): Promise<Omit<CommentChanges, "requests" | "notModified">> {
  const issues = await readChangedList<RawIssueComment>(octokit, memory, {
    route: "GET /repos/{owner}/{repo}/issues/comments", params: split(repo), key: `${apiBase}/repos/${repo}/issues/comments?sort=updated&direction=desc&per_page=${PER_PAGE}`, since, state: false,
  });
  const lines = await readChangedList<RawReviewComment>(octokit, memory, {
    route: "GET /repos/{owner}/{repo}/pulls/comments", params: split(repo), key: `${apiBase}/repos/${repo}/pulls/comments?sort=updated&direction=desc&per_page=${PER_PAGE}`, since, state: false,
  });
  const fresh = <T extends { updated_at: string }>(list: typeof issues | typeof lines, items: T[]) =>
    list.changed ? items.filter((item) => list.since === undefined || Date.parse(item.updated_at) >= list.since) : [];
  const author = (raw: RawComment) => raw.user?.login ?? "ghost";
  const lastNumber = (url: string) => Number(/\/(\d+)$/.exec(url)?.[1] ?? NaN);
  const comments: GitHubIssueComment[] = fresh(issues, issues.changed ? issues.items : []).map((raw) => ({
    id: Number(raw.id), issue: lastNumber(raw.issue_url), author: author(raw), body: raw.body ?? "", html_url: raw.html_url, created_at: raw.created_at, updated_at: raw.updated_at,
  })).filter((c) => Number.isInteger(c.issue));
  const reviewComments: GitHubReviewComment[] = fresh(lines, lines.changed ? lines.items : []).map((raw) => ({
    id: Number(raw.id), pull_request: lastNumber(raw.pull_request_url), review: raw.pull_request_review_id ?? null, author: author(raw), body: raw.body ?? "",
    path: raw.path, line: raw.line ?? null, html_url: raw.html_url, created_at: raw.created_at, updated_at: raw.updated_at,
  })).filter((c) => Number.isInteger(c.pull_request));
  return {
    changed: issues.changed || lines.changed,
    comments,
    reviewComments,
    commit() {
      if (issues.changed) issues.commit();
      if (lines.changed) lines.commit();
    },
  };
}

/** A pull request from GitHub's JSON. */
export function toPullRequest(raw: RawPull): GitHubPullRequest {
  return {
    number: raw.number,
    head_branch: raw.head.ref,
    head_sha: raw.head.sha,
    state: raw.state === "closed" ? "closed" : "open",
    merged_at: raw.merged_at ?? null,
    updated_at: raw.updated_at,
    html_url: raw.html_url,
  };
}

/**
 * One conditional read of a list's page 1 (state all, sorted by last update, newest
 * first), with the ETag of the last committed read: 304 means nothing in it changed. On
 * 200, later pages are read only while they may still hold items updated since the last
 * committed read's newest (or, before any, since `since`; every page without either).
 * `commit` saves the ETag and the newest update seen.
 */
async function readChangedList<T extends { updated_at: string }>(
  octokit: Octokit,
  memory: GitHubMemory,
  list: { route: string; params: Record<string, unknown>; key: string; since?: string; state?: false },
): Promise<{ changed: false } | { changed: true; items: T[]; since: number | undefined; commit(): void }> {
  const mark = memory.mark(list.key);
  // Comment lists have no state to filter by.
  const first = await octokit.request(list.route, {
    ...list.params, ...(list.state === false ? {} : { state: "all" }), sort: "updated", direction: "desc", per_page: PER_PAGE,
    headers: mark ? { "if-none-match": mark.etag } : {},
  });
  if ((first.status as number) === 304) {
    memory.touchMark(list.key);
    return { changed: false };
  }
  const bound = mark ? mark.highWater ?? undefined : list.since;
  const since = bound === undefined ? undefined : Date.parse(bound);
  const items = [...(first.data as unknown as T[])];
  let page = items;
  let link = first.headers.link;
  for (let next = nextLink(link); next && (since === undefined || olderThan(page, since) === false); next = nextLink(link)) {
    const response = await octokit.request({ method: "GET", url: next });
    page = response.data as unknown as T[];
    items.push(...page);
    link = response.headers.link;
  }
  const newest = items.reduce<string | null>((max, item) => (max === null || Date.parse(item.updated_at) > Date.parse(max) ? item.updated_at : max), bound ?? null);
  const etag = first.headers.etag;
  return {
    changed: true,
    items,
    since,
    commit() {
      if (etag) memory.saveMark(list.key, { etag, highWater: newest });
    },
  };
}

/** Whether a page's last (oldest) item was updated before `since`: nothing after it is new. */
function olderThan(page: Array<{ updated_at: string }>, since: number): boolean {
  const last = page.at(-1);
  return last === undefined || Date.parse(last.updated_at) < since;
}

/** The URL of a `Link` header's next page. */
export function nextLink(link: string | undefined): string | undefined {
  return link?.split(",").map((part) => /<([^>]+)>;\s*rel="next"/.exec(part)?.[1]).find(Boolean);
}

/** An issue from GitHub's JSON. */
export function toIssue(raw: RawIssue): GitHubIssue {
  return {
    number: raw.number,
    title: raw.title,
    body: raw.body ?? "",
    state: raw.state === "closed" ? "closed" : "open",
    // A deleted account shows as GitHub's "ghost".
    author: raw.user?.login ?? "ghost",
    labels: raw.labels.map((label) => (typeof label === "string" ? label : label.name ?? "")).filter(Boolean),
    created_at: raw.created_at,
    updated_at: raw.updated_at,
    closed_at: raw.closed_at,
    html_url: raw.html_url,
    ...(raw.issue_dependencies_summary && typeof raw.issue_dependencies_summary.total_blocked_by === "number"
      ? { blocked_by: { open: Number(raw.issue_dependencies_summary.blocked_by ?? 0), total: raw.issue_dependencies_summary.total_blocked_by } }
      : {}),
  };
}

/** `owner/name` as Octokit's two parameters. */
export function split(repo: string): { owner: string; repo: string } {
  const [owner, name, ...rest] = repo.split("/");
  if (!owner || !name || rest.length) throw new TypeError(`Repository "${repo}" is not of the form owner/name`);
  return { owner, repo: name };
}
