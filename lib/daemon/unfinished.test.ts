import { test } from "uvu";
import * as assert from "uvu/assert";
import { atTimeAsync } from "../testing/items.ts";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { connectGitHub } from "../boundaries/github.ts";
import { identify } from "../processes.ts";
import { runtimeArgv } from "../runtime.ts";
import { listAnomalies } from "../store/anomalies.ts";
import { appendAudit, intentsWithoutOutcome, newLogCursor, queryAudit } from "../store/audit.ts";
import type { AuditRecord } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { withDaemon } from "../testing/daemon.ts";
import type { DaemonTest } from "../testing/daemon.ts";
import { git } from "../testing/fixtures.ts";
import { forgeTemplate } from "../testing/forge.ts";
import { quickOptions } from "../testing/github-kit.ts";
import { initialState, runTick } from "./tick.ts";
import { sweepUnfinished } from "./unfinished.ts";
import { readRecord } from "../sessions/records.ts";
import { stopSession } from "../sessions/stop.ts";
import { openSessions, sessionById } from "../work-items/sessions.ts";

const template = forgeTemplate();
test.after(() => template.remove());

/** A pid above Linux's largest: no process has it, so a writer recorded with it is proven gone. */
const GONE = { pid: 4_194_305, started_at: "2026-01-15T09:00:00.000Z", start_id: "boot:1" };

const lib = (file: string) => JSON.stringify(pathToFileURL(join(import.meta.dirname, "..", file)).href);

/**
 * Runs a real process that posts a comment on demo/widgets#1 through commentOnIssue at live
 * and is SIGKILLed: right after the intent (RA_FAULT), or after the POST and before the outcome.
 */
