import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { RobotArmyError } from "../errors.ts";
import { exitedPid, withTempDir } from "../testing/fixtures.ts";
import { identify, liveness } from "../processes.ts";
import { runtimeArgv } from "../runtime.ts";
import { breakIfStale, lockOwner as owner } from "../stale-lock.ts";
import { withLock } from "./lock.ts";
import { rejection, sleep } from "../testing/sessions.ts";

/** A `sleep` this test starts and must stop; stopped by its own pid. */
function startSleeper(): { child: ChildProcess; stop: () => Promise<void> } {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  return {
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await closed;
    },
  };
}

test("the lock file names its holder by pid and start time while held, and is gone after", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const result = await withLock(path, () => {
    const owner = JSON.parse(readFileSync(path, "utf8"));
    assert.equal(owner, identify(process.pid));
    assert.ok(owner.started_at);
    return 42;
  });
  assert.is(result, 42);
  assert.not.ok(existsSync(path));
}));

test("two concurrent holders in one process take turns", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const timeline: string[] = [];
  const holder = (name: string) => withLock(path, async () => {
    timeline.push(`${name} in`);
    await sleep(80);
    timeline.push(`${name} out`);
    return name;
  });
  const results = await Promise.all([holder("a"), holder("b"), holder("c")]);
  assert.equal(results, ["a", "b", "c"]);
  for (let i = 0; i < timeline.length; i += 2) {
    assert.is(timeline[i].split(" ")[0], timeline[i + 1].split(" ")[0], `no one enters while ${timeline[i]}: ${timeline.join(", ")}`);
    assert.ok(timeline[i].endsWith(" in") && timeline[i + 1].endsWith(" out"));
  }
  assert.is(timeline.length, 6);
  assert.not.ok(existsSync(path));
}));

test("a holder in another process keeps this one waiting until it lets go", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const trail = join(dir, "trail");
  const script = join(dir, "hold-lock.ts");
  writeFileSync(script, [
    `import { appendFileSync } from "node:fs";`,
    `import { withLock } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname!, "lock.ts")).href)};`,
    `await withLock(${JSON.stringify(path)}, async () => {`,
    `  process.stdout.write("holding\\n");`,
    `  await new Promise((r) => setTimeout(r, 200));`,
    `  appendFileSync(${JSON.stringify(trail)}, "other out\\n");`,
    `});`,
  ].join("\n"));
  const argv = runtimeArgv(script);
  const other = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
  const closed = new Promise<number | null>((resolve) => other.once("close", (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      other.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("holding") && resolve());
      other.once("close", () => reject(new Error("the other process ended before it held the lock")));
    });
    await withLock(path, () => {
      assert.is(readFileSync(trail, "utf8"), "other out\n", "entered only after the other holder was done");
    }, 10_000);
    assert.is(await closed, 0);
  } finally {
    if (other.exitCode === null && other.signalCode === null) other.kill("SIGKILL");
    await closed;
  }
}));

test("a lock whose owner is a dead process is broken and taken", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  writeFileSync(path, JSON.stringify({ pid: exitedPid(), started_at: "2026-01-15T10:00:00.000Z" }));
  const startedAt = Date.now();
  const result = await withLock(path, () => JSON.parse(readFileSync(path, "utf8")).pid, 5_000);
  assert.is(result, process.pid, "the lock now names this process");
  assert.ok(Date.now() - startedAt < 1_000, "taken at once, not after the timeout");
  assert.not.ok(existsSync(path));
}));

test("a lock naming a live pid with another start time (a reused pid) is broken", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  writeFileSync(path, JSON.stringify({ pid: process.pid, started_at: "2001-01-01T00:00:00.000Z" }));
  assert.is(await withLock(path, () => "taken", 2_000), "taken");
}));

test("a lock whose owner is alive is never broken: the wait times out", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const sleeper = startSleeper();
  try {
    const owner = identify(sleeper.child.pid!);
    assert.is(liveness(owner), "running");
    writeFileSync(path, JSON.stringify(owner));
    let ran = false;
    const error = await rejection(withLock(path, () => { ran = true; }, 200));
    assert.instance(error, RobotArmyError);
    assert.match((error as Error).message, /still held by another process after 0\.2s/);
    assert.not.ok(ran);
    assert.equal(JSON.parse(readFileSync(path, "utf8")), owner, "the owner's lock is untouched");
  } finally {
    await sleeper.stop();
  }
}));

test("a lock whose live owner has no recorded start time cannot be proven gone: waited for", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const sleeper = startSleeper();
  try {
    writeFileSync(path, JSON.stringify({ pid: sleeper.child.pid, started_at: null }));
    assert.instance(await rejection(withLock(path, () => {}, 200)), RobotArmyError);
    assert.ok(existsSync(path));
  } finally {
    await sleeper.stop();
  }
}));

test("a lock that cannot be read (a creator mid-write) is waited for, never broken", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  writeFileSync(path, "{ half");
  assert.instance(await rejection(withLock(path, () => {}, 200)), RobotArmyError);
  assert.is(readFileSync(path, "utf8"), "{ half");
}));

test("a lock naming pid 1 is never broken", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  writeFileSync(path, JSON.stringify({ pid: 1, started_at: "2001-01-01T00:00:00.000Z" }));
  assert.instance(await rejection(withLock(path, () => {}, 150)), RobotArmyError);
  assert.ok(existsSync(path));
}));

test("the lock is let go when the work throws, and the error passes through", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const error = await rejection(withLock(path, () => { throw new TypeError("boom"); }));
  assert.instance(error, TypeError);
  assert.not.ok(existsSync(path));
  assert.is(await withLock(path, () => "again", 200), "again");
}));

test("a waiter takes the lock as soon as a dead holder's lock appears stale mid-wait", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const sleeper = startSleeper();
  try {
    writeFileSync(path, JSON.stringify(identify(sleeper.child.pid!)));
    const waiting = withLock(path, () => "taken", 5_000);
    await sleep(100);
    await sleeper.stop(); // the owner dies while the waiter waits
    assert.is(await waiting, "taken");
  } finally {
    await sleeper.stop();
  }
}));

test("a waiter that saw a dead owner does not break the lock another waiter has since taken", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const dead = { pid: exitedPid(), started_at: "2020-01-01T00:00:00.000Z" };
  writeFileSync(path, JSON.stringify(dead));
  const seen = owner(path);
  // Meanwhile a first waiter broke the stale lock and took it: the file names a live holder now.
  writeFileSync(path, JSON.stringify(identify(process.pid)));
  assert.is(breakIfStale(path, seen), false);
  assert.equal(owner(path), identify(process.pid), "the fresh lock is still there");
  assert.not.ok(existsSync(`${path}.break`));
}));

test("breaking waits while another live process is breaking; a breaker that died is cleared", () => withTempDir(async (dir) => {
  const path = join(dir, "s.lock");
  const dead = { pid: exitedPid(), started_at: "2020-01-01T00:00:00.000Z" };
  writeFileSync(path, JSON.stringify(dead));
  const sleeper = startSleeper();
  try {
    writeFileSync(`${path}.break`, JSON.stringify(identify(sleeper.child.pid!)));
    assert.is(breakIfStale(path), false, "a live breaker is at work");
    assert.ok(existsSync(path));
    await sleeper.stop();
    assert.is(breakIfStale(path), false, "the dead breaker's file is cleared first");
    assert.not.ok(existsSync(`${path}.break`));
    assert.is(breakIfStale(path), "broken");
    assert.not.ok(existsSync(path));
  } finally {
    await sleeper.stop();
  }
}));

test.run();
