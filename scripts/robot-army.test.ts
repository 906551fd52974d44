import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { COMMAND_GROUPS, COMMANDS, overview } from "./robot-army.ts";

test("the overview lists every command with the summary its own definition gives, kept beside its loader without drift", async () => {
  const text = overview();
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const { command } = await entry.load();
    assert.is(command.name, name, `the module routed as "${name}" defines that command`);
    assert.is(entry.summary, command.summary, `the router's summary of "${name}" is its definition's`);
    assert.match(text, new RegExp(`\\n    ${name} +${command.summary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n`));
  }
});

test("the overview groups every command once, everyday ones first: start, status, show, run, serve", async () => {
  const grouped = COMMAND_GROUPS.flatMap(([, names]) => names);
  assert.equal([...grouped].sort(), Object.keys(COMMANDS).sort(), "every command in a group, and no name that is not a command");
  assert.is(new Set(grouped).size, grouped.length, "no command in two groups");
  assert.equal(Object.keys(COMMANDS), grouped, "the router lists them in the overview's order, as the command reference does");
  const text = overview();
  const listed = text.split("\n").filter((line) => line.startsWith("    ")).map((line) => line.trim().split(" ")[0]);
  assert.equal(listed.slice(0, 5), ["start", "status", "show", "run", "serve"]);
  assert.match(text, "Commands:\n  Every day:\n    start ");
  assert.match(text, "\n\n  Repositories:\n    onboard ");
});

test("no option of any command starts with --env-file, which Node reads as its own wherever it stands before --: a missing file ends Node with exit 9 before robot-army runs", async () => {
  const names: string[] = [];
  for (const entry of Object.values(COMMANDS)) {
    const { command } = await entry.load();
    const defs = "subcommands" in command ? Object.values(command.subcommands).map((sub) => sub.command) : [command];
    for (const def of defs) names.push(...Object.keys(def.options ?? {}).map((option) => `${def.name} --${option}`));
  }
  assert.ok(names.some((n) => n === "session run --launch-env"), "the launch's environment file is --launch-env");
  assert.equal(names.filter((n) => /--env-file/.test(n)), []);
});

test("the real binary (Node or Deno, whichever runs the test) says itself that a launch's environment file is missing, in robot-army's words and codes", async () => {
  const [bin, ...args] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  await withTempDir(async (dir) => {
    const run = spawnSync(bin, [...args, "session", "run", `--launch-env=${join(dir, "gone.json")}`, "--", "true"], { encoding: "utf8", env: { ...process.env, RA_STATE_DIR: join(dir, "state") } });
    assert.is(run.status, 3, run.stderr);
    assert.match(run.stderr, `robot-army: The launch environment "${join(dir, "gone.json")}" cannot be read`);
  });
});

test.run();
