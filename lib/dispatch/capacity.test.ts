import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import { liveness } from "../processes.ts";
import { makeItem } from "../testing/items.ts";
import { trackSessionProcesses, waitFor } from "../testing/sessions.ts";
import { holderIdentity, readRecord, sessionFiles, writeRecord } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import { configFrom, inWorkerDir, startWorker } from "../testing/workers.ts";
import { configuredLimits, observeCapacity, workerTags } from "./capacity.ts";
import type { WorkerDirs } from "../testing/workers.ts";
import type { SessionRecord } from "../sessions/records.ts";
import { defaultConfig } from "../config.ts";
import { placeKeep, releaseKeep } from "../ending/keeps.ts";
import { recordSession } from "../work-items/sessions.ts";

/** Records a running worker as its item's next attempt, as dispatch does once it started. */
function recordAttempt(dirs: WorkerDirs, item: number, worker: SessionRecord): void {
  recordSession(dirs.store, {
    id: worker.id, item, name: worker.name, host: "testhost", launcher: "process", marker: "", worktree: dirs.work, branch: "b", started_at: "", simulated: false,
  });
}

const sessions = trackSessionProcesses(test, { childrenBy: "pid" });

const CONFIG = `
[daemon]
max_concurrent_sessions = 4

[worker]
max_sessions = 2

[repos."demo/widgets"]
path = "/src/widgets"
max_sessions = 1

[repos."demo/gadgets"]
path = "/src/gadgets"
`;

test("a missing or empty session root is observable and counts nothing", () =>
  withTempDir(async (dir) => {
    const config = await configFrom(CONFIG);
    for (const root of [join(dir, "missing"), dir]) {
      const capacity = observeCapacity({ sessionRoot: root, config, store: undefined });
      assert.is(capacity.observable, true);
      assert.is(capacity.why, undefined);
      assert.equal(capacity.machine, { ours: 0, kept: 0, other: 0, max: 4 });
      assert.equal(capacity.repos["demo/widgets"], { live: 0, kept: 0, max: 1, source: "configured" });
      assert.equal(capacity.repos["demo/gadgets"], { live: 0, kept: 0, max: 2, source: "worker.max_sessions" });
      assert.equal(capacity.canDispatch("demo/widgets"), { ok: true, reason: "a slot is free: 0 of 4 sessions on this machine, 0 of 1 in demo/widgets" });
    }
  }));

test("live workers are ours (kept apart) or another's; non-workers and ended ones do not count", inWorkerDir(async (dirs) => {
  const { store } = dirs;
  const widget = makeItem(store, { issue: 7 });
  const gadget = makeItem(store, { repo: "demo/gadgets", issue: 3 });
  const tagged = await startWorker(sessions, dirs, { ra_item: String(widget.id), keep: "true" });
  await startWorker(sessions, dirs, workerTags(store, gadget.id));
  await startWorker(sessions, dirs, { ra_item: "99" });
  // Another robot-army's item 1, in the same root: its store tag says whose it is.
  await startWorker(sessions, dirs, { ra_item: String(widget.id), ra_store: join(dirs.work, "elsewhere.db") });
  await startWorker(sessions, dirs, { purpose: "not a worker" });
  const ended = await sessions.start(dirs.root, { command: "sh", args: ["-c", "exit 0"], cwd: dirs.work, tags: { ra_item: String(gadget.id), keep: "true" } });
  await waitFor("the short worker to exit", () => sessionState(dirs.root, readRecord(dirs.root, ended.record.id)!) === "exited");

  const capacity = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG), store });
  assert.is(capacity.observable, true);
  assert.equal(capacity.machine, { ours: 2, kept: 1, other: 2, max: 4 });
  assert.equal(capacity.repos, {
    "demo/gadgets": { live: 1, kept: 0, max: 2, source: "worker.max_sessions" },
    "demo/widgets": { live: 1, kept: 1, max: 1, source: "configured" },
  });
  assert.equal(capacity.workers.map((w) => [w.item, w.ours, w.repo, w.kept]).sort(), [
    ["1", false, null, false], ["1", true, "demo/widgets", true], ["2", true, "demo/gadgets", false], ["99", false, null, false],
  ]);
  assert.equal(capacity.canDispatch("demo/gadgets"), {
    ok: false,
    reason: `this machine runs 4 of 4 worker sessions (daemon.max_concurrent_sessions): 2 ours (1 kept), 2 other; a kept session holds its slot until its keep is released: "robot-army session tag ${tagged.name} --rm keep"`,
  }, "every live worker counts against the machine, others' too");

  const roomier = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG.replace("= 4", "= 5")), store });
  assert.equal(roomier.canDispatch("demo/widgets"), {
    ok: false, reason: `repository demo/widgets runs 1 of 1 sessions (configured), 1 kept; a kept session holds its slot until its keep is released: "robot-army session tag ${tagged.name} --rm keep"`,
  });
  assert.equal(roomier.canDispatch("demo/gadgets"), { ok: true, reason: "a slot is free: 4 of 5 sessions on this machine, 1 of 2 in demo/gadgets" });
  assert.equal(roomier.canDispatch("demo/elsewhere"), { ok: true, reason: "a slot is free: 4 of 5 sessions on this machine, 0 of 2 in demo/elsewhere" });

  const noStore = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG), store: undefined });
  assert.equal(noStore.machine, { ours: 0, kept: 0, other: 4, max: 4 }, "without a store every worker is another's");
}));

