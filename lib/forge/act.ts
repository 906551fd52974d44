/**
 * Acting on a running sandbox forge as one of its users, through its API as GitHub's own
 * clients would: a comment, a review, a check run's result, closing an issue, and one issue
 * blocking another. What `robot-army forge comment|review|check|close|block` runs, so a
 * scenario or a rehearsal can play the owner, a reviewer or a stranger.
 *
 * @example
 * const act = await actAs({ apiBase: forge.url, tokenFile: join(dir, "tokens", "owner") });
 * await act.review("demo/widgets", 6, { event: "REQUEST_CHANGES", body: "Rename foo." });
 */
import { readFileSync } from "node:fs";

/** What a review says of a pull request. */
export type ReviewEvent = "COMMENT" | "REQUEST_CHANGES" | "APPROVE";

/** One user's hand on the forge. */
export interface ForgeActor {
  login: string;
  comment(repo: string, number: number, body: string): Promise<{ id: number; url: string }>;
  review(repo: string, number: number, review: { event: ReviewEvent; body: string }): Promise<{ id: number; url: string }>;
  /** A finished check run on the pull request's head (needs push access). */
  check(repo: string, number: number, check: { name: string; conclusion: string; url?: string; title?: string }): Promise<{ id: number; sha: string }>;
  close(repo: string, number: number): Promise<void>;
  /** `number` is blocked by `blocker` (GitHub's issue dependencies). */
  block(repo: string, number: number, blocker: number): Promise<void>;
}

/** A hand on the forge at `apiBase` as the user whose token is in `tokenFile`. */
export async function actAs(options: { apiBase: string; tokenFile: string }): Promise<ForgeActor> {
  const { Octokit } = await import("@octokit/rest");
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const github = new Octokit({ baseUrl: options.apiBase, auth: readFileSync(options.tokenFile, "utf8").trim(), log: silent });
  const login = (await github.rest.users.getAuthenticated()).data.login;
  const split = (repo: string) => {
    const [owner, name] = repo.split("/");
    return { owner, repo: name };
  };
  return {
    login,
    async comment(repo, number, body) {
      const { data } = await github.rest.issues.createComment({ ...split(repo), issue_number: number, body });
      return { id: data.id, url: data.html_url };
    },
    async review(repo, number, review) {
      const { data } = await github.rest.pulls.createReview({ ...split(repo), pull_number: number, event: review.event, body: review.body });
      return { id: data.id, url: data.html_url };
    },
    async check(repo, number, check) {
      const sha = (await github.rest.pulls.get({ ...split(repo), pull_number: number })).data.head.sha;
      const { data } = await github.rest.checks.create({
        ...split(repo), name: check.name, head_sha: sha, status: "completed", conclusion: check.conclusion as "failure",
        ...(check.url ? { details_url: check.url } : {}), ...(check.title ? { output: { title: check.title, summary: check.title } } : {}),
      });
      return { id: data.id, sha };
    },
    async close(repo, number) {
      await github.rest.issues.update({ ...split(repo), issue_number: number, state: "closed" });
    },
    async block(repo, number, blocker) {
      const id = (await github.rest.issues.get({ ...split(repo), issue_number: blocker })).data.id;
      await github.request("POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", { ...split(repo), issue_number: number, issue_id: id });
    },
  };
}
