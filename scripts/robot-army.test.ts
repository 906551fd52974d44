import { test } from "uvu";
import * as assert from "uvu/assert";
import { COMMANDS, nearestName, overview } from "./robot-army.ts";

test("the overview lists every command with the summary its own definition gives, and no other text", async () => {
  const text = await overview();
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const { command } = await entry.load();
    assert.is(command.name, name, `the module routed as "${name}" defines that command`);
    assert.match(text, new RegExp(`\\n  ${name} +${command.summary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n`));
  }
});

test("a slip of a letter or two names the nearest command; a word far from all names none", () => {
  const names = Object.keys(COMMANDS);
  assert.is(nearestName("stauts", names), "status");
  assert.is(nearestName("doctr", names), "doctor");
  assert.is(nearestName("Staus", names), "status");
  assert.is(nearestName("sesion", names), "session");
  assert.is(nearestName("frobnicate", names), undefined);
  assert.is(nearestName("x", names), undefined);
});

test.run();
