import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readRecord, writeRecord } from "../../sessions/records.ts";
import { createSession } from "../../sessions/start.ts";
import { stopSession } from "../../sessions/stop.ts";
import { ProcessLauncher } from "./process.ts";
import { DEMO_WORKER_SCRIPT } from "./demo-worker.ts";
import { LauncherTests, logOf, recordNamed, rejection, waitFor } from "../../testing/launchers.ts";
import { LaunchError } from "./types.ts";
import type { LaunchSpec } from "./types.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const tests = new LauncherTests();

function spec(item: number, name: string, cwd: string, argv: string[], more: Partial<LaunchSpec> = {}): LaunchSpec {
  return { item, name, cwd, argv, tags: {}, ...more };
}

test("launch starts a detached session tagged with the item; find knows it by its marker, running or ended", tests.in("launch-find", async ({ root, work, env }) => {
  const launcher = new ProcessLauncher({ env });
  const launched = await launcher.launch(spec(7, "ra-demo-7", work, ["sh", "-c", "echo hi; exec sleep 2"], { tags: { repo: "o/demo" }, env: { GREETING: "hello there" } }));
  tests.note(root);
  assert.equal({ ...launched, sessionId: "" }, { launcher: "process", marker: "ra-demo-7", sessionName: "ra-demo-7", sessionId: "", window: null, terminal: { launcher: "process" } });
  assert.match(launched.sessionId, UUID);
  const record = readRecord(root, launched.sessionId)!;
  assert.equal(record.tags, { ra_item: "7", repo: "o/demo" });
  assert.is(record.cwd, work);
  assert.equal([record.command, ...record.args], ["sh", "-c", "echo hi; exec sleep 2"]);
  assert.equal(record.env, { GREETING: "hello there" });
  assert.ok(record.childPgid, "a headless session has a process group of its own");
  await waitFor("the worker's output", () => logOf(record).includes("hi"));

  assert.equal(await launcher.find(7), { launcher: "process", id: "ra-demo-7", marker: "ra-demo-7", running: true });
  assert.is(await launcher.find(8), null);
  assert.is(await launcher.attachCommand(7), null, "a headless session has no terminal to attach to");
  assert.equal(await launcher.tabs(7), [], "nor a tab to close");
  assert.is(await launcher.closeTab({ launcher: "process", id: "ra-demo-7", marker: "ra-demo-7", running: true, item: 7, store: null }), "gone");
  assert.is(readRecord(root, launched.sessionId)!.ended, null, "closing a headless tab touches nothing");

  assert.is(await stopSession(root, record, { graceMs: 2_000 }), "stopped");
  assert.is(readRecord(root, launched.sessionId)!.ended, "killed");
  assert.equal(await launcher.find(7), { launcher: "process", id: "ra-demo-7", marker: "ra-demo-7", running: false }, "a killed session's record stays");
}));

test("the worker named demo-worker is robot-army's own script on this runtime, whatever the PATH", tests.in("demo-worker", async ({ root, work, env }) => {
  const launcher = new ProcessLauncher({ env: { ...env, PATH: "" } });
  const launched = await launcher.launch(spec(4, "ra-demo-4", work, ["demo-worker", "--help"], { tags: { keep: "true" } }));
  tests.note(root);
  const record = readRecord(root, launched.sessionId)!;
  assert.equal([record.command, ...record.args].slice(-2), [DEMO_WORKER_SCRIPT, "--help"]);
  await waitFor("the demo worker's help", () => logOf(record).includes("A scripted stand-in for a coding agent"));
}));

