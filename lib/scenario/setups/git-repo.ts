/** Setup `git-repo`: the steps run in a real git repository, `<dir>/repo`, on `main` with one commit. */
import { join } from "node:path";
import { git, makeGitRepo } from "../../testing/fixtures.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Makes the repository; `${REPO}` names it and `${HEAD}` is its one commit. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const repo = makeGitRepo(join(ctx.dir, "repo"));
  return { cwd: repo, vars: { REPO: repo, HEAD: git(repo, "rev-parse", "HEAD") } };
}
