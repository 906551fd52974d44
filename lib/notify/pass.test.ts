import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { wireEffects, SIMULATED_GITHUB } from "../effects.ts";
import { raiseAnomaly } from "../store/anomalies.ts";
import { lastAuditId, queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { startNotifyReceivers } from "../testing/notify-receivers.ts";
import type { NotifyReceivers, ReceiverOptions } from "../testing/notify-receivers.ts";
import { makeItem, withStore } from "../testing/items.ts";
import { transition } from "../work-items/transition.ts";
import { notifyPass } from "./pass.ts";

const LIVE = wireEffects("live", { github: SIMULATED_GITHUB });
const PLAN = wireEffects("plan", { github: SIMULATED_GITHUB });

/** A store, both loopback channels, and a config pointing at them with `extra` TOML on top. */
async function withChannels(extra: string, fn: (store: Store, config: Config, receivers: NotifyReceivers) => Promise<void>, modes: ReceiverOptions = {}): Promise<void> {
  await withStore(async (store, stateDir) => {
    const receivers = await startNotifyReceivers(join(stateDir, "receivers"), modes);
    try {
      const config = await parseConfig(`${receivers.configToml}\n${extra}`, join(stateDir, "config.toml"), {});
      await fn(store, config, receivers);
    } finally {
      await receivers.close();
    }
  });
}

const deps = (store: Store, config: Config, effects = LIVE) => ({ store, config, effects, host: "box" });

test("with no channel configured the pass sends nothing and records nothing", async () => {
  await withStore(async (store, stateDir) => {
    const config = await parseConfig('[notifications]\nevents = ["failure"]\n', join(stateDir, "config.toml"), {});
    makeItem(store, { issue: 1, state: "failed" });
    const told = await notifyPass(deps(store, config), { passStartedAfter: 0 });
    assert.equal([told.sent, told.held_back], [0, 0]);
    assert.is(queryAudit(store, { kind: "notification" }).length, 0);
  });
});

test("both channels get each message of the pass; what came before the first channel is never told", async () => {
  await withChannels('[notifications]\nevents = ["failure"]\n', async (store, config, receivers) => {
    makeItem(store, { issue: 1, state: "failed" });
    const before = lastAuditId(store);
    makeItem(store, { issue: 2, state: "failed" });
    const told = await notifyPass(deps(store, config), { passStartedAfter: before });
    assert.is(told.sent, 1);
    const { webhook, pushover } = receivers.received();
    assert.is(webhook.length, 1);
    assert.is(pushover.length, 1);
    const hook = webhook[0].body as Record<string, unknown>;
    assert.is(hook.title, "robot-army: demo/widgets#2 failed (item 2)");
    assert.match(String(hook.message), "item 2 (demo/widgets#2) failed on box: worktree could not be made: disk full");
    assert.match(String(hook.message), "run: robot-army show 2");
    assert.is(pushover[0].content_type, "application/x-www-form-urlencoded");
    assert.is((pushover[0].body as Record<string, string>).title, "robot-army: demo/widgets#2 failed (item 2)");
    assert.match(told.events[0].line, "notified: demo/widgets#2 failed (item 2) (webhook, pushover)");
  });
});

test("with [web] public_url set, each message links to the item's page (an anomaly's to /anomalies): Pushover's url, the webhook's url, a line in the text", async () => {
  await withChannels('[notifications]\nevents = ["failure", "anomaly"]\n\n[web]\npublic_url = "https://robot.lan:8443/"\n', async (store, config, receivers) => {
    const before = lastAuditId(store);
    makeItem(store, { issue: 2, state: "failed" });
    raiseAnomaly(store, { kind: "orphan_worktree", detail: "a worktree no item claims: /w/x", repo: "demo/widgets" });
    assert.is((await notifyPass(deps(store, config), { passStartedAfter: before })).sent, 2);
    const { webhook, pushover } = receivers.received();
    const hooks = webhook.map((w) => w.body as Record<string, unknown>);
    assert.equal(hooks.map((h) => h.url), ["https://robot.lan:8443/items/1", "https://robot.lan:8443/anomalies"]);
    assert.match(String(hooks[0].message), /\nopen: https:\/\/robot\.lan:8443\/items\/1$/);
    const form = pushover[0].body as Record<string, string>;
    assert.equal([form.url, form.url_title], ["https://robot.lan:8443/items/1", "open in the dashboard"]);
  });
  // Without it, no link: the dashboard is on loopback, where a phone cannot reach it.
  await withChannels('[notifications]\nevents = ["failure"]\n', async (store, config, receivers) => {
    const before = lastAuditId(store);
    makeItem(store, { issue: 2, state: "failed" });
    await notifyPass(deps(store, config), { passStartedAfter: before });
    assert.is((receivers.received().webhook[0].body as Record<string, unknown>).url, undefined);
    assert.is((receivers.received().pushover[0].body as Record<string, string>).url, undefined);
  });
});

test("a transition is told once: the next pass, and a restarted daemon's, send nothing again", async () => {
  await withChannels('[notifications]\nevents = ["failure", "needs_info"]\n', async (store, config, receivers) => {
    const item = makeItem(store, { issue: 1, state: "active" });
    const start = lastAuditId(store);
    transition(store, item.id, "needs_info", { reason: "worker asks: which database?" });
    assert.is((await notifyPass(deps(store, config), { passStartedAfter: start })).sent, 1);
    // A later pass and a new process (no memory but the audit log) find nothing to tell.
    assert.is((await notifyPass(deps(store, config), { passStartedAfter: lastAuditId(store) })).sent, 0);
    assert.is((await notifyPass(deps(store, config))).sent, 0);
    assert.is(receivers.received().webhook.length, 1);
    assert.match(String((receivers.received().webhook[0].body as Record<string, unknown>).message), "needs you on box: worker asks: which database?");
  });
});

test("max_per_cycle = 2 with five events: two messages and one summary naming the three held back and their kinds", async () => {
  await withChannels('[notifications]\nevents = ["failure", "anomaly"]\nmax_per_cycle = 2\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    for (const issue of [1, 2, 3]) makeItem(store, { issue, state: "failed" });
    raiseAnomaly(store, { kind: "orphan_worktree", actionId: "/x/a", detail: "a folder no item claims: /x/a" });
    raiseAnomaly(store, { kind: "orphan_worktree", actionId: "/x/b", detail: "a folder no item claims: /x/b" });
    const told = await notifyPass(deps(store, config), { passStartedAfter: start });
    assert.equal([told.sent, told.held_back], [3, 3]);
    const titles = receivers.received().webhook.map((r) => (r.body as Record<string, unknown>).title);
    assert.equal(titles, ["robot-army: demo/widgets#1 failed (item 1)", "robot-army: demo/widgets#2 failed (item 2)", "robot-army: 3 more held back on box"]);
    const summary = receivers.received().webhook[2].body as Record<string, unknown>;
    assert.match(String(summary.message), "3 more notifications held back this pass (notifications.max_per_cycle): 1 failure, 2 anomaly");
    // Summaries are the least urgent: Pushover's priority -1.
    assert.is((receivers.received().pushover[2].body as Record<string, string>).priority, "-1");
    // The anomaly's detail (a path) is not in any message.
    assert.not.match(JSON.stringify(receivers.received()), "/x/a");
    // And what the summary covered is not told again.
    assert.is((await notifyPass(deps(store, config))).sent, 0);
  });
});