async function crashWhileCommenting(d: DaemonTest, when: "at-intent" | "after-post"): Promise<void> {
  const script = join(d.t.tmp, "comment-and-crash.mjs");
  const configFile = join(d.t.tmp, "config.json");
  writeFileSync(configFile, JSON.stringify(d.config));
  writeFileSync(script, `
    import { readFileSync } from "node:fs";
    const { openStore } = await import(${lib("store/open.ts")});
    const { connectGitHub } = await import(${lib("boundaries/github.ts")});
    const { commentOnIssue, wireEffects } = await import(${lib("effects.ts")});
    const [stateDir, configFile, when] = process.argv.slice(2);
    const store = await openStore(stateDir);
    const github = await connectGitHub(JSON.parse(readFileSync(configFile, "utf8")), store);
    const writer = { ...github.writer, async comment(...args) {
      const made = await github.writer.comment(...args);
      if (when === "after-post") process.kill(process.pid, "SIGKILL");
      return made;
    } };
    await commentOnIssue(store, wireEffects("live", { github: writer }), { repo: "demo/widgets", issue: 1, item: 1, body: "robot-army queued this issue as work item 1 on testhost.", purpose: "queued" });
  `);
  const [bin, ...args] = runtimeArgv(script);
  const env = { ...process.env, RA_FAULT: when === "at-intent" ? "github.comment:intent" : "" };
  // Not spawnSync: the forge answers from this process.
  const child = spawn(bin, [...args, join(d.t.tmp, "state"), configFile, when], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const signal = await new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  assert.is(signal, "SIGKILL", stderr);
}

async function forgeComments(d: DaemonTest): Promise<Array<{ id: number; body: string; html_url: string }>> {
  const { data } = await d.t.owner.rest.issues.listComments({ owner: "demo", repo: "widgets", issue_number: 1 });
  return data.map((c) => ({ id: c.id, body: c.body ?? "", html_url: c.html_url }));
}

/**
 * Runs `fn` with the clock a little over a minute on: past github.comment's settleAfterSeconds,
 * before which a comment whose writer is gone is waited for (its POST may still land).
 */
const aMinuteLater = <T>(fn: () => Promise<T>): Promise<T> => atTimeAsync(new Date(Date.now() + 61_000).toISOString(), fn);

function outcomeOf(store: Store, intent: AuditRecord): AuditRecord | undefined {
  return queryAudit(store, { kind: intent.kind }).find((r) => r.phase === "outcome" && r.actionId === intent.actionId);
}

/** An intent written as a crashed process would have left it (its writer proven gone). */
function leftIntent(store: Store, kind: string, body: Record<string, unknown>, about: { repo?: string; item?: number; simulated?: boolean } = {}): AuditRecord {
  return appendAudit(store, { kind, phase: "intent", actionId: globalThis.crypto.randomUUID(), ...about, body: { ...body, writer: GONE } });
}

test("a comment posted before a crash cut its outcome short is settled from its marker on the issue: ok, with its id and url", () =>
  withDaemon(template, async (d) => {
    await crashWhileCommenting(d, "after-post");
    const [intent] = intentsWithoutOutcome(d.store);
    assert.equal([intent.kind, intent.item, intent.body.issue], ["github.comment", 1, 1]);
    const [posted] = await forgeComments(d);
    assert.ok(posted.body.endsWith(`<!-- robot-army:action ${intent.actionId} -->`), "the comment carries its action's marker");
    const early = await sweepUnfinished(d.deps);
    assert.equal([early.settled, early.reported, early.waiting], [0, 0, 1], "within a minute of the intent a POST may still be landing: waited for");
    const sweep = await aMinuteLater(() => sweepUnfinished(d.deps));
    assert.equal([sweep.settled, sweep.reported, sweep.waiting], [1, 0, 0]);
    assert.equal(outcomeOf(d.store, intent)!.body, { ok: true, settled_from: "issue-comments", found: `posted (comment ${posted.id})`, comment_id: posted.id, url: posted.html_url });
    assert.match(sweep.events[0].line, /^unfinished github\.comment for demo\/widgets#1 \(item 1\): its writer, pid \d+, is gone; settled from the issue's comments: posted \(comment \d+\)$/);
    assert.equal(listAnomalies(d.store), [], "a comment found needs nobody");
    assert.equal(intentsWithoutOutcome(d.store), []);
    assert.equal((await aMinuteLater(() => sweepUnfinished(d.deps))).events, [], "reported once");
    assert.is((await forgeComments(d)).length, 1, "nothing was posted again");
  }));

test("a comment cut short before it was posted settles as not posted, and the owner is told once by an effect_unfinished anomaly", () =>
  withDaemon(template, async (d) => {
    await crashWhileCommenting(d, "at-intent");
    const [intent] = intentsWithoutOutcome(d.store);
    assert.equal(await forgeComments(d), [], "the crash came before the POST");
    // The tick runs the sweep before it dispatches; at start-up that is the first thing it reports after reconciling.
    const result = await aMinuteLater(() => runTick(d.deps, initialState()));
    assert.equal(result.unfinished, { settled: 1, reported: 1, waiting: 0 });
    assert.equal(outcomeOf(d.store, intent)!.body, { ok: false, settled_from: "issue-comments", found: "not posted" });
    const [anomaly] = listAnomalies(d.store, { open: true });
    assert.equal([anomaly.kind, anomaly.action_id, anomaly.repo, anomaly.item], ["effect_unfinished", intent.actionId, "demo/widgets", 1]);
    assert.match(anomaly.detail, "github.comment (a comment on an issue) for demo/widgets#1 (item 1) was cut short: its queued comment was never posted, so the issue was not told");
    const lines = d.lines();
    assert.ok(lines.some((l) => l.includes("settled from the issue's comments: not posted")), lines.join("\n"));
    assert.ok(lines.includes(`anomaly ${anomaly.id}: ${anomaly.detail}; see "robot-army anomalies"`), lines.join("\n"));
    assert.ok(lines.indexOf(`anomaly ${anomaly.id}: ${anomaly.detail}; see "robot-army anomalies"`) < lines.findIndex((l) => l.startsWith("dispatched")), "before dispatch");
    const queued = (await forgeComments(d)).filter((c) => c.body.startsWith("robot-army queued this issue as work item 1"));
    assert.equal(queued.length, 1, "the tick's own poll queued it once; the lost comment was never retried blindly");
    const again = await aMinuteLater(() => runTick(d.deps, initialState()));
    assert.equal(again.unfinished, { settled: 0, reported: 0, waiting: 0 });
    assert.is(listAnomalies(d.store).length, 1, "raised once");
  }));

test("an intent whose writer still runs is waited for up to its kind's timeout; unreachable GitHub leaves it for the next pass", () =>
  withDaemon(template, async (d) => {
    const ours = appendAudit(d.store, { kind: "github.comment", phase: "intent", actionId: globalThis.crypto.randomUUID(), repo: "demo/widgets", item: 1, at: "2026-01-15T10:00:00Z", body: { issue: 1, purpose: "queued", writer: { pid: process.pid, started_at: null, start_id: null } } });
    const unknown = appendAudit(d.store, { kind: "worktree.create", phase: "intent", actionId: globalThis.crypto.randomUUID(), repo: "demo/widgets", item: 2, at: "2026-01-15T10:00:00Z", body: { path: join(d.t.tmp, "nowhere"), branch: "b" } });
    const before = process.env.RA_NOW;
    try {
      process.env.RA_NOW = "2026-01-15T10:04:59Z";
      assert.equal(await sweepUnfinished(d.deps), { settled: 0, reported: 0, waiting: 2, events: [] }, "a writer that may still run, or none on record, is waited for");
      process.env.RA_NOW = "2026-01-15T10:05:00Z";
      const offline = await connectGitHub({ ...d.config, github: { ...d.config.github, api_base: "http://127.0.0.1:9" } }, null, quickOptions([], { maxAttempts: 1 }));
      const late = await sweepUnfinished({ ...d.deps, github: offline });
      assert.equal([late.settled, late.reported, late.waiting], [0, 0, 2], "the comment's evidence cannot be read: next pass; the worktree's timeout (900s) has not passed");
      assert.equal(intentsWithoutOutcome(d.store).map((r) => r.id), [ours.id, unknown.id]);
      process.env.RA_NOW = "2026-01-15T10:15:00Z";
      const due = await sweepUnfinished(d.deps);
      assert.equal([due.settled, due.reported, due.waiting], [2, 1, 0]);
      assert.match(due.events.map((e) => e.line).join("\n"), ": no outcome after 300s; settled from the issue's comments: not posted");
      assert.equal(outcomeOf(d.store, unknown)!.body, { ok: false, settled_from: "worktree", found: "not made", path: join(d.t.tmp, "nowhere"), branch: "b", branch_exists: false });
    } finally {
      if (before === undefined) delete process.env.RA_NOW;
      else process.env.RA_NOW = before;
    }
  }));

test("a writer that still runs is waited for past its timeout, unless it is this process and no longer runs the effect", () =>
  withDaemon(template, async (d) => {
    // A real process that runs for the test: its pid and start time are on record, as auditEffect writes them.
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const running = appendAudit(d.store, { kind: "session.launch", phase: "intent", actionId: globalThis.crypto.randomUUID(), repo: "demo/widgets", item: 1, at: "2026-01-15T10:00:00Z", body: { session: "ra-widgets-1", writer: identify(child.pid!) } });
      const here = appendAudit(d.store, { kind: "session.launch", phase: "intent", actionId: globalThis.crypto.randomUUID(), repo: "demo/widgets", item: 2, at: "2026-01-15T10:00:00Z", body: { session: "ra-widgets-2", writer: identify(process.pid) } });
      const sweep = await aMinuteLater(() => sweepUnfinished(d.deps));
      assert.equal(intentsWithoutOutcome(d.store).map((r) => r.id), [running.id], "its outcome will come from its writer: a second one is never written");
      assert.is(sweep.waiting, 1);
      assert.equal(outcomeOf(d.store, here)!.body.found, "not launched (no session record)");
      assert.match(sweep.events.map((e) => e.line).join("\n"), "this process wrote it and could not record its outcome");
    } finally {
      child.kill("SIGKILL");
    }
  }));

test("with the daemon's cursor a pass reads the intents written since the last and those it waits for; a restarted daemon reads them all and tells nothing twice", () =>
  withDaemon(template, async (d) => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    const at = "2026-01-15T10:00:00Z";
    const recovered = (writer: unknown) =>
      appendAudit(d.store, { kind: "episode.recovered", phase: "intent", actionId: globalThis.crypto.randomUUID(), at, body: { key: "item-1", writer } });
    try {
      const waited = recovered(identify(child.pid!));
      const lost = recovered(GONE);
      const state = initialState();
      const first = await atTimeAsync("2026-01-15T10:05:00Z", () => runTick(d.deps, state));
      assert.equal(first.unfinished, { settled: 0, reported: 1, waiting: 1 });
      assert.equal(state.cursors.unfinished.again, [waited.id], "the one waited for is read again; the one reported is the owner's");
      assert.ok(state.cursors.unfinished.after >= lost.id, "and it has read past both");
      const fresh = recovered(GONE);
      assert.equal(intentsWithoutOutcome(d.store, state.cursors.unfinished).map((r) => r.id), [waited.id, fresh.id], "what the next pass reads");
      child.kill("SIGKILL");
      await exited;
      const second = await atTimeAsync("2026-01-15T10:05:30Z", () => runTick(d.deps, state));
      assert.equal(second.unfinished, { settled: 0, reported: 2, waiting: 0 }, "its writer gone, the one waited for is reported at last");
      assert.equal(state.cursors.unfinished.again, []);
      assert.equal(intentsWithoutOutcome(d.store, newLogCursor()).map((r) => r.id), [waited.id, lost.id, fresh.id], "a new cursor finds every one");
      const restarted = await atTimeAsync("2026-01-15T10:06:00Z", () => sweepUnfinished(d.deps, newLogCursor()));
      assert.equal([restarted.settled, restarted.reported, restarted.waiting], [0, 0, 0], "read again after a restart, and not reported twice");
      assert.equal(listAnomalies(d.store, { kind: "effect_unfinished" }).map((a) => a.action_id), [lost.actionId, waited.actionId, fresh.actionId]);
    } finally {
      child.kill("SIGKILL");
    }
  }));

