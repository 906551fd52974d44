/**
 * Setup `forge-with-token-printing-post-create`: `forge-with-worker` with a post-create step
 * that fails in issue 1's worktree only, after printing the GitHub token robot-army uses
 * (it `cat`s the config's token file, as a careless install script echoes `$TOKEN`), once
 * on a line of its own and once inside a URL. Other worktrees pass it.
 */
import { appendFileSync } from "node:fs";
import { setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The step's script: in issue 1's worktree, prints the token file's content to stderr and fails. */
function step(tokenFile: string): string {
  const file = `'${tokenFile.replaceAll("'", `'\\''`)}'`;
  return `case "$PWD" in */issue-1) t=$(cat ${file}); echo "token: $t" >&2; echo "fatal: could not push to https://x:$t@forge.internal" >&2; exit 7;; esac`;
}

/** The forge, the clone, the worker config, and the token-printing post-create step. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  appendFileSync(made.vars!.CONFIG, ["[worktrees]", `post_create = [["sh", "-c", ${JSON.stringify(step(made.vars!.OWNER_TOKEN))}]]`, ""].join("\n"));
  return made;
}
