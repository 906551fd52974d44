import { test } from "uvu";
import * as assert from "uvu/assert";
import { COMMANDS, overview } from "./robot-army.ts";

test("the overview lists every command with the summary its own definition gives, and no other text", async () => {
  const text = await overview();
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const { command } = await entry.load();
    assert.is(command.name, name, `the module routed as "${name}" defines that command`);
    assert.match(text, new RegExp(`\\n  ${name} +${command.summary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n`));
  }
});

test.run();
