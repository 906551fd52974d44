import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { withTempDir } from "../fixtures.ts";
import { waitFor } from "./_test-sessions.ts";
import { terminalOf } from "./records.ts";
import { terminalLines } from "./terminal-output.ts";

/** Runs tmux on a server of this test's own socket; never the user's. */
function tmux(socket: string, ...args: string[]) {
  return spawnSync("tmux", ["-S", socket, ...args], { encoding: "utf8", env: { ...process.env, TMUX: "" } });
}

test("a tmux pane is known from $TMUX and $TMUX_PANE; any other terminal is a plain tty", () => {
  assert.equal(terminalOf({ TMUX: "/tmp/tmux-1000/default,4242,0", TMUX_PANE: "%7" }), { kind: "tmux", socket: "/tmp/tmux-1000/default", pane: "%7" });
  assert.equal(terminalOf({ TMUX_PANE: "%7" }), { kind: "tty" });
  assert.equal(terminalOf({ TMUX: "/s,1,0", TMUX_PANE: "7; rm" }), { kind: "tty" });
});

test("peek reads a pane's last lines, blank rows folded, and says why when the pane is gone", () => withTempDir(async (dir) => {
  const socket = join(dir, "sock");
  const started = tmux(socket, "new-session", "-d", "-s", "t", "-x", "80", "-y", "30", "printf 'one\\n\\n\\n\\ntwo\\nthree\\n'; sleep 30");
  assert.is(started.status, 0, started.stderr);
  try {
    const pane = tmux(socket, "display-message", "-p", "-t", "t", "#{pane_id}").stdout.trim();
    const shown = await waitFor("the pane's output", () => {
      const got = terminalLines({ kind: "tmux", socket, pane }, 20);
      return "lines" in got && got.lines.includes("three") ? got : undefined;
    });
    assert.equal(shown, { lines: ["one", "", "two", "three"] });
    assert.equal(terminalLines({ kind: "tmux", socket, pane }, 2), { lines: ["two", "three"] });
  } finally {
    tmux(socket, "kill-server");
  }
  const gone = terminalLines({ kind: "tmux", socket, pane: "%0" }, 5);
  assert.ok("unreadable" in gone && gone.unreadable.startsWith("its tmux pane %0 cannot be read ("), JSON.stringify(gone));
  assert.equal(terminalLines({ kind: "tty" }, 5), { unreadable: "it writes to the terminal it runs in, not to a log: look there" });
}));

test.run();
