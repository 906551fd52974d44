/**
 * Setup `forge-with-untrusted-claude-worker`: `forge-with-worker` whose worker is a stand-in
 * for Claude Code in a folder it has not been told to trust, `<dir>/bin/claude` (so its profile
 * is claude), launched in tmux: like Claude Code it prints its folder-trust question and
 * waits for an answer, running none of the hooks in its worktree's settings.
 */
import { writeClaudeStandIn } from "./_claude-stand-in.ts";
import { withTmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

const STAND_IN = `// A stand-in for Claude Code at its folder-trust question: no hook runs until it is answered.
console.log(" Accessing workspace:");
console.log(" " + process.cwd());
console.log(" Quick safety check: Is this a project you created or one you trust?");
console.log(" ❯ No, exit");
console.log("   Yes, I trust this folder");
console.log(" Enter to confirm · Esc to cancel");
setInterval(() => {}, 60_000);
`;

/** Writes the stand-in and a config whose worker it is. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  return await withTmuxWorker(ctx, { binary: writeClaudeStandIn(ctx.dir, "claude-at-trust", STAND_IN), args: [] });
}
