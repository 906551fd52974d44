import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sessionsOf } from "../work-items/sessions.ts";
import { forgeTemplate } from "../testing/forge.ts";
import { waitFor } from "../testing/sessions.ts";
import { childIdentity, holderIdentity, readRecord } from "../sessions/records.ts";
import { identify, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { queryAudit } from "../store/audit.ts";
import { getItem } from "../work-items/queries.ts";
import { withDaemon } from "../testing/daemon.ts";
import { startNotifyReceivers } from "../testing/notify-receivers.ts";
import { readHeartbeat } from "./heartbeat.ts";
import { LOST_REASON } from "../ending/worker-ended.ts";
import { initialState, runTick, tickSummary } from "./tick.ts";
import { reporter } from "../events.ts";
import { runLoop, stopSwitch } from "./loop.ts";
import type { StopSwitch } from "./loop.ts";

const template = forgeTemplate();
test.after(() => template.remove());

test("a first tick polls, dispatches under the cap, comments, audits the pass and writes the heartbeat", () =>
  withDaemon(template, async ({ t, store, deps, lines }) => {
    const result = await runTick(deps, initialState());
    assert.equal(result.failed, []);
    const out = lines();
    assert.ok(out.some((l) => l.startsWith("poll: demo/widgets: 3 new")), out.join("\n"));
    assert.ok(out.includes("dispatched demo/widgets#1 as ra-widgets-1 (item 1)"), out.join("\n"));
    assert.ok(out.includes("commented on demo/widgets#1 (dispatched)"), out.join("\n"));
    assert.ok(out.some((l) => l.startsWith("waiting: demo/widgets#2: ")), out.join("\n"));
    assert.is(getItem(store, 1)!.state, "active");
    // The claim names the process that made it, so a claim cut short can be told apart later.
    const claim = queryAudit(store, { kind: "state.work_item", item: 1 }).find((r) => r.body.to === "dispatching")!;
    assert.equal(claim.body.claimed_by, identify(process.pid));
    const { data } = await t.owner.rest.issues.listComments({ owner: "demo", repo: "widgets", issue_number: 1 });
    assert.ok(data.some((c) => c.body?.startsWith("robot-army dispatched a session")));
    const [pass] = queryAudit(store, { kind: "reconcile.pass" });
    assert.equal((pass.body as { dispatch: unknown }).dispatch, { withheld: null, would_dispatch: 0, active: 1, failed: 0, waiting: 2 });
    const beat = readHeartbeat(deps.stateDir)!;
    assert.equal([beat.pid, beat.tick, beat.next_at], [process.pid, 1, null]);
    assert.ok(beat.last_poll_at);
  }));

test("the disk anomalies ask git for the clone's worktrees on the first tick and again only once they changed (the worktree a dispatch added)", () =>
  withDaemon(template, async ({ deps }) => {
    const state = initialState();
    await runTick(deps, state);
    assert.is(state.worktreeLists.gitRuns, 1);
    // The first tick's dispatch added a worktree after its disk anomalies were read: the second asks again, the third does not.
    await runTick(deps, state);
    assert.is(state.worktreeLists.gitRuns, 2);
    await runTick(deps, state);
    assert.is(state.worktreeLists.gitRuns, 2);
  }));

test("a tick stopped after it dispatched and before its notification step leaves the dispatch to the next tick, which tells it", () =>
  withDaemon(template, async ({ t, deps }) => {
    const receivers = await startNotifyReceivers(join(t.tmp, "receivers"));
    try {
      const told = { ...deps, config: { ...deps.config, ...receivers.config, notifications: { ...deps.config.notifications, events: ["dispatch" as const] } } };
      // The first tick a channel is configured for is stopped (a SIGTERM, or a kill) right after its dispatch.
      let stop = false;
      const state = initialState();
      const first = await runTick({ ...told, stopRequested: () => stop, report: (e) => { deps.report(e); if (e.line.startsWith("dispatched ")) stop = true; } }, state);
      assert.ok(first.stopped, "the first tick stopped early");
      assert.is(receivers.received().webhook.length, 0, "before its notification step");
      const second = await runTick(told, state);
      assert.is(second.notify.sent, 1);
      assert.equal(receivers.received().webhook.map((r) => (r.body as { title: string }).title), ["robot-army: demo/widgets#1 dispatched (item 1)"]);
    } finally {
      await receivers.close();
    }
  }));

test("a worker's exit in the spool closes its row, interrupts its item, and the spool file goes", () =>
  withDaemon(template, async ({ store, deps, lines }) => {
    const state = initialState();
    await runTick(deps, state);
    const [row] = sessionsOf(store, 1);
    // The exit record, not the temp file it is written through before its rename.
    await waitFor("the exit record", () => existsSync(deps.spoolDir) && readdirSync(deps.spoolDir).some((name) => name.endsWith(".json")), 10_000);
    const again = await runTick(deps, state);
    assert.equal(again.spool, { processed: 1, kept: 0 });
    assert.equal(readdirSync(deps.spoolDir), []);
    const item = getItem(store, 1)!;
    assert.equal([item.state, item.reason], ["interrupted", "worker exited (code 3)"]);
    const [closed] = sessionsOf(store, 1);
    assert.equal([closed.id, closed.end_reason, (closed as unknown as { exit_code: number }).exit_code], [row.id, "exited", 3]);
    assert.ok(closed.ended_at);
    assert.ok(lines().includes("worker of item 1 exited (code 3): item interrupted"), lines().join("\n"));
  }, ["sh", "-c", "sleep 1; exit 3"]));

test("a spool file for a session the store does not know is kept and reported once", () =>
  withDaemon(template, async ({ deps, lines }) => {
    mkdirSync(deps.spoolDir, { recursive: true });
    const file = join(deps.spoolDir, "0f0f0f0f-0000-4000-8000-000000000000.1.json");
    writeFileSync(file, JSON.stringify({ session_id: "0f0f0f0f-0000-4000-8000-000000000000", name: "x", item: "9", generation: 1, ended: "exited", code: 0, signal: null, at: "2026-01-15T10:00:00Z" }));
    const state = initialState();
    await runTick(deps, state);
    await runTick(deps, state);
    assert.ok(existsSync(file));
    assert.is(lines().filter((l) => l.startsWith("exit spool: kept")).length, 1);
  }));

test("a worker whose holder vanished works on while its command runs; once that ends too it is lost, and its item interrupted", () =>
  withDaemon(template, async ({ store, deps, lines }) => {
    const state = initialState();
    await runTick(deps, state);
    const [row] = sessionsOf(store, 1);
    const record = await waitFor("the holder's and worker's pids", () => readRecord(deps.sessionRoot, row.id)?.childPid ? readRecord(deps.sessionRoot, row.id) : undefined, 15_000);
    // Its holder dies without a word: no exit is recorded, nothing is spooled.
    process.kill(record!.holderPid!, "SIGKILL");
    await waitFor("the holder to be gone", () => liveness(holderIdentity(record!) as ProcessIdentity) === "exited");
    const working = await runTick(deps, state);
    assert.equal([working.settled.lost, working.settled.unknown], [0, 0], "the worker it started still runs, and is known to");
    assert.is(getItem(store, 1)!.state, "active");
    assert.is(sessionsOf(store, 1)[0].ended_at, null);
    // The worker this test's daemon started, known by the pid its record holds.
    process.kill(record!.childPid!, "SIGKILL");
    await waitFor("the worker to be gone", () => liveness(childIdentity(record!) as ProcessIdentity) === "exited");
    const result = await runTick(deps, state);
    assert.is(result.settled.lost, 1);
    const item = getItem(store, 1)!;
    assert.equal([item.state, item.reason], ["interrupted", LOST_REASON]);
    assert.is(sessionsOf(store, 1)[0].end_reason, "lost");
    assert.ok(lines().some((l) => l.startsWith("worker of item 1 lost")), lines().join("\n"));
  }, ["sh", "-c", "exec sleep 30"]));

test("at start-up the spool is drained before anything is dispatched", () =>
  withDaemon(template, async ({ store, deps }) => {
    // A daemon before this one dispatched item 1, whose worker then ended while no daemon ran.
    await runTick(deps, initialState());
    const [row] = sessionsOf(store, 1);
    // The exit record, not the temp file it is written through before its rename.
    await waitFor("the exit record", () => existsSync(deps.spoolDir) && readdirSync(deps.spoolDir).some((name) => name.endsWith(".json")), 10_000);
    const result = await runTick(deps, initialState());
    assert.equal([result.spool.processed, result.dispatch.active], [1, 1]);
    const moves = queryAudit(store, { kind: "state.work_item" }).map((r) => `${r.item}:${r.body.to}`);
    assert.ok(moves.indexOf("1:interrupted") < moves.indexOf("2:dispatching"), moves.join(" "));
    assert.is(sessionsOf(store, 1)[0].id, row.id);
  }, ["sh", "-c", "sleep 1; exit 0"]));

test("when the spool cannot be drained, nothing is dispatched", () =>
  withDaemon(template, async ({ store, deps, lines }) => {
    mkdirSync(deps.stateDir, { recursive: true });
    writeFileSync(deps.spoolDir, "a file where the spool folder should be");
    const result = await runTick(deps, initialState());
    assert.equal(result.failed, ["exit spool"]);
    assert.match(result.dispatch.withheld!, /could not be reconciled/);
    assert.is(getItem(store, 1)!.state, "ready");
    assert.ok(lines().some((l) => l.startsWith("dispatch withheld:")));
  }));

test("run --once ends with one summary line, and exits 0 when every dispatch failed: a failed dispatch is an outcome, not a step", () =>
  withDaemon(template, async ({ store, deps, events }) => {
    const config = { ...deps.config, worktrees: { ...deps.config.worktrees, post_create: [["sh", "-c", "exit 7"]] } };
    const code = await runLoop({ ...deps, config }, { once: true, tickSeconds: 1, stop: stopSwitch() });
    assert.is(code, 0);
    const last = events.at(-1)!;
    assert.is(last.line, "tick 1: dispatched 0, failed 3, waiting 0; no step failed");
    assert.equal(last, {
      event: "tick", line: last.line, tick: 1, dispatched: 0, would_dispatch: 0, retired: 0, failed: 3, waiting: 0, withheld: null, steps_failed: [], stopped: false,
    });
    assert.is(events.filter((e) => e.event === "tick").length, 1);
    assert.is(getItem(store, 1)!.state, "failed");
  }));

test("run --once exits 1 when a step failed, and its summary names the steps", () =>
  withDaemon(template, async ({ deps, events }) => {
    mkdirSync(deps.stateDir, { recursive: true });
    writeFileSync(deps.spoolDir, "a file where the spool folder should be");
    const code = await runLoop(deps, { once: true, tickSeconds: 1, stop: stopSwitch() });
    assert.is(code, 1);
    assert.is(events.at(-1)!.line, "tick 1: dispatched 0, failed 0, waiting 3 (dispatch withheld); step failed: exit spool");
  }));

test("a failed step's line is redacted: a token in its error is never printed", () =>
  withDaemon(template, async ({ deps, events }) => {
    mkdirSync(deps.stateDir, { recursive: true });
    // The error of the spool step names its path, and this path holds a token.
    const spoolDir = join(deps.stateDir, `ghp_${"T0k".repeat(12)}`);
    writeFileSync(spoolDir, "a file where the spool folder should be");
    const result = await runTick({ ...deps, spoolDir }, initialState());
    assert.equal(result.failed, ["exit spool"]);
    const failed = events.find((e) => e.event === "step_failed")!;
    assert.match(failed.line, /^exit spool failed: .*\[redacted\]/);
    assert.not.match(failed.line, "ghp_");
  }));

test("whatever the daemon prints, as a line or as JSON, has its secrets redacted", () => {
  const token = `gho_${"Q".repeat(36)}`;
  const out: string[] = [];
  const event = { event: "poll", line: `poll: GitHub answered 401 for ${token}`, error: { detail: token } };
  reporter((text) => out.push(text), false)(event);
  reporter((text) => out.push(text), true)(event);
  assert.equal(out, [
    "poll: GitHub answered 401 for [redacted]\n",
    JSON.stringify({ event: "poll", line: "poll: GitHub answered 401 for [redacted]", error: { detail: "[redacted]" } }) + "\n",
  ]);
});

test("a running daemon prints a tick's summary only when the tick did something or its counts changed", () =>
  withDaemon(template, async ({ deps, events }) => {
    const real = stopSwitch();
    let sleeps = 0;
    // The real switch, asked to stop at the third sleep: three ticks, then the loop ends.
    const stop: StopSwitch = {
      get reason() {
        return real.reason;
      },
      stop: real.stop,
      wake: real.wake,
      sleep: (ms) => {
        if (++sleeps === 3) real.stop("test");
        return real.sleep(ms);
      },
      dispose: real.dispose,
    };
    assert.is(await runLoop(deps, { once: false, tickSeconds: 0.05, stop }), 0);
    assert.equal(events.filter((e) => e.event === "tick").map((e) => e.line), [
      "tick 1: dispatched 1, failed 0, waiting 2; no step failed",
      "tick 2: dispatched 0, failed 0, waiting 2; no step failed",
    ], "tick 3 said what tick 2 said, so it is left out");
  }));

test("the summary counts what a level without sessions would dispatch, and says when a tick was stopped early", () => {
  const result = {
    tick: 4, failed: ["poll", "heartbeat"], stopped: true, spool: { processed: 0, kept: 0 }, settled: { lost: 0, ended: 0, unknown: 0, cut_short: 0 }, needs_info: { asked: 0, answered: 0 }, silent: { raised: 0, retracted: 0 },
    unfinished: { settled: 0, reported: 0, waiting: 0 }, pulls: { repos: 0, requests: 0, not_modified: 0, stored: 0, failed: 0, slowed: 0 }, feedback: { taken: 0, strangers: 0, messages: 0, delivered: 0, held: 0 }, dependencies: { asked: 0, blocked: 0, released: 0 },
    poll: { ran: true, new: 0, done: 0, abandoned: 0 }, retire: { retired: 0, left: 0, orphans: { raised: 0, retracted: 0, gone: 0 } }, tabs: { closed: 0, unknown: 0 }, hosts: { beats: 0, lost: 0, failed: 0 }, claims: { released: 0, not_ours: 0, failed: 0 },
    cleanup: { done: 0, branch_retained: 0, retained: 0, skipped: 0, failed: 0, bundles_removed: 0 }, disk: { raised: 0, retracted: 0 },
    dispatch: { withheld: null, would_dispatch: 2, active: 0, failed: 0, waiting: 1 }, notify: { sent: 0, held_back: 0, failed_deliveries: 0 },
  };
  assert.is(tickSummary(result).line, "tick 4 (stopped early): dispatched 0, would dispatch 2, failed 0, waiting 1; steps failed: poll, heartbeat");
});

test("a wake (SIGHUP) ends the sleep it meets, or, sent while a pass runs, the next sleep: never lost, used once", async () => {
  const s = stopSwitch();
  const ends = (sleep: Promise<void>) => Promise.race([sleep.then(() => "woke"), new Promise((r) => setTimeout(() => r("slept on"), 5_000))]);
  s.wake(); // no sleep on: a pass is running
  assert.is(await ends(s.sleep(60_000)), "woke");
  const sleeping = s.sleep(60_000);
  s.wake();
  assert.is(await ends(sleeping), "woke");
  assert.is(await ends(s.sleep(100)).then(() => s.reason), null, "a wake is not a stop");
  s.dispose();
});

test.run();