test("a comment on an issue GitHub says is gone (404) is reported to the owner, never left waiting for ever", () =>
  withDaemon(template, async (d) => {
    const intent = leftIntent(d.store, "github.comment", { issue: 999, purpose: "queued" }, { repo: "demo/widgets", item: 1 });
    const sweep = await aMinuteLater(() => sweepUnfinished(d.deps));
    assert.equal([sweep.settled, sweep.reported, sweep.waiting], [0, 1, 0]);
    const [anomaly] = listAnomalies(d.store, { open: true });
    assert.equal(anomaly.action_id, intent.actionId);
    assert.match(anomaly.detail, "GitHub answered 404 for demo/widgets#999");
    assert.equal((await aMinuteLater(() => sweepUnfinished(d.deps))).reported, 0, "reported once, and not read again");
  }));

test("a simulated comment settles as simulated without reading GitHub", () =>
  withDaemon(template, async (d) => {
    const intent = leftIntent(d.store, "github.comment", { issue: 1, purpose: "queued" }, { repo: "demo/widgets", item: 1, simulated: true });
    const offline = await connectGitHub({ ...d.config, github: { ...d.config.github, api_base: "http://127.0.0.1:9" } }, null, quickOptions([], { maxAttempts: 1 }));
    const sweep = await aMinuteLater(() => sweepUnfinished({ ...d.deps, github: offline }));
    assert.is(sweep.settled, 1);
    const outcome = outcomeOf(d.store, intent)!;
    assert.equal([outcome.simulated, outcome.body], [true, { ok: true, settled_from: "simulated", found: "simulated, nothing was written", simulated: true }]);
    assert.equal(await forgeComments(d), []);
  }));

