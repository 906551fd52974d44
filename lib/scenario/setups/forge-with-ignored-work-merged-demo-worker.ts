/**
 * Setup `forge-with-ignored-work-merged-demo-worker`: `forge-with-merged-demo-worker` (the demo
 * worker for issue 1 idle at its prompt, its pull request merged) where the owner's global git
 * ignore file (`~/.config/git/ignore`: `*.env`, `node_modules/`) hides two things in the
 * worktree from `git status`: a `prod.env` of the owner's, the only copy, and a
 * `node_modules/` the worker's tests installed. git reports the worktree clean.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { worktreeOf } from "./_cleanup.ts";
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withIgnoredWork(ctx, { ownersFile: true });
}

/** The merged demo worker, with `node_modules/` (and, with `ownersFile`, `prod.env`) hidden in its worktree by the owner's global ignore file. */
export function withIgnoredWork(ctx: SetupContext, options: { ownersFile: boolean }): Promise<SetupResult> {
  return withIdleDemoWorkers(ctx, {
    issues: 1,
    owner: async (api, pulls) => {
      await mergeAll(api, pulls);
      const ignore = join(ctx.env.HOME, ".config", "git");
      mkdirSync(ignore, { recursive: true });
      writeFileSync(join(ignore, "ignore"), "*.env\nnode_modules/\n");
      const worktree = worktreeOf(ctx, 1);
      if (options.ownersFile) writeFileSync(join(worktree, "prod.env"), "DATABASE_PASSWORD=the-only-copy\n");
      mkdirSync(join(worktree, "node_modules", "left-pad"), { recursive: true });
      writeFileSync(join(worktree, "node_modules", "left-pad", "index.js"), "module.exports = (s) => s;\n");
    },
  });
}