test("a worker whose item's keep covers it is kept, holds its slot, and the reasons name unkeep; an earlier attempt's worker is not kept", inWorkerDir(async (dirs) => {
  const { store } = dirs;
  const widget = makeItem(store, { issue: 7, state: "active" });
  const gadget = makeItem(store, { repo: "demo/gadgets", issue: 3, state: "active" });
  const earlier = await startWorker(sessions, dirs, workerTags(store, gadget.id));
  recordAttempt(dirs, gadget.id, earlier);
  const current = await startWorker(sessions, dirs, workerTags(store, gadget.id));
  recordAttempt(dirs, gadget.id, current);
  const widgetWorker = await startWorker(sessions, dirs, workerTags(store, widget.id));
  recordAttempt(dirs, widget.id, widgetWorker);
  const worker = (await defaultConfig()).worker;
  placeKeep(store, widget.id, { worker });
  placeKeep(store, gadget.id, { worker });
  const config = await configFrom(CONFIG.replace("= 4", "= 3"));

  const capacity = observeCapacity({ sessionRoot: dirs.root, config, store });
  assert.equal(capacity.machine, { ours: 3, kept: 2, other: 0, max: 3 });
  assert.equal(capacity.repos["demo/widgets"], { live: 1, kept: 1, max: 1, source: "configured" });
  assert.equal(capacity.repos["demo/gadgets"], { live: 2, kept: 1, max: 2, source: "worker.max_sessions" }, "the earlier attempt's worker counts, not kept");
  assert.equal(capacity.workers.map((w) => [w.id, w.kept, w.release]).sort(), [
    [current.id, true, `robot-army unkeep ${gadget.id}`],
    [earlier.id, false, null],
    [widgetWorker.id, true, `robot-army unkeep ${widget.id}`],
  ].sort());
  assert.equal(capacity.canDispatch("demo/widgets"), {
    ok: false,
    reason: `this machine runs 3 of 3 worker sessions (daemon.max_concurrent_sessions): 3 ours (2 kept), 0 other; a kept session holds its slot until its keep is released: "robot-army unkeep ${widget.id}", "robot-army unkeep ${gadget.id}"`,
  });
  const roomier = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG.replace("= 4", "= 5")), store });
  assert.equal(roomier.canDispatch("demo/widgets"), {
    ok: false,
    reason: `repository demo/widgets runs 1 of 1 sessions (configured), 1 kept; a kept session holds its slot until its keep is released: "robot-army unkeep ${widget.id}"`,
  });

  releaseKeep(store, widget.id);
  const released = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG.replace("= 4", "= 5")), store });
  assert.equal(released.machine, { ours: 3, kept: 1, other: 0, max: 5 }, "unkept, the worker still holds a slot but is not kept");
  assert.equal(released.canDispatch("demo/widgets"), { ok: false, reason: "repository demo/widgets runs 1 of 1 sessions (configured)" });
}));

test("a worker of ours in a repository the config does not name is counted there against worker.max_sessions", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { repo: "demo/unlisted", issue: 1 });
  await startWorker(sessions, dirs, workerTags(dirs.store, item.id));
  const capacity = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG), store: dirs.store });
  assert.equal(capacity.repos["demo/unlisted"], { live: 1, kept: 0, max: 2, source: "worker.max_sessions" });
}));