test("a config the daemon refused is told with why, its file's key and line, as the daemon's log says it", async () => {
  await withChannels('[notifications]\nevents = ["anomaly"]\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    const detail = 'config not applied, the daemon runs the last good one: Cannot read config "/c/config.toml": unknown key "daemon.pol_seconds" (line 3)';
    raiseAnomaly(store, { kind: "config_refused", actionId: "/c/config.toml", detail });
    assert.is((await notifyPass(deps(store, config), { passStartedAfter: start })).sent, 1);
    const [sent] = receivers.received().webhook.map((r) => r.body as Record<string, unknown>);
    assert.is(sent.title, "robot-army: anomaly config_refused");
    assert.match(String(sent.message), detail);
  });
});

test("only the events asked for are told", async () => {
  await withChannels('[notifications]\nevents = ["dispatch", "completion"]\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    makeItem(store, { issue: 1, state: "failed" });
    makeItem(store, { issue: 2, state: "done" });
    await notifyPass(deps(store, config), { passStartedAfter: start });
    const titles = receivers.received().webhook.map((r) => (r.body as Record<string, unknown>).title);
    assert.equal(titles, ["robot-army: demo/widgets#2 dispatched (item 2)", "robot-army: demo/widgets#2 done (item 2)"]);
  });
});

