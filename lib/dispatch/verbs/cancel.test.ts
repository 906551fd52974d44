import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT, runtimeArgv } from "../../runtime.ts";
import { listRecords, readRecord, sessionFiles, writeRecord } from "../../sessions/records.ts";
import { sessionState } from "../../sessions/state.ts";
import { stopSession } from "../../sessions/stop.ts";
import { drainSpool } from "../../daemon/spool-drain.ts";
import { queryAudit } from "../../store/audit.ts";
import { getItem } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { dispatchReady } from "../dispatch.ts";
import type { DispatchDeps } from "../dispatch-deps.ts";
import type { Store } from "../../store/open.ts";
import { sessionsOf } from "../../work-items/sessions.ts";
import { cancelSession, cancelTarget, describeCancel } from "./cancel.ts";
import type { CancelDeps } from "./cancel.ts";
import { waitFor } from "../../testing/sessions.ts";
import { rejects } from "../../testing/rejects.ts";
import { stopAll, verbTemplate, withWorld } from "../../testing/verbs.ts";
import { writeKittyStandIn } from "../../testing/kitty-standin.ts";
import { KittyLauncher } from "../../boundaries/launchers/kitty.ts";
import { groupMembers } from "../../processes.ts";
import { relaunchItem } from "./relaunch.ts";

const template = verbTemplate();
test.after(() => template.remove());

/** Where cancel looks, as the command wires it for the world's dispatch. */
const where = (deps: DispatchDeps): CancelDeps => ({ sessionRoot: deps.sessionRoot, spoolDir: join(deps.stateDir, "spool"), host: deps.host });

test("cancel with no stdin signals nothing and records which session it reached for and how it gave up", () =>
  withWorld(template, async ({ store, deps, t }) => {
    await dispatchReady(deps);
    store.close();
    const argv = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
    const result = spawnSync(argv[0], [...argv.slice(1), "cancel", "1"], {
      encoding: "utf8", stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, RA_STATE_DIR: deps.stateDir, RA_SESSION_ROOT: deps.sessionRoot, RA_CONFIG: "", HOME: t.tmp },
    });
    assert.is(result.status, 3, result.stderr);
    assert.match(result.stderr, "Not cancelled (no stdin): nothing was signalled");
    const reopened = await (await import("../../store/open.ts")).openStore(deps.stateDir);
    try {
      const [record] = queryAudit(reopened, { kind: "session.cancel" });
      assert.equal([record.phase, record.body.session, record.body.gave_up, record.body.signalled], ["fact", "ra-widgets-1", "no stdin", false]);
      const [session] = listRecords(deps.sessionRoot);
      assert.is(sessionState(deps.sessionRoot, session), "running", "the worker still runs");
      assert.is(getItem(reopened, 1)!.state, "active");
    } finally {
      reopened.close();
    }
  }));

test("a confirmed cancel stops only that session, closes its row as cancelled and interrupts the item", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    const target = cancelTarget(store, 1);
    const result = await cancelSession(store, where(deps), target);
    assert.equal([result.did, result.endReason, result.before, result.after], ["stopped", "cancelled", "active", "interrupted"]);
    assert.is(describeCancel("ra-widgets-1", 1, result), "cancelled session ra-widgets-1 of work item 1; the item is interrupted");
    const [record] = listRecords(deps.sessionRoot);
    assert.equal([record.ended, sessionState(deps.sessionRoot, record)], ["killed", "exited"]);
    const [row] = sessionsOf(store, 1);
    assert.is(row.end_reason, "cancelled");
    assert.is(getItem(store, 1)!.state, "interrupted");
    const phases = queryAudit(store, { kind: "session.cancel" }).map((r) => r.phase);
    assert.equal(phases, ["intent", "outcome"]);
    assert.throws(() => cancelTarget(store, 1), /no open session to cancel/);
  }));

test("cancel reaches for the session by its id: with the item's own record swept, another session of the same name is never signalled", () =>
  withWorld(template, async ({ store, deps }) => {
    const { target, own, other } = await withNamesake(store, deps);
    // The item's own record is gone (swept) while its worker still runs.
    rmSync(sessionFiles(deps.sessionRoot, own.id).record);
    await rejects(cancelSession(store, where(deps), target), Error, "no record left", "is not proven gone", "nothing was signalled");
    assert.is(sessionState(deps.sessionRoot, other), "running", "the other session runs on");
    // No record says how it ended and its worker is not proven gone: unknown is never "lost".
    assert.is(sessionsOf(store, 1)[0].ended_at, null);
    assert.is(getItem(store, 1)!.state, "active");
    assert.equal(queryAudit(store, { kind: "session.cancel" }), []);
  }));

