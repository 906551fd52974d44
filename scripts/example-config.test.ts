import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig, parseConfig } from "../lib/config.ts";
import { PreconditionError, RobotArmyError } from "../lib/errors.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { exampleConfig, run } from "./example-config.ts";

const committed = new URL("../config.example.toml", import.meta.url);

test("config.example.toml is what `robot-army example-config` prints", () => {
  const fresh = exampleConfig();
  const onDisk = readFileSync(committed, "utf8");
  assert.ok(
    fresh === onDisk,
    "config.example.toml has drifted from schema/config.schema.json: run `node scripts/robot-army.ts example-config > config.example.toml`",
  );
});

test("the command writes that text through run(opts, deps)", () => {
  const out: string[] = [];
  assert.is(run({}, { write: (text) => out.push(text) }), 0);
  assert.is(out.join(""), readFileSync(committed, "utf8"));
});

test("--output that the file system refuses (a name too long, a folder that is a file) fails in one line naming the file and why, and writes nothing", () => withTempDir((dir) => {
  writeFileSync(join(dir, "a-file"), "mine\n");
  for (const [output, code] of [[join(dir, "x".repeat(4000)), "longer than the file system allows \\(ENAMETOOLONG\\)"], [join(dir, "a-file", "config.toml"), "a file stands where that path needs a folder \\(EEXIST\\)"]] as const) {
    for (const force of [false, true]) {
      const error = (() => {
        try {
          run({ output, force }, { write: () => assert.unreachable("nothing is said to be written") });
        } catch (caught) {
          return caught;
        }
      })();
      assert.instance(error, RobotArmyError);
      assert.is((error as RobotArmyError).exitCode, 1);
      const said = (error as Error).message;
      assert.ok(said.startsWith(`Cannot write the example config to "${output}": `) && new RegExp(`${code}; the file was not written$`).test(said), said);
    }
  }
  assert.equal(readdirSync(dir), ["a-file"], "no file and no temp file left");
  assert.is(readFileSync(join(dir, "a-file"), "utf8"), "mine\n");
}));

test("--output naming a folder is refused as a folder, with or without --force, and a name as long as allowed is written", () => withTempDir((dir) => {
  for (const force of [false, true]) {
    assert.throws(() => run({ output: dir, force }, { write: () => {} }), (error: Error) => error instanceof PreconditionError && error.message === `"${dir}" is a folder; nothing was written (name a file in it)`);
  }
  const long = join(dir, "c".repeat(250));
  assert.is(run({ output: long }, { write: () => {} }), 0);
  assert.is(readFileSync(long, "utf8"), readFileSync(committed, "utf8"));
}));

test("the example file loads, and yields exactly the defaults", async () => {
  const config = await parseConfig(readFileSync(committed, "utf8"), committed.pathname);
  assert.equal(config, await defaultConfig());
});

test("every key is in the example, commented out with its default or an example value", () => {
  const text = exampleConfig();
  assert.match(text, /^\[daemon\]$/m);
  assert.match(text, /^# tick_seconds = 60$/m);
  assert.match(text, /^# effect_level = "plan"$/m);
  assert.match(text, /^# One of "plan", "local", "no-remote", "live"\. Default: "plan"\.$/m);
  assert.match(text, /^# token_file = "~\/\.config\/robot-army\/github-token"$/m);
  assert.match(text, /^# args = \[\]$/m);
  assert.match(text, /^# stranded_after = "12h"$/m);
});

test("the repository table is one commented-out example, its keys from the schema", () => {
  const text = exampleConfig();
  assert.match(text, /^# \[repos\."octo-org\/widgets"\]$/m);
  assert.not.match(text, /^\[repos/m);
  assert.match(text, /^# Type: path\. Required\.\n# path = "~\/src\/widgets"$/m);
  assert.match(text, /^# base_branch = "develop"$/m);
  assert.match(text, /^# Type: whole number, at least 1\. Optional, no default\.\n# max_sessions = 1$/m);
  assert.match(text, /^# priority = 0$/m);
  assert.match(text, /^# author = "octocat"$/m);
  assert.match(text, /^# Type: string, matching \^\[A-Z_\]\[A-Z0-9_\]\*\$\. Optional, no default\.\n# token_env = "GITHUB_TOKEN"$/m);
});

test("uncommenting every key and the example table's header gives a file that still loads", async () => {
  // health.webhook_url_file is the other way of giving health.webhook_url: the two together are refused.
  const uncommented = exampleConfig().replace(/^# (\w+ = .*)$/gm, "$1").replace(/^# (\[repos\..*\])$/gm, "$1").replace(/^webhook_url_file = .*\n/m, "");
  const config = await parseConfig(uncommented, "/home/owner/.config/robot-army/config.toml", { HOME: "/home/owner" });
  assert.is(config.github.token_file, "/home/owner/.config/robot-army/github-token");
  assert.is(config.github.author, "octocat");
  assert.is(config.github.token_env, "GITHUB_TOKEN");
  assert.is(config.daemon.tick_seconds, 60);
  assert.equal(config.repos, {
    "octo-org/widgets": { path: "/home/owner/src/widgets", base_branch: "develop", max_sessions: 1, priority: 0 },
  });
});

test.run();