test("worktrees, sessions and spool files settle from what is on disk; what nothing settles is reported once and left open", () =>
  withDaemon(template, async (d) => {
    await runTick(d.deps, initialState());
    const [row] = queryAudit(d.store, { kind: "session.launch" }).filter((r) => r.phase === "outcome");
    const made = queryAudit(d.store, { kind: "worktree.create" }).find((r) => r.phase === "outcome")!;
    const clone = d.config.repos["demo/widgets"].path;
    const spool = join(d.deps.stateDir, "spool-test");
    mkdirSync(join(spool, "damaged"), { recursive: true });
    writeFileSync(join(spool, "damaged", "x.1.json"), "{");
    git(clone, "branch", "left-over");
    const intents = {
      made: leftIntent(d.store, "worktree.create", { path: made.body.path, branch: made.body.branch }, { repo: "demo/widgets", item: 1 }),
      notMade: leftIntent(d.store, "worktree.create", { path: join(d.t.tmp, "wt", "issue-9"), branch: "left-over" }, { repo: "demo/widgets", item: 9 }),
      launched: leftIntent(d.store, "session.launch", { session: "ra-widgets-1" }, { repo: "demo/widgets", item: 1 }),
      notLaunched: leftIntent(d.store, "session.launch", { session: "ra-widgets-9" }, { repo: "demo/widgets", item: 9 }),
      setAside: leftIntent(d.store, "spool.damaged", { path: join(spool, "x.1.json"), reason: "not JSON" }),
      recovered: leftIntent(d.store, "episode.recovered", { key: "item-1" }),
    };
    // A minute on: past session.launch's settleAfterSeconds, before which a launch's child may still be writing its record.
    const sweep = await aMinuteLater(() => sweepUnfinished(d.deps));
    assert.equal([sweep.settled, sweep.reported, sweep.waiting], [5, 1, 0]);
    const body = (intent: AuditRecord) => outcomeOf(d.store, intent)?.body;
    assert.equal(body(intents.made), { ok: true, settled_from: "worktree", found: "made", path: made.body.path, branch: made.body.branch, branch_exists: true, head: made.body.head });
    assert.equal(body(intents.notMade), { ok: false, settled_from: "worktree", found: "not made", path: join(d.t.tmp, "wt", "issue-9"), branch: "left-over", branch_exists: true });
    assert.equal(body(intents.launched), { ok: true, settled_from: "session-record", found: "launched (running now)", session: "ra-widgets-1", session_id: row.body.session_id, state: "running" });
    assert.equal(body(intents.notLaunched), { ok: false, settled_from: "session-record", found: "not launched (no session record)", session: "ra-widgets-9", session_id: null, state: "no record" });
    assert.equal(body(intents.setAside), { ok: true, settled_from: "file", found: `set aside in ${join(spool, "damaged")}`, path: join(spool, "x.1.json"), moved_to: join(spool, "damaged", "x.1.json") });
    assert.is(body(intents.recovered), undefined, "nothing settles an episode's recovery: no outcome is made up");
    const [anomaly] = listAnomalies(d.store);
    assert.equal([anomaly.kind, anomaly.action_id], ["effect_unfinished", intents.recovered.actionId]);
    assert.match(anomaly.detail, "episode.recovered (an episode recovered in a journal) (action ");
    assert.match(anomaly.detail, "was cut short: no evidence settles it: look at what it names in the audit log (robot-army log --kind episode.recovered)");
    assert.equal(intentsWithoutOutcome(d.store).map((r) => r.id), [intents.recovered.id]);
    assert.equal(await sweepUnfinished(d.deps), { settled: 0, reported: 0, waiting: 0, events: [] }, "each is reported once");
  }));

