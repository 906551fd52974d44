/**
 * Setup `forge-with-claude-worker`: `forge-with-tmux-worker` whose worker is a stand-in for Claude
 * Code, `<dir>/bin/claude` (so its profile is claude, from the binary's name), in tmux as an
 * interactive agent must be. Like Claude
 * Code it reads its worktree's `.claude/settings.local.json` and runs the hooks there through
 * a shell with each event's JSON on stdin: SessionStart, UserPromptSubmit and Stop as it
 * starts, SessionEnd when it is stopped; it prints the `--session-id` it was given, then waits
 * at its "prompt". `${CLAUDE}` is its path.
 */
import { writeClaudeStandIn } from "./_claude-stand-in.ts";
import { withTmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

const STAND_IN = `// A stand-in for Claude Code: runs the hooks its worktree's local settings name, as Claude Code does.
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
const args = process.argv.slice(2);
const id = args[args.indexOf("--session-id") + 1];
const settings = JSON.parse(readFileSync(".claude/settings.local.json", "utf8"));
function fire(event, fields) {
  for (const group of settings.hooks?.[event] ?? []) {
    for (const hook of group.hooks ?? []) {
      const input = JSON.stringify({ session_id: id, transcript_path: "/tmp/" + id + ".jsonl", cwd: process.cwd(), permission_mode: "default", hook_event_name: event, ...fields });
      spawnSync("sh", ["-c", hook.command], { input, stdio: ["pipe", "inherit", "inherit"] });
    }
  }
}
console.log("claude stand-in: session " + id);
fire("SessionStart", { source: "startup" });
fire("UserPromptSubmit", { prompt: "(the prompt)" });
fire("Stop", { stop_hook_active: false });
console.log("claude stand-in: waiting at its prompt");
const wait = setInterval(() => {}, 60_000);
process.on("SIGTERM", () => { fire("SessionEnd", { reason: "other" }); clearInterval(wait); process.exit(0); });
`;

/** Writes the stand-in and a config whose worker it is. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const claude = writeClaudeStandIn(ctx.dir, "claude-stand-in", STAND_IN);
  const made = await withTmuxWorker(ctx, { binary: claude, args: [] });
  return { ...made, vars: { ...made.vars, CLAUDE: claude } };
}
