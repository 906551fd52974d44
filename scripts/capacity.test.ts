import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configFrom, inWorkerDir, startWorker } from "../lib/testing/workers.ts";
import type { WorkerDirs } from "../lib/testing/workers.ts";
import { workerTags } from "../lib/dispatch/capacity.ts";
import { pause } from "../lib/dispatch/controls.ts";
import { CheckFailedError } from "../lib/errors.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { atTime, makeItem } from "../lib/testing/items.ts";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { trackSessionProcesses } from "../lib/testing/sessions.ts";
import { sessionFiles } from "../lib/sessions/records.ts";
import { placeKeep } from "../lib/ending/keeps.ts";
import { recordSession } from "../lib/work-items/sessions.ts";
import { run } from "./capacity.ts";
import type { CapacityReport } from "./capacity.ts";

const sessions = trackSessionProcesses(test, { childrenBy: "pid" });

const CONFIG = `
[daemon]
max_concurrent_sessions = 4

[repos."demo/widgets"]
path = "/src/widgets"
max_sessions = 1

[repos."demo/gadgets"]
path = "/src/gadgets"
`;

async function capacity(dirs: Pick<WorkerDirs, "root"> & { store?: WorkerDirs["store"] }, json = false): Promise<{ code: number; text: string }> {
  let text = "";
  const config = await configFrom(CONFIG);
  const code = run({ json }, { config, store: dirs.store, sessionRoot: dirs.root, write: (chunk) => (text += chunk) });
  return { code, text };
}