test("a launch whose writer is gone is waited for until the launch itself would have given up: a minute, or the longer timeout its intent names", () =>
  withDaemon(template, async (d) => {
    const at = "2026-01-15T10:00:00Z";
    const left = (item: number, body: Record<string, unknown>, writer: unknown = GONE) =>
      appendAudit(d.store, { kind: "session.launch", phase: "intent", actionId: globalThis.crypto.randomUUID(), repo: "demo/widgets", item, at, body: { session: `ra-widgets-${item}`, ...body, writer } });
    // As start-worker writes it with the default daemon.confirm_timeout (30s), with a 5-minute one, and one whose writer cannot be checked.
    const usual = left(7, { settle_after_seconds: 30 });
    const long = left(8, { settle_after_seconds: 300 });
    const unchecked = left(9, { settle_after_seconds: 300 }, { pid: process.pid, started_at: null, start_id: null });
    const before = process.env.RA_NOW;
    const sweepAt = async (time: string) => {
      process.env.RA_NOW = time;
      return await sweepUnfinished(d.deps);
    };
    try {
      // Its child (session run -d, a tmux pane) outlives its writer and writes the session's record as it starts: "not launched" would be a guess.
      const early = await sweepAt("2026-01-15T10:00:59Z");
      assert.equal([early.settled, early.reported, early.waiting], [0, 0, 3]);
      const minute = await sweepAt("2026-01-15T10:01:00Z");
      assert.equal([minute.settled, minute.waiting], [1, 2]);
      assert.is(outcomeOf(d.store, usual)?.body.found, "not launched (no session record)");
      assert.equal([outcomeOf(d.store, long), outcomeOf(d.store, unchecked)], [undefined, undefined], "a longer timeout of its own is waited for, past the kind's timeout too");
      const later = await sweepAt("2026-01-15T10:04:59Z");
      assert.equal([later.settled, later.waiting], [0, 2]);
      const due = await sweepAt("2026-01-15T10:05:00Z");
      assert.equal([due.settled, due.waiting], [2, 0]);
      assert.match(due.events.map((e) => e.line).join("\n"), "no outcome after 300s");
    } finally {
      if (before === undefined) delete process.env.RA_NOW;
      else process.env.RA_NOW = before;
    }
  }));

