/**
 * Picks the launcher `worker.launcher` names, with its settings from the config; or, for the
 * tab sweep, the launcher that reaches the terminal server a session row recorded.
 */
import type { Config } from "../../config.ts";
import { MAX_TIMER_MS, parseDuration } from "../../duration.ts";
import { PreconditionError } from "../../errors.ts";
import type { Env } from "./session-run.ts";
import { KittyLauncher } from "./kitty.ts";
import { ProcessLauncher } from "./process.ts";
import { TmuxLauncher, isTmuxSessionName } from "./tmux.ts";
import type { Launcher, LauncherName, Terminal } from "./types.ts";

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

/**
 * The launcher that reaches the terminal server a session was recorded on (its row's
 * `terminal`), whatever the config says now: the tab sweep looks for an item's tabs there.
 * @example const launcher = launcherForTerminal({ launcher: "tmux", socket: null, socket_path: "/tmp/tmux-1000/default", session: "ra" });
 */
export function launcherForTerminal(terminal: Terminal, options: Pick<LauncherOptions, "env" | "kittyBinary"> = {}): Launcher {
  switch (terminal.launcher) {
    case "tmux":
      return new TmuxLauncher({ env: options.env, session: terminal.session, socket: terminal.socket ?? undefined, socketPath: terminal.socket_path ?? undefined });
    case "kitty":
      return new KittyLauncher({ env: options.env, binary: options.kittyBinary, to: terminal.to ?? undefined });
    case "process":
      return new ProcessLauncher({ env: options.env });
  }
}

/**
 * The terminal server the config names for a launcher: where a session row from before
 * terminals were recorded is taken to have been launched.
 */
export function configuredTerminal(config: Config, launcher: string, options: Pick<LauncherOptions, "tmuxSocket" | "kittyTo"> = {}): Terminal | null {
  switch (launcher) {
    case "tmux":
      return isTmuxSessionName(config.worker.tmux_session)
        ? { launcher: "tmux", socket: options.tmuxSocket ?? config.worker.tmux_socket ?? null, socket_path: null, session: config.worker.tmux_session }
        : null;
    case "kitty":
      return { launcher: "kitty", to: options.kittyTo ?? null };
    case "process":
      return { launcher: "process" };
    default:
      return null;
  }
}

/** One string per terminal server, to ask each one once. */
export function terminalKey(terminal: Terminal): string {
  switch (terminal.launcher) {
    case "tmux":
      return JSON.stringify(["tmux", terminal.socket_path ?? `-L ${terminal.socket ?? ""}`, terminal.session]);
    case "kitty":
      return JSON.stringify(["kitty", terminal.to]);
    case "process":
      return JSON.stringify(["process"]);
  }
}
