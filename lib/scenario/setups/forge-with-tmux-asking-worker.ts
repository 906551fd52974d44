/**
 * Setup `forge-with-tmux-asking-worker`: `forge-with-tmux-worker` whose worker asks a question
 * at its prompt ("Which option, 1 or 2?") and says what it read of each line after, as an agent
 * waiting for its owner does; the owner answers with `robot-army send` and the item page's box.
 */
import { SLEEPING_WORKER } from "./forge-with-worker.ts";
import { withTmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge, the clone, and a tmux worker that waits for lines at its prompt. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  const script = 'echo "Which option, 1 or 2?"; while IFS= read -r answer; do echo "you chose: $answer"; done';
  return withTmuxWorker(ctx, { binary: SLEEPING_WORKER.binary, args: ["-c", script] });
}
