import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configuredChannels } from "../boundaries/notifier/channels.ts";
import type { Channel } from "../boundaries/notifier/message.ts";
import { queryAudit } from "../store/audit.ts";
import type { AuditRecord } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { withStore } from "../testing/items.ts";
import { SAMPLE_MESSAGE, startNotifyReceivers } from "../testing/notify-receivers.ts";
import type { NotifyReceivers, ReceiverMode } from "../testing/notify-receivers.ts";
import { waitFor } from "../testing/wait.ts";
import { SendNotRecorded, sendMessage } from "./send.ts";

const message = SAMPLE_MESSAGE;

const live = { simulated: false, timeoutMs: 5_000, item: 3, repo: "demo/widgets" };

const withWorld = (fn: (store: Store, r: NotifyReceivers, dir: string) => Promise<void>, options: { webhook?: ReceiverMode; pushover?: ReceiverMode } = {}) =>
  withStore(async (store, stateDir) => {
    const dir = join(stateDir, "..");
    const receivers = await startNotifyReceivers(dir, options);
    try {
      await fn(store, receivers, dir);
    } finally {
      await receivers.close();
    }
  });

const sends = (store: Store) => queryAudit(store, { kind: "notification.send" });
const outcomeOf = (records: AuditRecord[], channel: string) => {
  const intent = records.find((r) => r.phase === "intent" && r.body.channel === channel)!;
  return records.find((r) => r.phase === "outcome" && r.actionId === intent.actionId)!;
};

test("one channel failing (500) and the other still delivering: each delivery's outcome recorded on its own, every intent before any outcome", () =>
  withWorld(async (store, r) => {
    const deliveries = await sendMessage(store, configuredChannels(r.config), message, { ...live, through: 41 });
    assert.equal(deliveries.map((d) => [d.channel, d.ok, d.status]), [["webhook", false, 500], ["pushover", true, 200]]);
    assert.is(r.received().pushover.length, 1);
    const records = sends(store);
    assert.equal(records.map((x) => x.phase), ["intent", "intent", "outcome", "outcome"]);
    const [webhookIntent, pushoverIntent] = records;
    assert.is(webhookIntent.body.message_id, pushoverIntent.body.message_id, "one message, one id shared by its channels");
    assert.is.not(webhookIntent.actionId, pushoverIntent.actionId, "one action per channel");
    for (const intent of [webhookIntent, pushoverIntent]) {
      assert.equal([intent.item, intent.repo, intent.simulated, intent.body.kind, intent.body.title, intent.body.text, intent.body.through],
        [3, "demo/widgets", false, "failure", message.title, message.text, 41]);
    }
    assert.is(webhookIntent.body.target, new URL(r.webhookUrl).host);
    const webhook = outcomeOf(records, "webhook");
    assert.equal([webhook.body.ok, webhook.body.status, webhook.body.timed_out], [false, 500, false]);
    assert.match(String(webhook.body.error), "HTTP 500");
    const pushover = outcomeOf(records, "pushover");
    assert.equal([pushover.body.ok, pushover.body.status, pushover.body.error, pushover.body.timed_out], [true, 200, null, false]);
  }, { webhook: "fail" }));

test("every channel's intent is on disk before any channel is sent to", () =>
  withWorld(async (store, r) => {
    const seen: number[] = [];
    const watched = configuredChannels(r.config).map((channel): Channel => ({
      name: channel.name,
      target: channel.target,
      send: (m, signal) => {
        seen.push(sends(store).filter((x) => x.phase === "intent").length);
        return channel.send(m, signal);
      },
    }));
    await sendMessage(store, watched, message, live);
    assert.equal(seen, [2, 2]);
  }));

test("a hanging channel is bounded by its timeout while the other's delivery completes at once", () =>
  withWorld(async (store, r) => {
    const timeoutMs = 3_000;
    const started = Date.now();
    const sending = sendMessage(store, configuredChannels(r.config), message, { ...live, timeoutMs });
    await waitFor("the webhook's outcome", () => sends(store).some((x) => x.phase === "outcome" && x.body.channel === "webhook"), timeoutMs);
    const webhookAfter = Date.now() - started;
    assert.ok(webhookAfter < timeoutMs / 3, `the webhook's outcome came after ${webhookAfter} ms`);
    assert.not.ok(sends(store).some((x) => x.phase === "outcome" && x.body.channel === "pushover"), "Pushover is still hanging");
    const deliveries = await sending;
    const took = Date.now() - started;
    assert.ok(took >= timeoutMs - 50 && took < timeoutMs + 1_500, `took ${took} ms`);
    assert.equal(deliveries.map((d) => [d.channel, d.ok, d.timed_out]), [["webhook", true, false], ["pushover", false, true]]);
    const pushover = outcomeOf(sends(store), "pushover");
    assert.equal([pushover.body.ok, pushover.body.timed_out, pushover.body.status], [false, true, null]);
  }, { pushover: "hang" }));