test("the prompt reaches the worker by file: never in an argv or an environment", tests.in("prompt", async ({ dir, root, work, env }) => {
  const secret = "PROMPT-7f3a: fix the flaky test, token-like text included";
  const promptFile = join(dir, "prompt.md");
  writeFileSync(promptFile, secret + "\n", { mode: 0o600 });
  const launcher = new ProcessLauncher({ env });
  const launched = await launcher.launch(spec(3, "ra-demo-3", work, ["sh", "-c", 'cat "$RA_PROMPT_FILE"; exec sleep 5'], { stdinFile: promptFile }));
  tests.note(root);
  const record = readRecord(root, launched.sessionId)!;
  await waitFor("the worker to print its prompt", () => logOf(record).includes(secret));
  assert.equal(record.env, { RA_PROMPT_FILE: promptFile });
  assert.not.match(JSON.stringify(record), "PROMPT-7f3a");
  for (const pid of [record.holderPid!, record.childPid!]) {
    for (const file of ["cmdline", "environ"]) {
      assert.not.match(readFileSync(`/proc/${pid}/${file}`, "latin1"), "PROMPT-7f3a", `/proc/${pid}/${file}`);
    }
  }
  await stopSession(root, record, { graceMs: 2_000 });
}));

test("a worker that cannot start is a LaunchError naming it; the name stays taken", tests.in("cannot-start", async ({ root, work, env }) => {
  const launcher = new ProcessLauncher({ env });
  const error = await rejection(launcher.launch(spec(4, "ra-demo-4", work, ["/nonexistent/worker"])));
  assert.instance(error, LaunchError);
  assert.equal([(error as LaunchError).launcher, (error as LaunchError).item, (error as LaunchError).sessionName], ["process", 4, "ra-demo-4"]);
  assert.match(error.message, 'Cannot launch session "ra-demo-4" for work item 4 (process):');
  assert.match(error.message, "could not start");
  assert.is(recordNamed(root, "ra-demo-4")?.ended, "failed-to-start");

  const again = await rejection(launcher.launch(spec(4, "ra-demo-4", work, ["sh", "-c", "exit 0"])));
  assert.instance(again, LaunchError);
  assert.match(again.message, 'a session named "ra-demo-4" is already on record');
}));

test("a working directory that does not exist is a LaunchError with session run's reason", tests.in("no-cwd", async ({ dir, env }) => {
  const missing = join(dir, "gone");
  const error = await rejection(new ProcessLauncher({ env }).launch(spec(6, "ra-demo-6", missing, ["true"])));
  assert.instance(error, LaunchError);
  assert.match(error.message, `(process): Working directory "${missing}" does not exist`);
}));

test("a worker that ends at once was still launched: its exit is in the spool", tests.in("ends-at-once", async ({ state, work, env }) => {
  const launcher = new ProcessLauncher({ env });
  const launched = await launcher.launch(spec(5, "ra-demo-5", work, ["sh", "-c", "exit 3"]));
  const spooled = join(state, "spool", `${launched.sessionId}.1.json`);
  await waitFor("the exit record", () => existsSync(spooled));
  assert.equal(JSON.parse(readFileSync(spooled, "utf8")).code, 3);
}));

test("a session whose holder cannot be checked is found, running unknown: never called ended or absent", tests.in("unknown", async ({ root, work, env }) => {
  const created = await createSession(root, { command: "sleep", args: ["1"], cwd: work, name: "ra-demo-9", tags: { ra_item: "9" } });
  // Our own pid with no recorded start time: a holder that exists but cannot be proven ours.
  writeRecord(root, { ...created, holderPid: process.pid, holderStartedAt: null });
  const launcher = new ProcessLauncher({ env });
  assert.equal(await launcher.find(9), { launcher: "process", id: "ra-demo-9", marker: "ra-demo-9", running: null });
}));

test("a spec's mistakes are the caller's: ra_item in tags, a relative prompt file, an empty argv", tests.in("spec", async ({ work, env }) => {
  const launcher = new ProcessLauncher({ env });
  assert.instance(await rejection(launcher.launch(spec(1, "a", work, ["true"], { tags: { ra_item: "2" } }))), TypeError);
  assert.instance(await rejection(launcher.launch(spec(1, "a", work, ["true"], { stdinFile: "prompt.md" }))), TypeError);
  assert.instance(await rejection(launcher.launch(spec(1, "a", work, []))), TypeError);
  assert.instance(await rejection(launcher.launch(spec(0, "a", work, ["true"]))), RangeError);
}));

test("no test left a session process running", () => {
  assert.equal(tests.leaked, []);
});

test.run();
