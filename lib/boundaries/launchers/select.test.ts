import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseConfig } from "../../config.ts";
import { PreconditionError } from "../../errors.ts";
import { KittyLauncher } from "./kitty.ts";
import { ProcessLauncher } from "./process.ts";
import { launcherFor } from "./select.ts";
import { robotArmyArgv } from "./_self.ts";
import { runCommand } from "./session-run.ts";
import { TmuxLauncher } from "./tmux.ts";

const config = (worker: string) => parseConfig(`[worker]\n${worker}\n`, "/home/owner/.config/robot-army/config.toml", { HOME: "/home/owner" });

test("launcherFor picks the launcher worker.launcher names; tmux by default", async () => {
  assert.instance(launcherFor(await config("")), TmuxLauncher);
  assert.instance(launcherFor(await config('launcher = "process"')), ProcessLauncher);
  assert.instance(launcherFor(await config('launcher = "kitty"')), KittyLauncher);
  assert.is(launcherFor(await config('launcher = "kitty"')).name, "kitty");
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

test("robotArmyArgv runs robot-army on this runtime", async () => {
  const result = await runCommand([...robotArmyArgv(), "--version"], process.env);
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stdout, /^robot-army \d+\.\d+\.\d+\n$/);
});

test.run();
