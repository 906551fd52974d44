/**
 * `doctor`'s look at each configured repository: its clone (the configured path exists and
 * is a git clone whose origin is that repository, as GitHub describes it), whether it is
 * onboarded here, and what the token's account may do in it: read its issues and comment
 * (`pull`: without it nothing works), push branches, claim issues with git references and open
 * pull requests (`push`: at the live effect level robot-army claims each issue before its worker
 * starts, so without it a failure there, a warning below it), as GitHub answers it (the account's
 * role; a fine-grained token may be granted less), never assumed. Nothing is written.
 */
import { existsSync } from "node:fs";
import { remoteUrl } from "../boundaries/git.ts";
import type { GitHubReader } from "../boundaries/github-types.ts";
import type { Config } from "../config.ts";
import { daemonWritesToGitHub } from "../effects.ts";
import { originMatches, redactedRemote } from "../repos/origin.ts";
import type { RepoRecord } from "../repos/records.ts";

/** One repository's verdict: ok, warn (a step still to take) or FAIL (it cannot work), with what was found. */
export interface RepoCheck {
  repo: string;
  status: "ok" | "warn" | "FAIL";
  detail: string;
}

/** Checks every configured repository; `github` is null when GitHub cannot be asked (then the clone's origin and the token's rights go unchecked). */
export async function checkRepos(config: Config, records: readonly RepoRecord[], github: Pick<GitHubReader, "getRepository"> | null): Promise<RepoCheck[]> {
  const checks: RepoCheck[] = [];
  for (const [repo, { path }] of Object.entries(config.repos)) {
    const fail = (detail: string) => checks.push({ repo, status: "FAIL", detail: `${repo}: ${detail}` });
    if (!existsSync(path)) {
      fail(`${path} does not exist: clone the repository there, or fix [repos."${repo}"] path`);
      continue;
    }
    const origin = await remoteUrl(path, "origin").catch(() => undefined);
    if (!origin) {
      fail(`${path} is not a git clone with an origin remote`);
      continue;
    }
    const found: string[] = [];
    let status: RepoCheck["status"] = "ok";
    if (github) {
      let described;
      try {
        described = await github.getRepository(repo);
      } catch (error) {
        fail(`GitHub does not show it to the token (${error instanceof Error ? error.message : String(error)})`);
        continue;
      }
      if (!originMatches(origin, described, path)) {
        fail(`the origin of ${path} is ${redactedRemote(origin)}, not ${described.html_url}: point [repos."${repo}"] path at a clone of it`);
        continue;
      }
      found.push(`${path} is a clone of it`);
      // GitHub's answer is the token's account's role there; a fine-grained token may be granted less than its account holds.
      const rights = described.permissions;
      if (!rights) found.push("GitHub does not say what the token's account may do there");
      else if (!rights.pull) {
        fail("the token's account may not read it: give it read access to the repository's contents and issues");
        continue;
      } else if (!rights.push) {
        // At live each issue is claimed with a git reference before its worker starts (lib/work-items/issue-claims.ts): that needs push.
        const live = daemonWritesToGitHub(config);
        status = live ? "FAIL" : "warn";
        found.push(live
          ? "the token's account may read its issues and comment, not push: at the live effect level robot-army claims each issue on GitHub with a git reference before its worker starts, which needs push (contents: write), so nothing is dispatched to it; and a worker pushing with these credentials cannot push its branch nor open its pull request"
          : "the token's account may read its issues and comment, not push: robot-army reads and comments with it below the live effect level, but at live it claims each issue with a git reference, which needs push (contents: write), and a worker pushing with these credentials cannot push its branch nor open its pull request");
      } else found.push("the token's account may read its issues, comment, push (and so claim issues with git references) and open pull requests");
    } else found.push(`${path} has an origin (${redactedRemote(origin)}), not checked against GitHub`);
    const record = records.find((r) => r.name === repo);
    // A step to take is a warning, never one that hides a failure found above.
    const warn = () => void (status = status === "FAIL" ? "FAIL" : "warn");
    if (!record) {
      warn();
      found.push(`not onboarded, so nothing is dispatched to it: "robot-army onboard ${repo}"`);
    } else if (record.state === "needs_reapproval") {
      warn();
      found.push(`changed since you approved it, so nothing is dispatched to it: "robot-army onboard ${repo} --diff", then --reapprove`);
    } else found.push("onboarded");
    checks.push({ repo, status, detail: `${repo}: ${found.join(", ")}` });
  }
  return checks;
}
