/** Picks the launcher `worker.launcher` names, with its settings from the config. */
import type { Config } from "../../config.ts";
import { MAX_TIMER_MS, parseDuration } from "../../duration.ts";
import { PreconditionError } from "../../errors.ts";
import type { Env } from "./session-run.ts";
import { KittyLauncher } from "./kitty.ts";
import { ProcessLauncher } from "./process.ts";
import { TmuxLauncher, isTmuxSessionName } from "./tmux.ts";
import type { Launcher, LauncherName } from "./types.ts";

/** What the config does not say: the environment, and where tmux and kitty are reached. */
export interface LauncherOptions {
  /** The environment robot-army runs in (default: `process.env`). */
  env?: Env;
  /** Use this launcher instead of `worker.launcher` (e.g. `npm start` picks tmux only inside tmux). */
  launcher?: LauncherName;
  /** A tmux socket name (`tmux -L`); default: `worker.tmux_socket`, else tmux's own choice. */
  tmuxSocket?: string;
  /** The kitty program (default `kitty`). */
  kittyBinary?: string;
  /** The kitty to control (`kitty @ --to`). */
  kittyTo?: string;
  /** How long a launch waits for its session (default: `daemon.confirm_timeout`). */
  timeoutMs?: number;
}

/**
 * The launcher for this config.
 * @example const launcher = launcherFor(config, { env: process.env });
 */
export function launcherFor(config: Config, options: LauncherOptions = {}): Launcher {
  const timeoutMs = options.timeoutMs ?? parseDuration(config.daemon.confirm_timeout, "daemon.confirm_timeout", MAX_TIMER_MS);
  const base = { env: options.env, timeoutMs };
  const name = options.launcher ?? config.worker.launcher;
  switch (name) {
    case "tmux":
      if (!isTmuxSessionName(config.worker.tmux_session)) {
        throw new PreconditionError(`worker.tmux_session "${config.worker.tmux_session}" must be letters, digits, "_" or "-" (at most 64)`);
      }
      return new TmuxLauncher({ ...base, session: config.worker.tmux_session, socket: options.tmuxSocket ?? config.worker.tmux_socket });
    case "kitty":
      return new KittyLauncher({ ...base, binary: options.kittyBinary, to: options.kittyTo });
    case "process":
      return new ProcessLauncher(base);
    default:
      throw new RangeError(`Unknown launcher "${String(name)}"`);
  }
}
