import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseConfig } from "../../config.ts";
import { PreconditionError } from "../../errors.ts";
import { KittyLauncher } from "./kitty.ts";
import { ProcessLauncher } from "./process.ts";
import { configuredTerminal, launcherFor, launcherForTerminal, terminalKey } from "./select.ts";
import { parseTerminal } from "./types.ts";
import { robotArmyArgv } from "./_self.ts";
import { runCommand } from "../../run-command.ts";
import { TmuxLauncher } from "./tmux.ts";
import { withTempDir } from "../../testing/fixtures.ts";

const config = (worker: string) => parseConfig(`[worker]\n${worker}\n`, "/home/owner/.config/robot-army/config.toml", { HOME: "/home/owner" });

test("launcherFor picks the launcher worker.launcher names; tmux by default", async () => {
  assert.instance(launcherFor(await config("")), TmuxLauncher);
  assert.instance(launcherFor(await config('launcher = "process"')), ProcessLauncher);
  assert.instance(launcherFor(await config('launcher = "kitty"')), KittyLauncher);
  assert.is(launcherFor(await config('launcher = "kitty"')).name, "kitty");
});

test("a terminal a session row stored is read back as it was; anything else is null", () => {
  const tmux = { launcher: "tmux", socket: null, socket_path: "/tmp/tmux-1000/default", session: "ra-workers" } as const;
  for (const terminal of [tmux, { launcher: "kitty", to: "unix:/run/kitty" } as const, { launcher: "kitty", to: null } as const, { launcher: "process" } as const]) {
    assert.equal(parseTerminal(JSON.stringify(terminal)), terminal);
  }
  for (const bad of [null, "", "{", "null", "[]", '{"launcher":"tmux"}', '{"launcher":"tmux","session":3,"socket":null,"socket_path":null}', '{"launcher":"kitty","to":1}', '{"launcher":"screen"}']) {
    assert.is(parseTerminal(bad), null, String(bad));
  }
});

test("launcherForTerminal reaches the recorded server; configuredTerminal is the config's, for rows that recorded none", async () => {
  assert.instance(launcherForTerminal({ launcher: "tmux", socket: "x", socket_path: null, session: "ra" }), TmuxLauncher);
  assert.instance(launcherForTerminal({ launcher: "kitty", to: null }), KittyLauncher);
  assert.instance(launcherForTerminal({ launcher: "process" }), ProcessLauncher);
  assert.equal(configuredTerminal(await config('tmux_session = "ra"\ntmux_socket = "mine"'), "tmux"), { launcher: "tmux", socket: "mine", socket_path: null, session: "ra" });
  assert.equal(configuredTerminal(await config(""), "kitty", { kittyTo: "unix:/k" }), { launcher: "kitty", to: "unix:/k" });
  assert.is(configuredTerminal(await config(""), "screen"), null);
  const a = terminalKey({ launcher: "tmux", socket: null, socket_path: "/s", session: "ra" });
  assert.is(a, terminalKey({ launcher: "tmux", socket: "other", socket_path: "/s", session: "ra" }), "one socket path is one server");
  assert.is.not(a, terminalKey({ launcher: "tmux", socket: null, socket_path: "/s", session: "ra2" }));
  assert.is.not(terminalKey({ launcher: "tmux", socket: "a", socket_path: null, session: "ra" }), terminalKey({ launcher: "tmux", socket: "b", socket_path: null, session: "ra" }));
});

test("launcherFor: an explicit launcher wins over the config", async () => {
  assert.instance(launcherFor(await config('launcher = "tmux"'), { launcher: "process" }), ProcessLauncher);
});

test("launcherFor: a tmux session name tmux would read as a target is a precondition error naming the key", async () => {
  try {
    launcherFor(await config('tmux_session = "work:1"'));
    assert.unreachable("expected a PreconditionError");
  } catch (error) {
    assert.instance(error, PreconditionError);
    assert.match((error as Error).message, 'worker.tmux_session "work:1" must be letters, digits');
  }
  assert.instance(launcherFor(await config('launcher = "process"\ntmux_session = "work:1"')), ProcessLauncher, "only the tmux launcher reads it");
});

test("worker.tmux_socket chooses the tmux server the launcher finds windows on", () => withTempDir(async (dir) => {
  const env = { ...process.env, TMUX: undefined, TMUX_TMPDIR: dir };
  const socket = `ra-select-${process.pid}`;
  const tmux = (...args: string[]) => runCommand(["tmux", "-L", socket, ...args], env);
  try {
    const made = await tmux("new-session", "-d", "-s", "robot-army", "sleep 30", ";", "set-option", "-w", "@ra_item", "5");
    assert.is(made.code, 0, made.stderr);
    const on = launcherFor(await config(`tmux_socket = "${socket}"`), { env });
    assert.equal(await on.find(5), { launcher: "tmux", id: "@0", marker: "@ra_item=5", running: true });
    assert.is(await launcherFor(await config(""), { env }).find(5), null, "without it, tmux's own choice: the default server, where there is none");
    assert.equal((await on.attachCommand(5))!.slice(0, 4), ["tmux", "-L", socket, "attach-session"]);
  } finally {
    await tmux("kill-server");
  }
}));

test("worker.tmux_socket is a socket name, never a path", async () => {
  try {
    await config('tmux_socket = "../elsewhere"');
    assert.unreachable("expected a ConfigError");
  } catch (error) {
    assert.match((error as Error).message, 'key "worker.tmux_socket" must match');
  }
});

test("robotArmyArgv runs robot-army on this runtime", async () => {
  const result = await runCommand([...robotArmyArgv(), "--version"], process.env);
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stdout, /^robot-army \d+\.\d+\.\d+\n$/);
});

test.run();
