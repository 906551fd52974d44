/**
 * The GitHub boundary: reads and writes GitHub (or the sandbox forge) through
 * @octokit/rest at `github.api_base`. Every call has a timeout and is retried where that
 * is safe; the rate limit is read from every answer and calls are deferred rather than
 * the limit burnt; issue and pull request lists are polled with conditional requests, so a poll
 * that finds nothing changed costs one 304 per repository and list.
 *
 * Octokit is imported by `connectGitHub`, so commands that never talk to GitHub never
 * load it.
 *
 * @example
 * const github = await connectGitHub(config, store);
 * const changes = await github.issueChanges("demo/widgets");
 * for (const issue of changes.issues) take(issue);
 * changes.commit(); // only now is the ETag remembered: a crash before this re-reads
 */
import { sha256Hex } from "../sha256.ts";
import type { Octokit } from "@octokit/rest";
import { hostName } from "../config.ts";
import type { Config } from "../config.ts";
import { now as clockNow } from "../clock.ts";
import type { Store } from "../store/open.ts";
import { gitHubMemory } from "./github-state.ts";
import { readToken } from "./github-token.ts";
import { GitHubError, RateLimitDeferred, makeTransport } from "./_github-transport.ts";
import { PER_PAGE, issueListKey, nextLink, oldestMark, readCommentChanges, readIssueChanges, readOwnIssueChanges, readPullChanges, split, toIssue, toPullRequest } from "./_github-lists.ts";
import type { RawIssue } from "./_github-lists.ts";
import { BODY_AUTHORSHIP_QUERY, authorshipOf, issuesTrustQuery, trustAnswers } from "./_github-trust.ts";
import type { RawAuthorship } from "./_github-trust.ts";
import type { RetryNotice, TransportOptions } from "./_github-transport.ts";
import type { BodyAuthorship, GitHubComment, GitHubReader, GitHubRepository, GitHubReview, GitHubWriter, IssueEvent, IssueTrustAnswer } from "./github-types.ts";

export { GitHubError, RateLimitDeferred, toIssue, toPullRequest };
export type { RetryNotice };
export { readRateLimitState } from "./github-state.ts";
export { readToken, readTokenFile } from "./github-token.ts";

/** How `connectGitHub` behaves; tests shorten the waits. */
export interface GitHubOptions extends Partial<TransportOptions> {
  /** Where `github.token_env` is looked up (default: the process environment). */
  env?: Record<string, string | undefined>;
}

/** A connection to GitHub: the reader, the real writer, and where it points. */
export interface GitHub extends GitHubReader {
  /** The real writer; `wireEffects` decides whether anything uses it. */
  readonly writer: GitHubWriter;
  /** `github.api_base`, without a trailing slash. */
  readonly apiBase: string;
  /** Whether a token was found (otherwise reads are anonymous). */
  readonly authenticated: boolean;
}


/**
 * Connects to `config.github.api_base` with the token from `github.token_file` (which
 * must be readable by its owner only) or the variable `github.token_env` names. ETags and
 * the rate-limit state are kept in `store` (in memory without one).
 */
