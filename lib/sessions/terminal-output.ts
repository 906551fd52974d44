/**
 * The terminal a foreground session writes to, and what it shows, for `session peek`: a
 * session run in a tmux pane (as the tmux launcher runs workers) writes to the pane, not to
 * its log, so its last lines are read from the pane with `tmux capture-pane`, on the tmux
 * server the holder recorded, and only while that same server runs (pane ids start again
 * on a new one). tmux is run through dax, argv only.
 */
import { runCommand } from "../run-command.ts";
import type { TerminalRef } from "./records.ts";

type Env = Record<string, string | undefined>;

const SERVER_FORMAT = "#{pid} #{start_time}";

/** The line tmux ends a kept pane with once its command ended (remain-on-exit): tmux's, not the session's. */
export const DEAD_PANE = /^Pane is dead\b/;

/** The terminal this process writes to: its tmux pane when tmux says so (`$TMUX`, `$TMUX_PANE`), else a terminal of another kind. */
export async function terminalOf(env: Env): Promise<TerminalRef> {
  const socket = env.TMUX?.split(",")[0];
  const pane = env.TMUX_PANE;
  if (!socket || !pane || !/^%\d+$/.test(pane)) return { kind: "tty" };
  return { kind: "tmux", socket, pane, server: await tmuxServer(socket, pane, env) };
}

/** The pane's last `count` lines (runs of blank rows cut to one, the screen's empty end dropped), or why they cannot be read. */
export async function terminalLines(terminal: TerminalRef, count: number, env: Env = process.env): Promise<{ lines: string[] } | { unreadable: string }> {
  if (terminal.kind !== "tmux") return { unreadable: "it writes to the terminal it runs in, not to a log: look there" };
  const captured = await capturePane(terminal, { history: Math.max(count, 1) + 200, colours: false }, env);
  if ("unreadable" in captured) return captured;
  // The pane is a screen: its unused rows are blank, and a pane kept after its command ended
  // (remain-on-exit) ends with tmux's own "Pane is dead" line, which is not the session's.
  const lines = captured.text.split("\n").map((line) => line.trimEnd()).filter((line, i, all) => line !== "" || (i > 0 && all[i - 1] !== ""));
  while (lines.length && (lines.at(-1) === "" || DEAD_PANE.test(lines.at(-1)!))) lines.pop();
  return { lines: lines.slice(-count) };
}

/** A session's tmux pane, as its record names it. */
export type TmuxPane = Extract<TerminalRef, { kind: "tmux" }>;

/**
 * The pane's screen and up to `history` lines of its scrollback as `capture-pane -p -J`
 * prints them (wrapped lines joined; `colours`: with their escape sequences, `-e`), read
 * only while the tmux server the session recorded runs; else why it cannot be read.
 */
export async function capturePane(terminal: TmuxPane, options: { history: number; colours: boolean }, env: Env = process.env): Promise<{ text: string } | { unreadable: string }> {
  const server = await tmuxServer(terminal.socket, terminal.pane, env);
  if (server === null || terminal.server === null || server !== terminal.server) {
    return { unreadable: `its tmux pane ${terminal.pane} is gone${terminal.server === null ? " or cannot be told from another" : " (the tmux server it ran on has stopped)"}` };
  }
  const argv = tmuxArgv(terminal.socket, "capture-pane", ...(options.colours ? ["-e"] : []), "-p", "-J", "-t", terminal.pane, "-S", `-${options.history}`);
  const result = await runCommand(argv, quiet(env), { timeoutMs: 5_000 });
  if (result.code !== 0) return { unreadable: `its tmux pane ${terminal.pane} cannot be read (${result.stderr.trim() || `tmux exited ${result.code}`})` };
  return { text: result.stdout };
}

/** `<pid> <start time>` of the tmux server holding the pane, or null when there is none. */
async function tmuxServer(socket: string, pane: string, env: Env): Promise<string | null> {
  const result = await runCommand(tmuxArgv(socket, "display-message", "-p", "-t", pane, SERVER_FORMAT), quiet(env), { timeoutMs: 5_000 });
  const answer = result.stdout.trim();
  return result.code === 0 && /^\d+ \d+$/.test(answer) ? answer : null;
}

function tmuxArgv(socket: string, ...args: string[]): string[] {
  return ["tmux", "-S", socket, ...args];
}

/** The environment minus `$TMUX`, so tmux talks to the socket named, not the one it runs in. */
function quiet(env: Env): Env {
  return { ...env, TMUX: undefined };
}
