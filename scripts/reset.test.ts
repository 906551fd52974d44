import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runtimeArgv } from "../lib/runtime.ts";

const router = fileURLToPath(new URL("./robot-army.ts", import.meta.url));

test("reset --force refuses when stdin is not a terminal, before reading anything", () => {
  const result = spawnSync(runtimeArgv(router)[0], [...runtimeArgv(router).slice(1), "reset", "1", "--force"], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", env: { ...process.env, RA_STATE_DIR: "/nonexistent/ra-state" } });
  assert.is(result.status, 3);
  assert.match(result.stderr, /--force discards work, so it is taken only when typed at a terminal/);
});

test.run();