export async function connectGitHub(config: Config, store: Store | null, options: GitHubOptions = {}): Promise<GitHub> {
  const token = readToken(config.github, options.env);
  const apiBase = config.github.api_base.replace(/\/+$/, "");
  const memory = gitHubMemory(store, apiBase);
  // What is remembered of a token is keyed by a fingerprint of it, never the token itself.
  const tokenKey = token === null ? "anonymous" : `token sha256:${sha256Hex(token).slice(0, 16)}`;
  const { Octokit } = await import("@octokit/rest");
  // The host in the user agent: the requests of each machine an owner runs are told apart (GitHub's logs, the forge's counts).
  const octokit: Octokit = new Octokit({ baseUrl: apiBase, auth: token ?? undefined, userAgent: `robot-army (host ${hostName(config)})`, log: SILENT });
  const transport = makeTransport(memory, (call) => octokit.request.endpoint.parse(call as never), {
    timeoutMs: options.timeoutMs ?? 30_000,
    maxAttempts: options.maxAttempts ?? 4,
    backoffMs: options.backoffMs ?? 1000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 120_000,
    rateLimitFloor: options.rateLimitFloor ?? 50,
    writeSpacingMs: options.writeSpacingMs ?? defaultWriteSpacing(apiBase),
    sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    now: options.now ?? (() => clockNow()),
    onRetry: options.onRetry,
  });
  octokit.hook.wrap("request", transport.hook as never);

  const counted = async <T>(read: () => Promise<T>): Promise<T & { requests: number; notModified: number }> => {
    const before = { ...transport.counts };
    const result = await read();
    return { ...result, requests: transport.counts.requests - before.requests, notModified: transport.counts.notModified - before.notModified };
  };

  return {
    apiBase,
    authenticated: token !== null,
    async getRepository(repo) {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}", split(repo));
      return toRepository(data as unknown as Record<string, unknown>);
    },
    async getIssue(repo, number) {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}", { ...split(repo), issue_number: number });
      return toIssue(data as unknown as RawIssue);
    },
    issueChanges: (repo, options = {}) => counted(() => readIssueChanges(octokit, memory, apiBase, repo, options.simulated === true)),
    pullChanges: (repo, options = {}) => counted(() => readPullChanges(octokit, memory, apiBase, repo, options.since)),
    commentChanges: (repo, options = {}) => counted(() => readCommentChanges(octokit, memory, apiBase, repo, options.since)),
    pullReviews: (repo, number) => readReviews(octokit, repo, number),
    async issueBlockers(repo, number) {
      type RawBlocking = { number: number; state: string; html_url: string; repository_url?: string; repository?: { full_name?: string } };
      const raw = await allPages<RawBlocking>(octokit, "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", { ...split(repo), issue_number: number, per_page: PER_PAGE });
      // A blocking issue may be another repository's: its own address says which.
      const repoOf = (r: RawBlocking) => r.repository?.full_name ?? (/\/repos\/([^/]+\/[^/]+)$/.exec(r.repository_url ?? "")?.[1] ?? repo);
      return raw.map((r) => ({ repo: repoOf(r), number: Number(r.number), state: r.state === "closed" ? "closed" : "open", html_url: r.html_url }));
    },
    async commitChecks(repo, sha) {
      type RawRun = { id: number; name: string; status: string; conclusion: string | null; details_url?: string | null; html_url?: string | null; output?: { title?: string | null }; app?: { slug?: string } | null };
      type RawStatus = { context: string; state: string; target_url?: string | null; description?: string | null; creator?: { login: string } | null };
      const runs = await octokit.request("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", { ...split(repo), ref: sha, per_page: PER_PAGE });
      const combined = await octokit.request("GET /repos/{owner}/{repo}/commits/{ref}/status", { ...split(repo), ref: sha, per_page: PER_PAGE });
      return {
        runs: ((runs.data as unknown as { check_runs: RawRun[] }).check_runs ?? []).map((r) => ({
          id: Number(r.id), name: r.name, status: r.status, conclusion: r.conclusion ?? null, url: r.details_url || r.html_url || "", title: r.output?.title ?? null, app: r.app?.slug ?? null,
        })),
        statuses: ((combined.data as unknown as { statuses: RawStatus[] }).statuses ?? []).map((st) => ({
          context: st.context, state: st.state, url: st.target_url ?? null, description: st.description ?? null, creator: st.creator?.login ?? null,
        })),
      };
    },
    async branchTip(repo, branch) {
      const key = `${apiBase}/repos/${repo}/git/ref/heads/${branch}`;
      const mark = memory.mark(key);
      try {
        const response = await octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", { ...split(repo), ref: `heads/${branch}`, headers: mark ? { "if-none-match": mark.etag } : {} });
        if ((response.status as number) === 304 && mark?.highWater) {
          memory.touchMark(key);
          return mark.highWater;
        }
        const sha = (response.data as { object: { sha: string } }).object.sha;
        if (response.headers.etag) memory.saveMark(key, { etag: response.headers.etag, highWater: sha });
        return sha;
      } catch (error) {
        if (error instanceof GitHubError && error.status === 404) return null;
        throw error;
      }
    },
    async pullMergeability(repo, number) {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", { ...split(repo), pull_number: number });
      return { mergeable: data.mergeable ?? null, head_sha: data.head.sha, base_branch: data.base.ref, base_sha: data.base.sha };
    },
    issueListReadAt: (repo, options = {}) => memory.mark(issueListKey(apiBase, repo, options.simulated === true))?.readAt,
    ownIssueChanges: (repos, options = {}) => {
      const simulated = options.simulated === true;
      const covers = [...repos].map((repo) => repo.toLowerCase()).sort().join(",");
      const key = `${apiBase}/user/issues?filter=created&state=all&sort=updated&direction=desc&per_page=${PER_PAGE} (${covers}; ${tokenKey}${simulated ? ", simulated passes" : ""})`;
      return counted(() => readOwnIssueChanges(octokit, memory, key, repos, oldestMark(repos.map((repo) => memory.mark(issueListKey(apiBase, repo, simulated))))));
    },
    async whoami() {
      if (token === null) return null;
      const { data } = await octokit.request("GET /user");
      return data.login;
    },
    async tokenLogin() {
      if (token === null) return null;
      const known = memory.login(`${apiBase}/user (${tokenKey})`);
      if (known !== undefined) return known;
      const { data } = await octokit.request("GET /user");
      memory.saveLogin(`${apiBase}/user (${tokenKey})`, data.login);
      return data.login;
    },
    rateLimit: () => memory.rateLimit(),
    listComments: (repo, issue, since) => readComments(octokit, repo, issue, since),
    issueEvents: (repo, number) => readIssueEvents(octokit, repo, number),
    bodyAuthorship: (repo, number) => readBodyAuthorship(octokit, apiBase, repo, number),
    issuesTrust: (repo, numbers) => readIssuesTrust(octokit, apiBase, repo, numbers),
    requestsSent: () => transport.counts.requests,
    async readRef(repo, ref) {
      try {
        const { data } = await octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", { ...split(repo), ref: ref.replace(/^refs\//, ""), request: RESERVE });
        return data.object.sha;
      } catch (error) {
        if (error instanceof GitHubError && error.status === 404) return null;
        throw error;
      }
    },
    async matchingRefs(repo, prefix) {
      const found: Array<{ ref: string; sha: string }> = [];
      type RawRef = { ref: string; object: { sha: string } };
      let response = await octokit.request("GET /repos/{owner}/{repo}/git/matching-refs/{ref}", { ...split(repo), ref: prefix.replace(/^refs\//, ""), per_page: 100, request: RESERVE });
      found.push(...(response.data as unknown as RawRef[]).map((r) => ({ ref: r.ref, sha: r.object.sha })));
      for (let next = nextLink(response.headers.link); next; next = nextLink(response.headers.link)) {
        response = await octokit.request({ method: "GET", url: next, request: RESERVE }) as typeof response;
        found.push(...(response.data as unknown as RawRef[]).map((r) => ({ ref: r.ref, sha: r.object.sha })));
      }
      return found.filter((r) => r.ref.startsWith(prefix));
    },
    async readCommit(repo, sha) {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/git/commits/{commit_sha}", { ...split(repo), commit_sha: sha, request: RESERVE });
      return { message: data.message, parents: data.parents.map((parent: { sha: string }) => parent.sha) };
    },
    async readCommitMessage(repo, sha) {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/git/commits/{commit_sha}", { ...split(repo), commit_sha: sha, request: RESERVE });
      return data.message;
    },
    writer: realWriter(octokit),
  };
}

// Trust: who labelled an issue, who renamed it and who edited its body.

type RawEvent = {
  event: string; actor: { login: string } | null; label?: { name: string }; rename?: { from: string; to: string }; created_at: string;
};

/** An issue's label and rename events, oldest first: one request, and more only when GitHub says there are more pages. */
async function readIssueEvents(octokit: Octokit, repo: string, number: number): Promise<IssueEvent[]> {
  const events: RawEvent[] = [];
  let response = await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}/events", { ...split(repo), issue_number: number, per_page: PER_PAGE });
  events.push(...(response.data as unknown as RawEvent[]));
  for (let next = nextLink(response.headers.link); next; next = nextLink(response.headers.link)) {
    response = await octokit.request({ method: "GET", url: next }) as typeof response;
    events.push(...(response.data as unknown as RawEvent[]));
  }
  return events.flatMap((e): IssueEvent[] => {
    // A deleted account shows as GitHub's "ghost"; it is someone, and not the owner.
    const actor = e.actor?.login ?? "ghost";
    if ((e.event === "labeled" || e.event === "unlabeled") && e.label?.name) return [{ event: e.event, label: e.label.name, actor, at: e.created_at }];
    if (e.event === "renamed" && e.rename) return [{ event: "renamed", from: String(e.rename.from), to: String(e.rename.to), actor, at: e.created_at }];
    return [];
  });
}

