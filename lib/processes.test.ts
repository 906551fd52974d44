import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { exitedPid } from "./testing/fixtures.ts";
import { identify, liveness, processStartTime } from "./processes.ts";

test("this process is running, known by pid and start time", () => {
  const me = identify(process.pid);
  assert.ok(me.started_at, "start time readable");
  assert.ok(Date.parse(me.started_at!) <= Date.now());
  assert.is(liveness(me), "running");
});

test("a start counted from boot outlasts a change of the wall clock: it, not the start time, is compared", () => {
  const me = identify(process.pid);
  assert.match(me.start_id!, /^[0-9a-f-]{36}:\d+$/);
  // As if the clock had been set since: the start time as a time would no longer match.
  assert.is(liveness({ ...me, started_at: "2001-01-01T00:00:00.000Z" }), "running");
  // Another start on this boot, or the same ticks on another boot: not this process.
  const [boot, ticks] = me.start_id!.split(":");
  assert.is(liveness({ ...me, start_id: `${boot}:${Number(ticks) + 1}` }), "exited");
  assert.is(liveness({ ...me, start_id: `00000000-0000-4000-8000-000000000000:${ticks}` }), "exited");
});

test("a process that has exited is exited", () => {
  assert.is(liveness({ pid: exitedPid(), started_at: "2020-01-01T00:00:00.000Z" }), "exited");
});

test("a live pid with another start time is a reused pid: exited", () => {
  assert.is(liveness({ pid: process.pid, started_at: "2001-01-01T00:00:00.000Z" }), "exited");
});

test("a live pid with no recorded start time cannot be proven either way", () => {
  assert.is(liveness({ pid: process.pid, started_at: null }), "unknown");
});

test("pids 0 and 1 and nonsense are never judged", () => {
  assert.is(liveness({ pid: 1, started_at: null }), "unknown");
  assert.is(liveness({ pid: 0, started_at: null }), "unknown");
  assert.is(liveness({ pid: -5, started_at: null }), "unknown");
});

test("a child's start time is read while it runs and it is exited once reaped", async () => {
  const child = spawn("sleep", ["5"]);
  const identity = identify(child.pid!);
  assert.ok(processStartTime(child.pid!));
  assert.is(liveness(identity), "running");
  const closed = new Promise((resolve) => child.on("close", resolve));
  child.kill("SIGTERM");
  await closed;
  assert.is(liveness(identity), "exited");
});

test.run();
