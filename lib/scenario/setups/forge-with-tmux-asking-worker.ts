/**
 * Setup `forge-with-tmux-asking-worker`: `forge-with-tmux-worker` whose worker asks a question
 * at its prompt ("Which option, 1 or 2?"), reads one line, says what it read and runs on, as an
 * agent waiting for its owner does; the owner answers with `robot-army send`.
 */
import { SLEEPING_WORKER } from "./forge-with-worker.ts";
import { withTmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge, the clone, and a tmux worker that waits for one line at its prompt. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  const script = 'echo "Which option, 1 or 2?"; IFS= read -r answer; echo "you chose: $answer"; exec sleep 30';
  return withTmuxWorker(ctx, { binary: SLEEPING_WORKER.binary, args: ["-c", script] });
}
