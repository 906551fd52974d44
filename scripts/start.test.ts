import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { listRecords } from "../lib/sessions/records.ts";
import { sessionState } from "../lib/sessions/state.ts";
import { robotArmyHere } from "./start.ts";

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
    // The hint names a command that runs where it is printed, robot-army installed or not.
    const hint = /look around with: RA_STATE_DIR=(\S+) (\S+) status --config (\S+)/.exec(out);
    const looked = hint && spawnSync(hint[2], ["status", "--config", hint[3]], { env: { ...env, RA_STATE_DIR: hint[1] }, encoding: "utf8" });
    process.kill(child.pid!, "SIGINT");
    await closed;
    try {
      assert.match(out, /sandbox forge at http:\/\/127\.0\.0\.1:\d+: demo\/widgets with labelled issues #1, #2, #3/);
      assert.match(out, "poll: demo/widgets#1: new work item 1, ready");
      assert.match(out, "dispatched demo/widgets#1 as ra-widgets-1 (item 1)");
      assert.match(out, "commented on demo/widgets#1 (dispatched)");
      assert.match(out, /pull request opened: demo\/widgets#\d+ .*\(Closes #\d+\)/);
      assert.match(out, "rehearsal stopped: its workers and the forge are stopped");
      assert.ok(hint, "the rehearsal says how to look around");
      assert.is(looked!.status, 0, `${hint![2]} status: ${looked!.error ?? looked!.stderr}`);
      assert.match(looked!.stdout, "work items: ");
      assert.ok(dir && existsSync(join(dir, "worktrees", "demo", "widgets", "issue-1")), "the worktree was made");
      const root = join(dir!, "state", "sessions");
      assert.ok(listRecords(root).every((r) => sessionState(root, r) !== "running"), "no worker left running");
    } finally {
      if (dir?.includes("robot-army-rehearsal-")) rmSync(dir, { recursive: true, force: true });
    }
  }));

test("the rehearsal names robot-army by its path unless the name on PATH is this checkout's", () =>
  withTempDir((dir) => {
    const bin = join(PROJECT_ROOT, "bin", "robot-army.mjs");
    assert.is(robotArmyHere({ PATH: "/usr/bin:/bin" }), bin);
    const other = join(dir, "other");
    mkdirSync(other);
    symlinkSync("/bin/true", join(other, "robot-army"));
    assert.is(robotArmyHere({ PATH: other }), bin, "another program of that name is not this robot-army");
    const installed = join(dir, "installed");
    mkdirSync(installed);
    symlinkSync(bin, join(installed, "robot-army"));
    assert.is(robotArmyHere({ PATH: `${other.replace("other", "none")}:${installed}` }), "robot-army");
  }));

test.run();