test("below live a notification is recorded and printed as would notify, and nothing leaves the machine", async () => {
  await withChannels('[notifications]\nevents = ["failure"]\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    makeItem(store, { issue: 1, state: "failed", simulated: true });
    const told = await notifyPass(deps(store, config, PLAN), { passStartedAfter: start });
    assert.is(told.sent, 1);
    assert.match(told.events[0].line, "would notify: demo/widgets#1 failed (item 1) (webhook, pushover)");
    assert.equal(receivers.received(), { webhook: [], pushover: [] });
    const records = queryAudit(store, { kind: "notification.send" });
    assert.is(records.length, 4);
    assert.ok(records.every((r) => r.simulated));
    assert.ok(records.filter((r) => r.phase === "outcome").every((r) => r.body.simulated === true));
  });
});

test("what is not to be told is passed for good: the next pass does not read it again", async () => {
  await withChannels('[notifications]\nevents = ["needs_info"]\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    makeItem(store, { issue: 1, state: "failed" });
    assert.is((await notifyPass(deps(store, config), { passStartedAfter: start })).sent, 0);
    const cursor = queryAudit(store, { kind: "notification.cursor" }).at(-1);
    assert.is(cursor?.body.through, queryAudit(store, { kind: "state.work_item" }).at(-1)?.id, "the cursor stands on the last state change looked at");
    // A pass with nothing new looked at writes nothing.
    const before = lastAuditId(store);
    await notifyPass(deps(store, config));
    assert.is(lastAuditId(store), before);
    assert.equal(receivers.received().webhook, []);
  });
});

test("a message no channel took is 'not notified', counted as failed deliveries and not as sent", async () => {
  await withChannels('[notifications]\nevents = ["failure"]\n', async (store, config) => {
    const start = lastAuditId(store);
    makeItem(store, { issue: 1, state: "failed" });
    const told = await notifyPass(deps(store, config), { passStartedAfter: start });
    assert.equal([told.sent, told.failed_deliveries], [0, 2]);
    assert.match(told.events[0].line, "not notified: demo/widgets#1 failed (item 1) (webhook not delivered: the webhook answered HTTP 500");
  }, { webhook: "fail", pushover: "fail" });
});

test("a pass at another effect level never passes over what live has still to tell", async () => {
  await withChannels('[notifications]\nevents = ["failure"]\n', async (store, config, receivers) => {
    await notifyPass(deps(store, config), { passStartedAfter: lastAuditId(store) });
    await notifyPass(deps(store, config, PLAN), { passStartedAfter: lastAuditId(store) });
    makeItem(store, { issue: 1, state: "failed" });
    // A plan pass first: the item is real, so it is not the plan pass's to tell, and its cursor is its own.
    assert.is((await notifyPass(deps(store, config, PLAN))).sent, 0);
    assert.is((await notifyPass(deps(store, config))).sent, 1);
    assert.equal(receivers.received().webhook.map((r) => (r.body as Record<string, unknown>).title), ["robot-army: demo/widgets#1 failed (item 1)"]);
  });
});

