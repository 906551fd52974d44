import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import { sleep } from "../testing/sessions.ts";
import { terminalLines, terminalOf } from "./terminal-output.ts";

/** Runs tmux on a server of this test's own socket; never the user's. */
function tmux(socket: string, ...args: string[]) {
  return spawnSync("tmux", ["-S", socket, ...args], { encoding: "utf8", env: { ...process.env, TMUX: "" } });
}

/**
 * A tmux server on its own socket with one pane running `command`; the pane's $TMUX and
 * $TMUX_PANE. A server killed on the same socket a moment before may still be going: tmux
 * then answers "server exited unexpectedly", and the start is tried again.
 */
async function paneRunning(socket: string, command: string): Promise<{ TMUX: string; TMUX_PANE: string }> {
  let started = tmux(socket, "new-session", "-d", "-s", "t", "-x", "80", "-y", "30", command);
  for (let tries = 0; started.status !== 0 && /server exited unexpectedly/.test(started.stderr) && tries < 40; tries++) {
    await sleep(50);
    started = tmux(socket, "new-session", "-d", "-s", "t", "-x", "80", "-y", "30", command);
  }
  assert.is(started.status, 0, started.stderr);
  const pane = tmux(socket, "display-message", "-p", "-t", "t", "#{pane_id}").stdout.trim();
  return { ...process.env, TMUX: `${socket},1,0`, TMUX_PANE: pane } as { TMUX: string; TMUX_PANE: string };
}

test("any terminal but a tmux pane that tmux answers for is a plain tty", async () => {
  assert.equal(await terminalOf({ TMUX_PANE: "%7" }), { kind: "tty" });
  assert.equal(await terminalOf({ TMUX: "/s,1,0", TMUX_PANE: "7; rm" }), { kind: "tty" });
  assert.equal(await terminalLines({ kind: "tty" }, 5), { unreadable: "it writes to the terminal it runs in, not to a log: look there" });
});

test("peek reads a pane's last lines, blank rows folded, only while the server it was recorded on runs", () => withTempDir(async (dir) => {
  const socket = join(dir, "sock");
  const env = await paneRunning(socket, "printf 'one\\n\\n\\n\\ntwo\\nthree\\n'; sleep 30");
  let terminal;
  try {
    terminal = await terminalOf(env);
    assert.ok(terminal.kind === "tmux" && /^\d+ \d+$/.test(terminal.server ?? ""), JSON.stringify(terminal));
    let shown = await terminalLines(terminal, 20);
    for (let tries = 0; !("lines" in shown && shown.lines.includes("three")) && tries < 100; tries++) {
      await sleep(50);
      shown = await terminalLines(terminal, 20);
    }
    assert.equal(shown, { lines: ["one", "", "two", "three"] });
    assert.equal(await terminalLines(terminal, 2), { lines: ["two", "three"] });
  } finally {
    tmux(socket, "kill-server");
  }
  // A new server on the same socket numbers its panes from %0 again: its pane is not ours.
  await paneRunning(socket, "echo someone else; sleep 30");
  try {
    const gone = await terminalLines(terminal!, 5);
    assert.equal(gone, { unreadable: `its tmux pane ${env.TMUX_PANE} is gone (the tmux server it ran on has stopped)` });
  } finally {
    tmux(socket, "kill-server");
  }
}));

test.run();