/** One GraphQL request: who opened the issue, its title and body, and every revision's editor. */
async function readBodyAuthorship(octokit: Octokit, apiBase: string, repo: string, number: number): Promise<BodyAuthorship> {
  const { owner, repo: name } = split(repo);
  const url = graphqlUrl(apiBase);
  const { data } = await octokit.request({ method: "POST", url, query: BODY_AUTHORSHIP_QUERY, variables: { owner, name, number } });
  const answer = data as { data?: { repository: { issue: RawAuthorship | null } | null }; errors?: Array<{ message: string }> };
  const issue = answer.data?.repository?.issue;
  if (answer.errors?.length || !issue) {
    const problem = answer.errors?.map((e) => e.message).join("; ") || `no issue ${repo}#${number} in the answer`;
    throw new GitHubError("POST", new URL(url).pathname, 200, problem);
  }
  return authorshipOf(issue);
}

/** One GraphQL request about up to TRUST_BATCH issues: what it vouches for of each (see _github-trust.ts). */
async function readIssuesTrust(octokit: Octokit, apiBase: string, repo: string, numbers: readonly number[]): Promise<Map<number, IssueTrustAnswer>> {
  const { owner, repo: name } = split(repo);
  const { data } = await octokit.request({ method: "POST", url: graphqlUrl(apiBase), query: issuesTrustQuery(numbers), variables: { owner, name } });
  return trustAnswers(data, numbers);
}

