/**
 * Setup `forge-with-codex-worker`: `forge-with-tmux-worker` whose worker is the real Codex CLI
 * (the pinned devDependency; its binary is named `codex`, so its profile is codex), in tmux as an
 * interactive agent must be, in a home where Codex has never been told to trust anything. The
 * scenarios that use it read and record folder trust; none starts a worker (the real Codex at
 * work, against a scripted model API, is scripts/codex.test.ts). `${CODEX}` is its path.
 */
import { codexBinary } from "../../testing/openai-api.ts";
import { withTmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** A config whose worker is Codex. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const codex = codexBinary();
  const made = await withTmuxWorker(ctx, { binary: codex, args: [] });
  return { ...made, vars: { ...made.vars, CODEX: codex } };
}