/** Runs the real binary on this runtime with the given state dir, session root and config. */
function robotArmy(env: Record<string, string>, ...argv: string[]) {
  const [bin, ...args] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  const result = spawnSync(bin, [...args, ...argv], { encoding: "utf8", env: { ...process.env, ...env } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("ours with kept apart, others, and each repository against its limit and where the limit comes from", inWorkerDir(async (dirs) => {
  const widget = makeItem(dirs.store, { issue: 7 });
  const gadget = makeItem(dirs.store, { repo: "demo/gadgets", issue: 3 });
  const kept = await startWorker(sessions, dirs, { ...workerTags(dirs.store, widget.id), keep: "true" });
  await startWorker(sessions, dirs, workerTags(dirs.store, gadget.id));
  const { code, text } = await capacity(dirs);
  assert.is(code, 0);
  assert.is(text, [
    "machine: 2 of 4 sessions: 2 ours (1 kept), 0 other",
    "repository demo/gadgets: 1 of 2 sessions (worker.max_sessions)",
    "repository demo/widgets: 1 of 1 sessions (configured), 1 kept",
    `  full: no new worker session starts in demo/widgets; a kept session holds its slot until its keep is released: "robot-army session tag ${kept.name} --rm keep"`,
    "",
  ].join("\n"));
  const json = JSON.parse((await capacity(dirs, true)).text) as CapacityReport;
  assert.equal([json.observable, json.why, json.paused], [true, null, null]);
  assert.equal(json.machine, { ours: 2, kept: 1, other: 0, max: 4 });
  assert.equal(json.repos["demo/widgets"], { live: 1, kept: 1, max: 1, source: "configured" });
  assert.equal(json.dispatch["demo/widgets"], {
    ok: false, reason: `repository demo/widgets runs 1 of 1 sessions (configured), 1 kept; a kept session holds its slot until its keep is released: "robot-army session tag ${kept.name} --rm keep"`,
  });
  assert.is(json.dispatch["demo/gadgets"].ok, true);
  assert.is(json.workers.length, 2);
}));

test("a worker its item's keep covers is shown kept, and the full repository names unkeep as the fix", inWorkerDir(async (dirs) => {
  const widget = makeItem(dirs.store, { issue: 7, state: "active" });
  const gadget = makeItem(dirs.store, { repo: "demo/gadgets", issue: 3, state: "active" });
  for (const item of [widget, gadget]) {
    const worker = await startWorker(sessions, dirs, workerTags(dirs.store, item.id));
    recordSession(dirs.store, { id: worker.id, item: item.id, name: worker.name, host: "h", launcher: "process", marker: "", worktree: dirs.work, branch: "b", started_at: "", simulated: false });
  }
  placeKeep(dirs.store, widget.id, { worker: (await configFrom(CONFIG)).worker });
  const { text } = await capacity(dirs);
  assert.is(text, [
    "machine: 2 of 4 sessions: 2 ours (1 kept), 0 other",
    "repository demo/gadgets: 1 of 2 sessions (worker.max_sessions)",
    "repository demo/widgets: 1 of 1 sessions (configured), 1 kept",
    `  full: no new worker session starts in demo/widgets; a kept session holds its slot until its keep is released: "robot-army unkeep ${widget.id}"`,
    "",
  ].join("\n"));
}));

test("a full machine and a pause are said, with what they stop", inWorkerDir(async (dirs) => {
  for (const item of ["97", "98", "99", "100"]) await startWorker(sessions, dirs, { ra_item: item });
  atTime("2026-01-15T10:00:00Z", () => pause(dirs.store, { reason: "release" }));
  const { text } = await capacity(dirs);
  assert.is(text, [
    "machine: 4 of 4 sessions: 0 ours, 4 other",
    "  full: no new worker session starts on this machine",
    "repository demo/gadgets: 0 of 2 sessions (worker.max_sessions)",
    "repository demo/widgets: 0 of 1 sessions (configured)",
    'paused since 2026-01-15T10:00:00Z (release): no worker session is dispatched until "robot-army unpause"',
    "",
  ].join("\n"));
}));

test("capacity that cannot be observed is a failed check (exit 4) that says why; --json says so too", () =>
  withTempDir(async (dir) => {
    const root = join(dir, "sessions");
    mkdirSync(root);
    const record = sessionFiles(root, "abcd1111-0000-4000-8000-000000000001").record;
    writeFileSync(record, "{ half a record");
    try {
      await capacity({ root });
      assert.unreachable("expected a failed check");
    } catch (error) {
      assert.instance(error, CheckFailedError);
      assert.is((error as CheckFailedError).exitCode, 4);
      assert.match((error as Error).message, `Capacity cannot be observed: session record "${record}" cannot be read: `);
      assert.match((error as Error).message, /; no worker session is dispatched until it can be$/);
    }
    const json = await capacity({ root }, true);
    assert.is(json.code, 4);
    const report = JSON.parse(json.text) as CapacityReport;
    assert.equal([report.observable, report.dispatch["demo/widgets"].ok], [false, false]);
    assert.match(report.why!, "cannot be read");
  }));

test("the command: counts from the session root it is given, the limit's source from the config file, exit 4 when unobservable", () =>
  withTempDir(async (dir) => {
    const root = join(dir, "sessions");
    mkdirSync(root);
    const config = join(dir, "config.toml");
    // Equal to worker.max_sessions, yet written in the repository's table: configured.
    writeFileSync(config, '[repos."demo/widgets"]\npath = "/src/widgets"\nmax_sessions = 2\n');
    const env = { RA_STATE_DIR: join(dir, "state"), RA_SESSION_ROOT: root, RA_CONFIG: config, RA_NOW: "2026-01-15T10:00:00Z" };
    const ok = robotArmy(env, "capacity");
    assert.equal([ok.code, ok.stderr], [0, ""]);
    assert.is(ok.stdout, "machine: 0 of 4 sessions: 0 ours, 0 other\nrepository demo/widgets: 0 of 2 sessions (configured)\n");
    writeFileSync(sessionFiles(root, "abcd1111-0000-4000-8000-000000000001").record, "{");
    const failed = robotArmy(env, "capacity");
    assert.equal([failed.code, failed.stdout], [4, ""]);
    assert.match(failed.stderr, /^robot-army: Capacity cannot be observed: session record ".*" cannot be read: /);
  }));

test("no session was left running", () => {
  assert.equal(sessions.leaked, []);
});

test.run();
