import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { fsCalls, fsCallsCountable } from "./testing/fs-calls.ts";
import { skipWhen } from "./testing/skip.ts";
import { exitedPid } from "./testing/fixtures.ts";
import { groupLiveness, groupMembers, identify, liveness, processStartTime, provenSameProcess, sameProcess } from "./processes.ts";
import { waitFor } from "./testing/wait.ts";

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

/** How often `fn` reads `/proc/<pid>/stat`. */
const statReads = (pid: number, fn: () => void) => fsCalls("readFileSync", fn)!.filter((path) => path === `/proc/${pid}/stat`).length;

skipWhen(test, !fsCallsCountable() && "this runtime's node:fs named exports do not follow fs.readFileSync, so reads cannot be counted")(
  "liveness and identify read a process's /proc entry once: its state and its start are of one process",
  () => {
    const me = identify(process.pid);
    assert.is(statReads(process.pid, () => assert.is(liveness(me), "running")), 1);
    assert.is(statReads(process.pid, () => assert.is(liveness({ ...me, start_id: null }), "running")), 1, "by its start time");
    assert.is(statReads(process.pid, () => identify(process.pid)), 1);
  },
);

test("a group runs while a process its leader started in it runs, after the leader ended; known by start, never by name", async () => {
  const leader = spawn("sh", ["-c", "sleep 30 & exec sleep 0.2"], { detached: true, stdio: "ignore" });
  await new Promise((resolve) => leader.once("spawn", resolve));
  const identity = identify(leader.pid!);
  try {
    const group = { pgid: leader.pid!, leader_start_id: identity.start_id! };
    const ended = new Promise((resolve) => leader.once("exit", resolve));
    assert.is(groupLiveness(group, identity.start_id), "running", "its leader runs");
    await ended;
    await waitFor("the sleep left in the group", () => groupMembers(leader.pid!).length === 1);
    assert.is(liveness(identity), "exited", "the leader is gone");
    assert.is(groupLiveness(group, identity.start_id), "running", "what it started still runs in its group");
    assert.is(groupLiveness({ ...group, leader_start_id: null }, identity.start_id), "running", "its leader's start unknown");
    const [boot, ticks] = identity.start_id!.split(":");
    // A member that started before the command is no process the command started.
    assert.is(groupLiveness(group, `${boot}:${Number(ticks) + 1_000_000_000}`), "exited");
    assert.is(groupLiveness(group, `00000000-0000-4000-8000-000000000000:${ticks}`), "exited", "another boot's group");
    assert.is(groupLiveness(group, null), "unknown", "no recorded start: cannot be told");
  } finally {
    // The group this test made, by its id.
    if (groupMembers(leader.pid!).length) process.kill(-leader.pid!, "SIGKILL");
  }
  await waitFor("the group to end", () => groupMembers(leader.pid!).length === 0);
  assert.is(groupLiveness({ pgid: leader.pid!, leader_start_id: identity.start_id! }, identity.start_id), "exited");
});

test("a group whose leader's pid now leads another process's group is ended: the kernel reuses a group id only once it is empty", () => {
  const me = identify(process.pid);
  const [boot, ticks] = me.start_id!.split(":");
  assert.is(groupLiveness({ pgid: me.pid, leader_start_id: `${boot}:${Number(ticks) - 1}` }, `${boot}:${Number(ticks) - 1}`), "exited");
});

test("one process is proven by a start both records name; a pid alone never proves it, though sameProcess takes two bare pids for one", () => {
  const me = identify(process.pid);
  assert.ok(provenSameProcess(me, { ...me }));
  assert.ok(provenSameProcess({ ...me, start_id: null }, me), "by start time when one has no start id");
  assert.not.ok(provenSameProcess({ ...me, start_id: "other:1" }, me));
  const bare = { pid: me.pid, started_at: null, start_id: null };
  assert.not.ok(provenSameProcess(bare, bare));
  assert.not.ok(provenSameProcess(bare, { ...me, started_at: null }), "a start id on one side only proves nothing");
  // sameProcess's own meaning, which the locks and abandonedHere rely on, is unchanged.
  assert.ok(sameProcess(bare, { ...me, started_at: null }));
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