/** Where GitHub's GraphQL API is: `<api>/graphql`, or `<host>/api/graphql` for GitHub Enterprise's `<host>/api/v3`. */
export function graphqlUrl(apiBase: string): string {
  return /\/api\/v3$/.test(apiBase) ? `${apiBase.replace(/\/v3$/, "")}/graphql` : `${apiBase}/graphql`;
}


/** Every page of an issue's comments (the unfinished-effect sweep looks in them for a comment's marker). */
async function readComments(octokit: Octokit, repo: string, issue: number, since?: string): Promise<GitHubComment[]> {
  const raw = await allPages<RawComment>(octokit, "GET /repos/{owner}/{repo}/issues/{issue_number}/comments", {
    ...split(repo), issue_number: issue, per_page: PER_PAGE, ...(since ? { since } : {}),
  });
  return raw.map((c) => ({ id: Number(c.id), body: c.body ?? "", author: c.user?.login ?? "ghost", html_url: c.html_url, created_at: c.created_at }));
}

/** Every page of a list: the first asked with `params`, each next one by its `Link`, as GitHub gives it. */
async function allPages<T>(octokit: Octokit, route: string, params: Record<string, unknown>): Promise<T[]> {
  let response = await octokit.request(route, params);
  const items = [...(response.data as unknown as T[])];
  for (let next = nextLink(response.headers.link); next; next = nextLink(response.headers.link)) {
    response = await octokit.request({ method: "GET", url: next }) as typeof response;
    items.push(...(response.data as unknown as T[]));
  }
  return items;
}

type RawComment = { id: number; body?: string | null; user: { login: string } | null; html_url: string; created_at: string };

type RawReview = { id: number; user: { login: string } | null; state: string; body?: string | null; html_url: string; submitted_at?: string | null; commit_id?: string | null };

/** Every review of a pull request, oldest first. */
async function readReviews(octokit: Octokit, repo: string, number: number): Promise<GitHubReview[]> {
  const raw = await allPages<RawReview>(octokit, "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews", { ...split(repo), pull_number: number, per_page: PER_PAGE });
  const states = new Set(["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"]);
  return raw.map((r) => ({
    id: Number(r.id), author: r.user?.login ?? "ghost", state: (states.has(r.state) ? r.state : "COMMENTED") as GitHubReview["state"],
    body: r.body ?? "", html_url: r.html_url, submitted_at: r.submitted_at ?? null, commit_id: r.commit_id ?? null,
  }));
}

