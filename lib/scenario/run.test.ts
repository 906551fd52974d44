import { test } from "uvu";
import * as assert from "uvu/assert";
import { realpathSync } from "node:fs";
import { PROJECT_ROOT } from "./load.ts";
import { isolatedEnv, SCENARIO_NOW, substitute } from "./run.ts";
import { robotArmyCommand } from "./setup.ts";

test("a scenario's environment keeps PATH and the compile caches and nothing else from outside", () => {
  const env = isolatedEnv("/tmp/ra-x", { PATH: "/bin", RA_EPISODE_KEY: "w9", RA_STATE_DIR: "/home/me/.ra", GITHUB_TOKEN: "secret", HOME: "/home/me", NODE_COMPILE_CACHE: "/tmp/cc", DENO_DIR: "/tmp/dd" });
  assert.is(env.NODE_COMPILE_CACHE, "/tmp/cc");
  assert.is(env.DENO_DIR, "/tmp/dd");
  const bare = isolatedEnv("/tmp/ra-x", { PATH: "/bin", NODE_COMPILE_CACHE: "" });
  assert.equal([bare.NODE_COMPILE_CACHE, bare.DENO_DIR], [undefined, undefined], "none named (or named empty), none set");
  assert.is(env.PATH, "/bin");
  assert.is(env.HOME, "/tmp/ra-x/home");
  assert.is(env.RA_STATE_DIR, "/tmp/ra-x/state");
  assert.is(env.RA_NOW, SCENARIO_NOW);
  assert.is(env.XDG_CONFIG_HOME, "/tmp/ra-x/home/.config");
  assert.is(env.XDG_STATE_HOME, "/tmp/ra-x/home/.local/state");
  assert.is(env.NO_COLOR, "1");
  assert.is(env.RA_EPISODE_KEY, undefined);
  assert.is(env.GITHUB_TOKEN, undefined);
});

test("setup variables are substituted; an unknown one fails naming the known ones", () => {
  assert.is(substitute("${REPO}/x and ${REPO}", { REPO: "/r" }), "/r/x and /r");
  assert.is(substitute("$REPO stays", { REPO: "/r" }), "$REPO stays");
  assert.throws(() => substitute("${NOPE}", { REPO: "/r", CWD: "/c" }), /Unknown variable "\$\{NOPE\}" \(known: CWD, REPO\)/);
});

test("steps run the real binaries, never a wrapper or a shell", () => {
  const node = robotArmyCommand("node", PROJECT_ROOT);
  assert.is(node.length, 2);
  assert.is(node[0], realpathSync(`${PROJECT_ROOT}/node_modules/.bin/node`), "the node binary itself, not its link");
  assert.is(node[1], `${PROJECT_ROOT}/bin/robot-army.mjs`, "the entry npx robot-army runs");
  assert.equal(robotArmyCommand("deno", "/p"), ["/p/node_modules/deno/deno", "run", "-A", "--quiet", "--config", "/p/deno.json", "/p/scripts/robot-army.ts"]);
});

test.run();
