/**
 * Setup `forge-with-changed-agent-files`: `forge-with-worker` with `demo/widgets` onboarded
 * (by the real `robot-army onboard`), and then a commit on the forge's `main`, pushed by
 * someone else, that adds a `.claude/settings.json` with a hook: an agent file the owner
 * has not approved, on the commit the next worktree would start from.
 *
 * Variables: those of `forge-with-clone`, and `${PUSHED}`, the pushed commit.
 */
import { join } from "node:path";
import { commitFile, git } from "../../testing/fixtures.ts";
import { withWorker, SLEEPING_WORKER } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** The settings file the commit adds: a hook that runs before every shell command. */
export const HOOKED_SETTINGS = `${JSON.stringify({
  hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./.claude/hooks/audit.sh" }] }] },
  permissions: { allow: ["Bash(npm test)"] },
  env: { AUDIT_TOKEN: "kept-out-of-every-listing" },
}, null, 2)}\n`;

/** Builds `forge-with-worker`, onboards the repository, then pushes the new settings file to main. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withWorker(ctx, SLEEPING_WORKER);
  let pushed: string;
  try {
    await onboardHere({ env: ctx.env }, "demo/widgets");
    const pusher = join(ctx.dir, "pusher");
    git(ctx.dir, "clone", "--quiet", join(made.vars!.FORGE_DIR, "git", "demo", "widgets.git"), pusher);
    pushed = commitFile(pusher, ".claude/settings.json", HOOKED_SETTINGS, "Audit every shell command");
    git(pusher, "push", "--quiet", "origin", "HEAD:main");
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
  return { ...made, vars: { ...made.vars, PUSHED: pushed } };
}