test("simulated: nothing reaches the receivers, and every outcome says simulated", () =>
  withWorld(async (store, r) => {
    const deliveries = await sendMessage(store, configuredChannels(r.config), message, { ...live, simulated: true });
    assert.equal(deliveries.map((d) => [d.channel, d.ok, d.simulated]), [["webhook", true, true], ["pushover", true, true]]);
    assert.equal(r.received(), { webhook: [], pushover: [] });
    const records = sends(store);
    assert.equal(records.map((x) => [x.phase, x.simulated]), [["intent", true], ["intent", true], ["outcome", true], ["outcome", true]]);
    for (const outcome of records.filter((x) => x.phase === "outcome")) assert.equal({ ok: outcome.body.ok, simulated: outcome.body.simulated }, { ok: true, simulated: true });
  }));

test("the token and the user key never appear in an audit record, an error or a delivery, a 400 that echoes one included", () =>
  withWorld(async (store, r, dir) => {
    const wrongToken = join(dir, "wrong-token");
    writeFileSync(wrongToken, "awrongtokenwrongtokenwrongtoke\n", { mode: 0o600 });
    chmodSync(wrongToken, 0o600);
    const good = await sendMessage(store, configuredChannels(r.config), message, live);
    const refused = await sendMessage(store, configuredChannels({ ...r.config, pushover: { ...r.config.pushover, token_file: wrongToken } }), message, live);
    const pushover = refused.find((d) => d.channel === "pushover")!;
    assert.equal([pushover.ok, pushover.status], [false, 400]);
    assert.is(pushover.error, 'Pushover answered HTTP 400: application token "[redacted]" is invalid');
    assert.match(JSON.stringify(r.received().pushover.at(-1)!.answer), "awrongtoken", "the imitation did echo the token");
    const everything = JSON.stringify([good, refused, queryAudit(store)]);
    for (const secret of [r.token, r.user, "awrongtokenwrongtokenwrongtoke"]) assert.not.match(everything, secret);
    assert.ok(queryAudit(store, { kind: "notification.send" }).length === 8);
  }));

test("with no store the message is still sent, unaudited", () =>
  withWorld(async (store, r) => {
    const deliveries = await sendMessage(undefined, configuredChannels(r.config), message, live);
    assert.equal(deliveries.map((d) => d.ok), [true, true]);
    assert.equal([r.received().webhook.length, r.received().pushover.length], [1, 1]);
    assert.is(sends(store).length, 0);
  }));

test("an intent the audit log refuses for one channel: nothing is sent to any, and the error says nothing was sent", () =>
  withWorld(async (store, r) => {
    store.db.exec("CREATE TEMP TRIGGER no_pushover_intent BEFORE INSERT ON audit WHEN NEW.phase = 'intent' AND json_extract(NEW.body, '$.channel') = 'pushover' BEGIN SELECT RAISE(ABORT, 'the disk said no'); END");
    const error = await sendMessage(store, configuredChannels(r.config), message, live).then(() => undefined, (e) => e);
    assert.instance(error, SendNotRecorded);
    assert.is((error as SendNotRecorded).deliveries, null);
    assert.equal(r.received(), { webhook: [], pushover: [] });
    // The webhook's intent is on record, and its outcome says why it was not sent.
    assert.match(String(outcomeOf(sends(store), "webhook").body.error), "not sent: the audit log refused another channel's intent");
  }));

test("outcomes the audit log refuses after the sends: the error carries what each channel did, so the message is not sent again", () =>
  withWorld(async (store, r) => {
    store.db.exec("CREATE TEMP TRIGGER no_outcomes BEFORE INSERT ON audit WHEN NEW.phase = 'outcome' BEGIN SELECT RAISE(ABORT, 'the disk said no'); END");
    const error = await sendMessage(store, configuredChannels(r.config), message, live).then(() => undefined, (e) => e);
    assert.instance(error, SendNotRecorded);
    assert.equal((error as SendNotRecorded).deliveries?.map((d) => [d.channel, d.ok]), [["webhook", true], ["pushover", true]]);
    assert.is(r.received().webhook.length, 1);
    assert.is(r.received().pushover.length, 1);
  }));

test.run();