test("a session with no record and no exit record left, whose worker is proven gone, is closed as lost", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    const target = cancelTarget(store, 1);
    const [own] = listRecords(deps.sessionRoot);
    assert.is(await stopSession(deps.sessionRoot, own), "stopped");
    // Every trace of its end is gone: its record and the exit its holder spooled.
    rmSync(sessionFiles(deps.sessionRoot, own.id).record);
    rmSync(join(deps.stateDir, "spool"), { recursive: true, force: true });
    const result = await cancelSession(store, where(deps), target);
    assert.equal([result.did, result.ending, result.endReason, result.after], ["no-exit-record", null, "lost", "interrupted"]);
    assert.is(sessionsOf(store, 1)[0].end_reason, "lost");
  }));

test("a row the daemon closed while the owner was asked keeps the daemon's ending, and cancel reports that one", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    const target = cancelTarget(store, 1);
    const [own] = listRecords(deps.sessionRoot);
    assert.is(await stopSession(deps.sessionRoot, own), "stopped");
    // Meanwhile the daemon drains the exit (row closed as killed) and the record is swept.
    const spool = join(deps.stateDir, "spool");
    await waitFor("the exit spooled by its holder", () => existsSync(spool) && readdirSync(spool).some((f) => f.endsWith(".json")));
    assert.is((await drainSpool(store, spool)).processed, 1);
    rmSync(sessionFiles(deps.sessionRoot, own.id).record);
    const result = await cancelSession(store, where(deps), target);
    assert.equal([result.did, result.endReason], ["had-ended", "killed"]);
    assert.match(describeCancel("ra-widgets-1", 1, result), "its row is closed as killed");
    assert.is(sessionsOf(store, 1)[0].end_reason, "killed");
  }));

test("an unreadable record of the item's session refuses cancel before any signal", () =>
  withWorld(template, async ({ store, deps }) => {
    const { target, own, other } = await withNamesake(store, deps);
    writeFileSync(sessionFiles(deps.sessionRoot, own.id).record, "");
    await rejects(cancelSession(store, where(deps), target), Error, "cannot be read", "nothing was signalled");
    assert.equal(queryAudit(store, { kind: "session.cancel" }), [], "a refusal before any signal changes nothing");
    assert.is(sessionsOf(store, 1)[0].ended_at, null);
    assert.is(getItem(store, 1)!.state, "active");
    assert.is(sessionState(deps.sessionRoot, other), "running", "the worker runs on");
  }));

test("cancel of a session that had ended on its own signals nothing and closes its row from its spooled exit", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    const spool = join(deps.stateDir, "spool");
    // The worker exits 0 by itself; its holder spools the exit and reaps its files.
    const [row] = sessionsOf(store, 1);
    await waitFor("the worker's exit in the spool", () => existsSync(join(spool, `${row.id}.1.json`)));
    // Its slot freed at once, dispatch may have gone on to the next items: their sessions are not this one.
    assert.equal(listRecords(deps.sessionRoot).filter((r) => r.id === row.id), []);
    const result = await cancelSession(store, where(deps), cancelTarget(store, 1));
    assert.equal([result.did, result.ending, result.endReason], ["had-ended", "worker exited (code 0)", "exited"]);
    assert.equal([result.before, result.after], ["active", "interrupted"]);
    assert.is(describeCancel("ra-widgets-1", 1, result),
      "session ra-widgets-1 of work item 1 had already ended: worker exited (code 0). Nothing was signalled; its row is closed as exited and the item is interrupted");
    // How it ended is cancel's line; what that makes of the item is the exit's reading: no pull request was ever asked about.
    assert.equal([sessionsOf(store, 1)[0].end_reason, getItem(store, 1)!.reason], ["exited", "worker exited 0 with no pull request known yet"]);
    const records = queryAudit(store, { kind: "session.cancel" });
    assert.equal(records.map((r) => [r.phase, r.body.already_ended, r.body.signalled]), [["fact", "worker exited (code 0)", false]]);
  }, { args: ["-c", "echo working; exit 0"] }));

test("cancel of a done item's session that had ended on its own keeps the first ending and says the item stays done", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    transition(store, 1, "done", { reason: "issue closed", issueClosedObserved: true });
    const [record] = listRecords(deps.sessionRoot);
    // Kept by its tag, the session's own record holds its exit after the holder is done.
    const { update } = await import("../../sessions/holder.ts");
    await update(deps.sessionRoot, record.id, (r) => ({ ...r, tags: { ...r.tags, keep: "true" } }));
    writeFileSync(join(record.cwd, "go"), "");
    await waitFor("the worker's own exit", () => listRecords(deps.sessionRoot)[0]?.exitedAt);
    const result = await cancelSession(store, where(deps), cancelTarget(store, 1));
    assert.equal([result.did, result.ending, result.endReason, result.before, result.after], ["had-ended", "worker exited (code 4)", "exited", "done", "done"]);
    assert.match(describeCancel("ra-widgets-1", 1, result), "its row is closed as exited and the item stays done");
    assert.is(sessionsOf(store, 1)[0].end_reason, "exited");
  }, { args: ["-c", "echo working; while [ ! -e go ]; do sleep 0.05; done; exit 4"] }));