function realWriter(octokit: Octokit): GitHubWriter {
  return {
    simulated: false,
    async comment(repo, issue, body) {
      const { data } = await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { ...split(repo), issue_number: issue, body });
      return { id: Number(data.id), url: data.html_url };
    },
    async addLabels(repo, issue, labels) {
      await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", { ...split(repo), issue_number: issue, labels });
    },
    async removeLabel(repo, issue, label) {
      try {
        await octokit.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", { ...split(repo), issue_number: issue, name: label });
      } catch (error) {
        // Already gone is what was wanted.
        if (!(error instanceof GitHubError && error.status === 404)) throw error;
      }
    },
    async createClaim(repo, ref, message) {
      const { data: commit } = await octokit.request("POST /repos/{owner}/{repo}/git/commits", { ...split(repo), message, tree: EMPTY_TREE, parents: [], request: RESERVE });
      try {
        await octokit.request("POST /repos/{owner}/{repo}/git/refs", { ...split(repo), ref, sha: commit.sha, request: RESERVE });
      } catch (error) {
        // GitHub's answer when the reference exists: someone holds the claim (the caller reads who).
        if (error instanceof GitHubError && error.status === 422) return { created: false, sha: commit.sha };
        throw error;
      }
      return { created: true, sha: commit.sha };
    },
    async advanceClaim(repo, ref, from, message) {
      const { data: commit } = await octokit.request("POST /repos/{owner}/{repo}/git/commits", { ...split(repo), message, tree: EMPTY_TREE, parents: [from], request: RESERVE });
      try {
        await octokit.request("PATCH /repos/{owner}/{repo}/git/refs/{ref}", { ...split(repo), ref: ref.replace(/^refs\//, ""), sha: commit.sha, force: false, request: RESERVE });
      } catch (error) {
        // GitHub's answer when the reference is no longer at `from` (not a fast-forward) or gone: the caller reads who holds it.
        if (error instanceof GitHubError && error.status === 422) return { moved: false, sha: commit.sha };
        throw error;
      }
      return { moved: true, sha: commit.sha };
    },
    async deleteClaim(repo, ref) {
      try {
        await octokit.request("DELETE /repos/{owner}/{repo}/git/refs/{ref}", { ...split(repo), ref: ref.replace(/^refs\//, ""), request: RESERVE });
      } catch (error) {
        // "Reference does not exist": already gone is what was wanted. Any other refusal ("Reference update failed") is one.
        if (error instanceof GitHubError && error.status === 422 && error.message.includes("Reference does not exist")) return "gone";
        throw error;
      }
      return "deleted";
    },
  };
}

/** Git's empty tree, which every repository knows: a claim's commit holds no files. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/**
 * The request option of every git data call (claims and heartbeats): it may spend the
 * requests the rate-limit floor keeps back from every other call (lib/boundaries/rate-budget.ts).
 */
const RESERVE = { reserve: true };

/** The settings whose change makes onboarding ask again (those GitHub reports to this token alike every time). */
const SETTINGS = ["default_branch", "private", "visibility", "archived", "disabled", "has_issues", "allow_merge_commit", "allow_squash_merge", "allow_rebase_merge", "allow_auto_merge", "delete_branch_on_merge"];

function toRepository(raw: Record<string, unknown>): GitHubRepository {
  const settings: Record<string, unknown> = {};
  for (const key of SETTINGS) if (raw[key] !== undefined) settings[key] = raw[key];
  settings.owner = (raw.owner as { login?: string } | undefined)?.login;
  return {
    full_name: String(raw.full_name),
    default_branch: String(raw.default_branch),
    clone_url: String(raw.clone_url),
    html_url: String(raw.html_url),
    private: raw.private === true,
    settings,
    permissions: permissionsOf(raw.permissions),
  };
}

/** The viewer's permissions as GitHub gives them with a repository, or null when it gives none. */
function permissionsOf(raw: unknown): GitHubRepository["permissions"] {
  if (typeof raw !== "object" || raw === null) return null;
  const given = raw as Record<string, unknown>;
  const flag = (key: string) => given[key] === true;
  return { pull: flag("pull"), triage: flag("triage"), push: flag("push"), maintain: flag("maintain"), admin: flag("admin") };
}


/**
 * A second between content-creating requests, as GitHub asks, for GitHub and GitHub
 * Enterprise; none for an API on loopback (the sandbox forge, whose tests, scenarios and
 * rehearsals would only be slowed), which imposes the same limit and answers retry-after
 * like GitHub if it is passed.
 */
export function defaultWriteSpacing(apiBase: string): number {
  let host = "";
  try {
    host = new URL(apiBase).hostname;
  } catch {
    return 1000;
  }
  return host === "localhost" || host === "[::1]" || /^127\./.test(host) ? 0 : 1000;
}

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
