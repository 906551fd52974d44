import { test } from "uvu";
import * as assert from "uvu/assert";
import { nearestName } from "./nearest-name.ts";

test("a slip of a letter or two names the nearest command; a word far from all names none", () => {
  const names = ["status", "start", "doctor", "session", "show", "log"];
  assert.is(nearestName("stauts", names), "status");
  assert.is(nearestName("doctr", names), "doctor");
  assert.is(nearestName("Staus", names), "status");
  assert.is(nearestName("sesion", names), "session");
  assert.is(nearestName("frobnicate", names), undefined);
  assert.is(nearestName("x", names), undefined);
});

test.run();
