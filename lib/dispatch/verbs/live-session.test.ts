import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../testing/wait.ts";
import { rejects } from "../../testing/rejects.ts";
import { liveness } from "../../processes.ts";
import type { ProcessIdentity } from "../../processes.ts";
import { holderIdentity, readRecord } from "../../sessions/records.ts";
import { stopSession } from "../../sessions/stop.ts";
import { getItem } from "../../work-items/queries.ts";
import { dispatchReady } from "../dispatch.ts";
import { sessionsOf } from "../../work-items/sessions.ts";
import { describeLive, liveSessionOf } from "./live-session.ts";
import { relaunchItem } from "./relaunch.ts";
import { resetItem } from "./reset.ts";
import { stopAll, verbTemplate, withWorld } from "../../testing/verbs.ts";
import { settleSessions } from "../../daemon/settle.ts";
import { childIdentity } from "../../sessions/records.ts";
import { spoolDir } from "../../sessions/spool.ts";
import { workerRuns } from "../../sessions/state.ts";

const template = verbTemplate();
test.after(() => template.remove());

test("a worker that outlived its holder is live: reset and resume refuse and its worktree stays", () =>
  withWorld(template, async ({ store, deps }) => {
    const session = (await dispatchReady(deps)).outcomes[0].session!;
    const record = await waitFor("the worker's pid", () => readRecord(deps.sessionRoot, session.id)?.childPid ? readRecord(deps.sessionRoot, session.id) : undefined, 15_000);
    process.kill(record!.holderPid!, "SIGKILL");
    await waitFor("the holder to be gone", () => liveness(holderIdentity(record!) as ProcessIdentity) === "exited");
    const answer = liveSessionOf(store, deps.sessionRoot, 1, session.worktree);
    assert.equal([answer.live, answer.session?.id], [true, session.id], "its command still runs");
    await rejects(resetItem(deps, 1, { force: true }), Error, /ra-widgets-1.*still running/);
    await rejects(relaunchItem(deps, 1, { how: "resume", force: true }), Error, /still running/);
    assert.ok(existsSync(session.worktree));
    assert.is(sessionsOf(store, 1).length, 1);
    // Once the worker it started is stopped too (by its recorded pid and start), nothing works there any more.
    assert.is(await stopSession(deps.sessionRoot, record!, { graceMs: 2_000 }), "stopped");
    assert.is(liveSessionOf(store, deps.sessionRoot, 1, session.worktree).live, false);
  }));

test("a worker whose holder was killed and whose command ended runs while a process it started in its group runs: not lost, resume refuses", () =>
  withWorld(template, async ({ store, deps }) => {
    const session = (await dispatchReady(deps)).outcomes[0].session!;
    const record = (await waitFor("the worker's pid", () => readRecord(deps.sessionRoot, session.id)?.childPid ? readRecord(deps.sessionRoot, session.id) : undefined, 15_000))!;
    assert.is(record.childPgid, record.childPid, "a headless worker leads a process group of its own");
    const holder = holderIdentity(record) as ProcessIdentity;
    assert.is(liveness(holder), "running");
    process.kill(holder.pid, "SIGKILL");
    await waitFor("the holder to be gone", () => liveness(holder) === "exited");
    await waitFor("the worker's command to end", () => liveness(childIdentity(record) as ProcessIdentity) === "exited", 5_000);
    const seen = readRecord(deps.sessionRoot, session.id)!;
    assert.is(seen.exitedAt, null, "no exit was recorded: its holder died first");
    assert.is(workerRuns(deps.sessionRoot, seen), true, "the sleep it left in its group still runs in the worktree");
    const settled = settleSessions({ store, sessionRoot: deps.sessionRoot, spoolDir: spoolDir({ RA_STATE_DIR: deps.stateDir }), host: "testhost" });
    assert.equal([settled.lost, settled.ended], [0, 0], "settle does not take it for lost");
    assert.is(getItem(store, 1)!.state, "active");
    assert.equal(liveSessionOf(store, deps.sessionRoot, 1, session.worktree).live, true);
    await rejects(relaunchItem(deps, 1, { how: "resume", force: true }), Error, /still running/);
    assert.is(sessionsOf(store, 1).length, 1, "no second worker was started");
    // Once the group is stopped, nothing it started runs there: now the worker is lost.
    await stopSession(deps.sessionRoot, seen, { graceMs: 0 });
    // The SIGKILLed member is gone a moment after the signal, not at once.
    await waitFor("the group's last member to end", () => workerRuns(deps.sessionRoot, readRecord(deps.sessionRoot, session.id)!) === false, 5_000);
    assert.is(settleSessions({ store, sessionRoot: deps.sessionRoot, spoolDir: spoolDir({ RA_STATE_DIR: deps.stateDir }), host: "testhost" }).lost, 1);
  }, { args: ["-c", "sleep 30 & exec sleep 1"] }));

test("a session record that cannot be read makes every item's answer unknown: nothing is reset, and the file is named", () =>
  withWorld(template, async ({ store, deps }) => {
    const session = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    assert.is(liveSessionOf(store, deps.sessionRoot, 1, session.worktree).live, false);
    const damaged = join(deps.sessionRoot, "0f0f0f0f-0000-4000-8000-000000000000.json");
    writeFileSync(damaged, "{ not json");
    const answer = liveSessionOf(store, deps.sessionRoot, 1, session.worktree);
    assert.equal(answer, { live: "unknown", session: null, unreadable: damaged });
    assert.match(describeLive(answer, 1), `session record "${damaged}" cannot be read`);
    await rejects(resetItem(deps, 1, { force: true }), Error, "cannot be read");
    assert.ok(existsSync(session.worktree), "the worktree stays");
    assert.is(getItem(store, 1)!.state, "active");
  }));

test.run();