test("where a limit comes from: the file's own key, else worker.max_sessions", async () => {
  const text = `[worker]\nmax_sessions = 2\n[repos."a/same"]\npath = "/a"\nmax_sessions = 2\n[repos."a/inherits"]\npath = "/b"\n[repos."a/dotted.js"]\npath = "/c"\nmax_sessions = 3\n`;
  const config = await configFrom(text);
  const limits = configuredLimits(text, Object.keys(config.repos));
  assert.equal([...limits].sort(), ["a/dotted.js", "a/same"]);
  const told = observeCapacity({ sessionRoot: "/nonexistent/robot-army", config, store: undefined, configuredLimits: limits });
  assert.equal(Object.entries(told.repos).map(([r, e]) => [r, e.max, e.source]), [
    ["a/dotted.js", 3, "configured"], ["a/inherits", 2, "worker.max_sessions"], ["a/same", 2, "configured"],
  ]);
  const guessed = observeCapacity({ sessionRoot: "/nonexistent/robot-army", config, store: undefined });
  assert.is(guessed.repos["a/same"].source, "worker.max_sessions", "without the text, a limit equal to the default reads as the default");
  assert.is(guessed.repos["a/dotted.js"].source, "configured");
});

test("a worker whose holder cannot be checked makes capacity unobservable, and dispatch waits", inWorkerDir(async (dirs) => {
  const item = makeItem(dirs.store, { issue: 7 });
  const started = await startWorker(sessions, dirs, workerTags(dirs.store, item.id));
  const record = readRecord(dirs.root, started.id)!;
  // A record whose holder is a live pid with no start time on record: running or reused, nobody can say.
  writeRecord(dirs.root, { ...record, holderStartedAt: null, holderStartId: null });
  const capacity = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG), store: dirs.store });
  assert.is(capacity.observable, false);
  assert.is(capacity.why, `worker session "${record.name}" (ra_item=${item.id}) cannot be checked: its holder (pid ${record.holderPid}) cannot be proven running or gone`);
  assert.equal(capacity.canDispatch("demo/gadgets"), { ok: false, reason: `capacity cannot be observed: ${capacity.why}` });
  writeRecord(dirs.root, record); // so the session can be stopped by its identity
}));

test("a non-worker session that cannot be checked does not matter", inWorkerDir(async (dirs) => {
  const started = await startWorker(sessions, dirs, { purpose: "not a worker" });
  const record = readRecord(dirs.root, started.id)!;
  writeRecord(dirs.root, { ...record, holderStartedAt: null, holderStartId: null });
  const capacity = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG), store: dirs.store });
  assert.is(capacity.observable, true);
  assert.equal(capacity.machine, { ours: 0, kept: 0, other: 0, max: 4 });
  writeRecord(dirs.root, record);
}));

test("a worker whose holder died counts while its command lives on", inWorkerDir(async (dirs) => {
  const started = await startWorker(sessions, dirs, { ra_item: "99" });
  // Known as robot-army knows it: by pid and the start its record names (its boot-relative start id first).
  const { pid, ...start } = holderIdentity(started);
  const holder = { pid: pid!, ...start };
  assert.is(liveness(holder), "running");
  process.kill(holder.pid, "SIGKILL");
  await waitFor("the holder to die", () => liveness(holder) === "exited");
  assert.is(sessionState(dirs.root, readRecord(dirs.root, started.id)!), "vanished");
  const capacity = observeCapacity({ sessionRoot: dirs.root, config: await configFrom(CONFIG), store: dirs.store });
  assert.is(capacity.observable, true);
  assert.equal(capacity.machine, { ours: 0, kept: 0, other: 1, max: 4 }, "vanished is not gone while the command runs");
}));

test("a record that cannot be read, or a root that is not a folder, makes capacity unobservable", () =>
  withTempDir(async (dir) => {
    const config = await configFrom(CONFIG);
    const root = join(dir, "sessions");
    mkdirSync(root);
    const id = "abcd1111-0000-4000-8000-000000000001";
    writeFileSync(sessionFiles(root, id).record, "{ half a record");
    const unreadable = observeCapacity({ sessionRoot: root, config, store: undefined });
    assert.is(unreadable.observable, false);
    assert.match(unreadable.why!, `session record "${sessionFiles(root, id).record}" cannot be read: `);
    assert.is(unreadable.canDispatch("demo/widgets").ok, false);
    rmSync(root, { recursive: true });
    writeFileSync(root, "not a folder");
    const notDir = observeCapacity({ sessionRoot: root, config, store: undefined });
    assert.is(notDir.observable, false);
    assert.match(notDir.why!, `the session root "${root}" cannot be read: ENOTDIR`);
  }));

test("many problems are summed up after the first three", () =>
  withTempDir(async (dir) => {
    for (let n = 1; n <= 5; n++) writeFileSync(join(dir, `abcd000${n}-0000-4000-8000-000000000001.json`), "{");
    const capacity = observeCapacity({ sessionRoot: dir, config: await configFrom(CONFIG), store: undefined });
    assert.match(capacity.why!, /; and 2 more$/);
    assert.is(capacity.why!.split("; session record").length, 3);
  }));

test("no session was left running", () => {
  assert.equal(sessions.leaked, []);
});

test.run();
