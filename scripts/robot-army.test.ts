import { test } from "uvu";
import * as assert from "uvu/assert";
import { COMMAND_GROUPS, COMMANDS, overview } from "./robot-army.ts";

test("the overview lists every command with the summary its own definition gives, and no other text", async () => {
  const text = await overview();
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const { command } = await entry.load();
    assert.is(command.name, name, `the module routed as "${name}" defines that command`);
    assert.match(text, new RegExp(`\\n    ${name} +${command.summary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n`));
  }
});

test("the overview groups every command once, everyday ones first: start, status, show, run, serve", async () => {
  const grouped = COMMAND_GROUPS.flatMap(([, names]) => names);
  assert.equal([...grouped].sort(), Object.keys(COMMANDS).sort(), "every command in a group, and no name that is not a command");
  assert.is(new Set(grouped).size, grouped.length, "no command in two groups");
  assert.equal(Object.keys(COMMANDS), grouped, "the router lists them in the overview's order, as the command reference does");
  const text = await overview();
  const listed = text.split("\n").filter((line) => line.startsWith("    ")).map((line) => line.trim().split(" ")[0]);
  assert.equal(listed.slice(0, 5), ["start", "status", "show", "run", "serve"]);
  assert.match(text, "Commands:\n  Every day:\n    start ");
  assert.match(text, "\n\n  Repositories:\n    onboard ");
});

test.run();
