/**
 * What a foreground session shows in its terminal, for `session peek`: a session run in
 * a tmux pane (as the tmux launcher runs workers) writes to the pane, not to its log, so
 * its last lines are read from the pane with `tmux capture-pane`, on the tmux server the
 * holder recorded. Nothing else is asked of tmux, and no shell is involved.
 */
import { spawnSync } from "node:child_process";
import type { TerminalRef } from "./records.ts";

const DEAD_PANE = /^Pane is dead\b/;

/** The pane's last `count` lines (runs of blank rows cut to one, the screen's empty end dropped), or why they cannot be read. */
export function terminalLines(terminal: TerminalRef, count: number): { lines: string[] } | { unreadable: string } {
  if (terminal.kind !== "tmux") return { unreadable: "it writes to the terminal it runs in, not to a log: look there" };
  const result = spawnSync("tmux", ["-S", terminal.socket, "capture-pane", "-p", "-J", "-t", terminal.pane, "-S", `-${Math.max(count, 1) + 200}`], {
    encoding: "utf8",
    timeout: 5_000,
    env: { ...process.env, TMUX: "" },
  });
  if (result.error || result.status !== 0) {
    const why = result.error?.message ?? (result.stderr.trim() || `tmux exited ${result.status}`);
    return { unreadable: `its tmux pane ${terminal.pane} cannot be read (${why})` };
  }
  // The pane is a screen: its unused rows are blank, and a pane kept after its command ended
  // (remain-on-exit) ends with tmux's own "Pane is dead" line, which is not the session's.
  const lines = result.stdout.split("\n").map((line) => line.trimEnd()).filter((line, i, all) => line !== "" || (i > 0 && all[i - 1] !== ""));
  while (lines.length && (lines.at(-1) === "" || DEAD_PANE.test(lines.at(-1)!))) lines.pop();
  return { lines: lines.slice(-count) };
}