test("cancel refuses a session of another host before any signal", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    await rejects(cancelSession(store, { ...where(deps), host: "elsewhere" }, cancelTarget(store, 1)), Error, "runs on host testhost", "Nothing was signalled");
    assert.is(sessionsOf(store, 1)[0].ended_at, null);
    assert.is(sessionState(deps.sessionRoot, listRecords(deps.sessionRoot)[0]), "running");
  }));

test("a spooled exit record that cannot be read refuses: the row stays open rather than guessed lost", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    const [row] = sessionsOf(store, 1);
    await stopAll(deps);
    const spooled = join(deps.stateDir, "spool", `${row.id}.1.json`);
    // The holder spools the exit once its command's group is empty: on a loaded machine, a moment after the stop.
    await waitFor("the worker's exit in the spool", () => existsSync(spooled));
    rmSync(sessionFiles(deps.sessionRoot, row.id).record, { force: true });
    writeFileSync(spooled, "{");
    await rejects(cancelSession(store, where(deps), cancelTarget(store, 1)), Error, "cannot be read, so how it ended is unknown");
    assert.is(sessionsOf(store, 1)[0].ended_at, null);
  }));

test("cancel of a worker in a terminal tab whose command left a job in the tab's process group says so: the row is closed saying what still runs, and resume refuses", () =>
  withWorld(template, async ({ store, deps, t }) => {
    // The worker runs in a (stand-in) kitty tab: `session run` in the foreground, in the group the tab made.
    const kitty = writeKittyStandIn(t.tmp);
    deps.launcher = new KittyLauncher({ env: { ...process.env, RA_STATE_DIR: deps.stateDir, RA_SESSION_ROOT: deps.sessionRoot, ...kitty.env }, binary: kitty.binary });
    await dispatchReady(deps);
    const [row] = sessionsOf(store, 1);
    const record = await waitFor("the worker's command on record", () => readRecord(deps.sessionRoot, row.id)?.childPid ? readRecord(deps.sessionRoot, row.id) : undefined, 15_000);
    const pgid = record!.sharedPgid!;
    assert.is(pgid, record!.holderPid, "the tab's group, led by the holder: not one robot-army made for the command");
    try {
      const job = await waitFor("the job the worker left", () => groupMembers(pgid).find((pid) => pid !== record!.holderPid && pid !== record!.childPid), 5_000);
      const result = await cancelSession(store, where(deps), cancelTarget(store, 1));
      assert.equal([result.did, result.endReason, result.after], ["left-running", "cancelled", "interrupted"]);
      const left = `stopped its command, but 1 process it started still runs in process group ${pgid}, which robot-army did not make and so does not signal: pid ${job}`;
      assert.is(result.ending, left);
      assert.is(describeCancel("ra-widgets-1", 1, result),
        `cancelled session ra-widgets-1 of work item 1: ${left}. Its row is closed as cancelled and the item is interrupted; its worktree is not free until they end`);
      assert.ok(groupMembers(pgid).includes(job), "the job was not signalled: its group is the tab's (DESIGN rule 6)");
      assert.is(getItem(store, 1)!.reason, `cancelled by the owner: ${left}`);
      assert.equal(queryAudit(store, { kind: "session.cancel" }).map((r) => [r.phase, r.body.result ?? null]), [["intent", null], ["outcome", "left-running"]]);
      // Its record stays and says something still works in the worktree: resume refuses rather than start a second worker there.
      await rejects(relaunchItem(deps, 1, { how: "resume", force: true }), Error, /still running/);
      assert.is(sessionsOf(store, 1).length, 1, "no second worker was started");
    } finally {
      // The stand-in's tab group: this test made it, through the stand-in, and ends it.
      if (groupMembers(pgid).length) process.kill(-pgid, "SIGKILL");
      await waitFor("the tab's group to end", () => groupMembers(pgid).length === 0);
    }
  }, { args: ["-c", "sleep 30 > job.out 2>&1 & exec sleep 30"] }));

/** Dispatches item 1 and records another robot-army's session under the same name (the same worker, seen twice). */
async function withNamesake(store: Store, deps: DispatchDeps) {
  await dispatchReady(deps);
  const target = cancelTarget(store, 1);
  const [own] = listRecords(deps.sessionRoot);
  const other = { ...own, id: "0f0f0f0f-0000-4000-8000-000000000000" };
  writeRecord(deps.sessionRoot, other);
  return { target, own, other };
}

test.run();
