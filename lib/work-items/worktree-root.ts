/** Where work items' worktrees are made: `worktrees.root`, else `<state dir>/worktrees`. */
import { join } from "node:path";
import type { Config } from "../config.ts";

/** The worktree root for this config and state dir. */
export function worktreeRoot(config: Pick<Config, "worktrees">, stateDir: string): string {
  return config.worktrees.root ?? join(stateDir, "worktrees");
}
