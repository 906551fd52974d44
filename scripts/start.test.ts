import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { listRecords } from "../lib/sessions/records.ts";
import { sessionState } from "../lib/sessions/state.ts";

test("with no config, start rehearses: a labelled issue becomes a worktree, a worker, a comment and a pull request on the forge", () =>
  withTempDir(async (home) => {
    const argv = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
    const env: Record<string, string | undefined> = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" };
    for (const key of Object.keys(env)) if (key.startsWith("RA_")) delete env[key];
    const child = spawn(argv[0], [...argv.slice(1), "start"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const deadline = Date.now() + 90_000;
    while (!/pull request opened: demo\/widgets#\d+ .*\(Closes #\d+\)/.test(out) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const dir = /rehearsal in (\S+):/.exec(out)?.[1];
    process.kill(child.pid!, "SIGINT");
    await closed;
    try {
      assert.match(out, /sandbox forge at http:\/\/127\.0\.0\.1:\d+: demo\/widgets with labelled issues #1, #2, #3/);
      assert.match(out, "poll: demo/widgets#1: new work item 1, ready");
      assert.match(out, "dispatched demo/widgets#1 as ra-widgets-1 (item 1)");
      assert.match(out, "commented on demo/widgets#1 (dispatched)");
      assert.match(out, /pull request opened: demo\/widgets#\d+ .*\(Closes #\d+\)/);
      assert.match(out, "rehearsal stopped: its workers and the forge are stopped");
      assert.ok(dir && existsSync(join(dir, "worktrees", "demo", "widgets", "issue-1")), "the worktree was made");
      const root = join(dir!, "state", "sessions");
      assert.ok(listRecords(root).every((r) => sessionState(root, r) !== "running"), "no worker left running");
    } finally {
      if (dir?.includes("robot-army-rehearsal-")) rmSync(dir, { recursive: true, force: true });
    }
  }));

test.run();