test("a retirement cut short after its worker stopped closes the worker's row retired, not killed as its exit spool would say", () =>
  withDaemon(template, async (d) => {
    await runTick(d.deps, initialState());
    const [row] = openSessions(d.store);
    const intent = appendAudit(d.store, {
      kind: "session.retire", phase: "intent", actionId: globalThis.crypto.randomUUID(), repo: "demo/widgets", item: row.item, sessionId: row.id,
      body: { session: row.name, signal: "merged", writer: GONE },
    });
    await stopSession(d.deps.sessionRoot, readRecord(d.deps.sessionRoot, row.id)!);
    // Within the retirement's settle window nothing is concluded (a signal it sent may still be ending the worker) ...
    assert.is((await sweepUnfinished(d.deps)).settled, 0);
    // ... and the exit that comes meanwhile is the retirement's: the drain closes the row retired, not killed.
    await runTick(d.deps, initialState());
    assert.is(sessionById(d.store, row.id)?.end_reason, "retired");
    const later = new Date(Date.parse(intent.at) + 16_000).toISOString();
    assert.is((await atTimeAsync(later, () => sweepUnfinished(d.deps))).settled, 1);
    assert.equal(outcomeOf(d.store, intent)?.body.found, "stopped (exited)");
    assert.is(sessionById(d.store, row.id)?.end_reason, "retired");
  }));

test.run();