test("a channel whose credential file cannot be used is recorded as not sent, and the other still sends", async () => {
  await withChannels('[notifications]\nevents = ["failure"]\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    makeItem(store, { issue: 1, state: "failed" });
    chmodSync(receivers.tokenFile, 0o644);
    const told = await notifyPass(deps(store, config), { passStartedAfter: start });
    assert.is(told.sent, 1);
    assert.is(receivers.received().webhook.length, 1);
    assert.is(receivers.received().pushover.length, 0);
    const pushover = queryAudit(store, { kind: "notification.send" }).find((r) => r.phase === "outcome" && r.body.channel === "pushover");
    assert.is(pushover?.body.ok, false);
    assert.match(String(pushover?.body.error), "has mode 0644");
  });
});

test("below live a channel that could not be used is still 'would notify', never a claim that something was sent", async () => {
  await withChannels('[notifications]\nevents = ["failure"]\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    makeItem(store, { issue: 1, state: "failed", simulated: true });
    chmodSync(receivers.tokenFile, 0o644);
    const told = await notifyPass(deps(store, config, PLAN), { passStartedAfter: start });
    assert.match(told.events[0].line, /^would notify in part: demo\/widgets#1 failed \(item 1\) \(webhook, pushover not delivered: not sent: /);
    assert.equal(receivers.received(), { webhook: [], pushover: [] });
  });
});

test("a hanging channel costs the pass one timeout: its later messages are recorded as not sent, the other channel gets them all at once", async () => {
  await withChannels('[notifications]\nevents = ["failure"]\ntimeout = "1s"\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    for (const issue of [1, 2, 3]) makeItem(store, { issue, state: "failed" });
    const began = Date.now();
    const told = await notifyPass(deps(store, config), { passStartedAfter: start });
    const took = Date.now() - began;
    assert.ok(took < 2_500, `the pass took ${took} ms, more than one timeout`);
    assert.is(told.sent, 3);
    assert.is(receivers.received().pushover.length, 3);
    const webhook = queryAudit(store, { kind: "notification.send" }).filter((r) => r.phase === "outcome" && r.body.channel === "webhook");
    assert.equal(webhook.map((r) => [r.body.ok, r.body.timed_out]), [[false, true], [false, false], [false, false]]);
    assert.match(String(webhook[1].body.error), "not sent: its 1s for this pass (notifications.timeout) ran out");
  }, { webhook: "hang" });
});

test("a worker that ends while its item waits for the owner is told as a failure", async () => {
  await withChannels('[notifications]\nevents = ["failure", "needs_info"]\n', async (store, config, receivers) => {
    const item = makeItem(store, { issue: 1, state: "active" });
    const start = lastAuditId(store);
    transition(store, item.id, "needs_info", { reason: "worker asks: which database?" });
    transition(store, item.id, "interrupted", { reason: "worker exited (code 0)" });
    assert.is((await notifyPass(deps(store, config), { passStartedAfter: start })).sent, 2);
    const titles = receivers.received().webhook.map((r) => (r.body as Record<string, unknown>).title);
    assert.equal(titles, ["robot-army: demo/widgets#1 needs you (item 1)", "robot-army: demo/widgets#1 stopped waiting for you (item 1)"]);
  });
});

test("a worker ended by a signal, or whose exit failed its item, is told as a failure; one that exited with another code is not", async () => {
  await withChannels('[notifications]\nevents = ["failure"]\n', async (store, config, receivers) => {
    const start = lastAuditId(store);
    transition(store, makeItem(store, { issue: 1, state: "active" }).id, "interrupted", { reason: "worker ended by SIGKILL" });
    transition(store, makeItem(store, { issue: 2, state: "active" }).id, "failed", { reason: 'worker "claude" exited (code 127): command not found' });
    transition(store, makeItem(store, { issue: 3, state: "active" }).id, "interrupted", { reason: "worker exited (code 3)" });
    assert.is((await notifyPass(deps(store, config), { passStartedAfter: start })).sent, 2);
    const titles = receivers.received().webhook.map((r) => (r.body as Record<string, unknown>).title);
    assert.equal(titles, ["robot-army: demo/widgets#1 lost its worker (item 1)", "robot-army: demo/widgets#2 failed (item 2)"]);
  });
});

test.run();
