/**
 * Whether the launcher can host the agent: an interactive agent (Claude Code, Codex) needs a
 * terminal to wait at its prompt in. The process launcher gives it none, so such an agent
 * answers one turn, exits 0 and leaves its item interrupted; robot-army refuses that
 * combination instead, in `doctor` and at the gate every start passes (lib/dispatch/gate.ts).
 * The demo worker waits without a terminal, and a generic program is whatever it is.
 */
import type { Config, WorkerProfile } from "../config.ts";

/** The profiles whose agent needs a terminal to work in. */
export const INTERACTIVE_PROFILES: readonly WorkerProfile[] = ["claude", "codex"];

const AGENT_NAMES: Partial<Record<WorkerProfile, string>> = { claude: "Claude Code", codex: "Codex" };

/**
 * Why the configured launcher cannot host the configured agent, with the fix; null when it can.
 * @example launcherMisfit({ ...worker, profile: "claude", launcher: "process" }) // "worker profile claude (Claude Code) is an interactive agent ..."
 */
export function launcherMisfit(worker: Pick<Config["worker"], "profile" | "launcher">): string | null {
  if (worker.launcher !== "process" || !INTERACTIVE_PROFILES.includes(worker.profile)) return null;
  return `worker profile ${worker.profile} (${AGENT_NAMES[worker.profile]}) is an interactive agent and needs a terminal, which the process launcher does not give it ` +
    `(it would answer one turn and exit): set [worker] launcher = "tmux" (or "kitty")`;
}
