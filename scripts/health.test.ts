import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../lib/config.ts";
import { heartbeatPath, writeHeartbeat } from "../lib/daemon/heartbeat.ts";
import { healthAlertPath, readSentAlert } from "../lib/daemon/health-alert.ts";
import { lockPath } from "../lib/daemon/lock.ts";
import { sendMessage } from "../lib/notify/send.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { openExistingStore, openStore, storePath } from "../lib/store/open.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { atTimeAsync } from "../lib/testing/items.ts";
import { startNotifyReceivers } from "../lib/testing/notify-receivers.ts";
import type { NotifyReceivers, ReceiverMode } from "../lib/testing/notify-receivers.ts";
import type { Store } from "../lib/store/open.ts";
import { healthChannels, run } from "./health.ts";
import type { HealthReport } from "./health.ts";

/** What one `health` run printed and returned. */
interface Ran {
  code: number;
  text: string;
}

/** A state dir, the two loopback receivers and a config at effect level plan pointing at both (or at none). */
interface World {
  stateDir: string;
  receivers: NotifyReceivers;
  health(opts: { notify?: boolean; json?: boolean; at: string; channels?: boolean; openStore?: () => Promise<Store | undefined> }): Promise<Ran>;
}

function withWorld(modes: { webhook?: ReceiverMode; pushover?: ReceiverMode }, fn: (w: World) => Promise<void>): () => Promise<void> {
  return () => withTempDir(async (dir) => {
    const receivers = await startNotifyReceivers(join(dir, "receivers"), modes);
    const stateDir = join(dir, "state");
    const configFile = join(dir, "config.toml");
    try {
      await fn({
        stateDir,
        receivers,
        health: async ({ notify = true, json = false, at, channels = true, openStore = () => openExistingStore(stateDir) }) => {
          const text = ['[daemon]', 'effect_level = "plan"', "", "[notifications]", 'timeout = "1s"', channels ? receivers.configToml : ""].join("\n");
          const config = await parseConfig(text, configFile);
          let out = "";
          const code = await atTimeAsync(at, () => run({ notify, json }, {
            stateDir,
            config,
            host: "box",
            channels: () => healthChannels(config),
            send: (store, list, message, timeoutMs) => sendMessage(store, list, message, { simulated: false, timeoutMs }),
            openStore,
            write: (chunk) => (out += chunk),
          }));
          return { code, text: out };
        },
      });
    } finally {
      await receivers.close();
    }
  });
}

/** A daemon that died: its lock names a real process, by pid and start time, that has exited. */
function diedDaemon(stateDir: string): number {
  const pid = Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(lockPath(stateDir), JSON.stringify({ pid, started_at: "2026-01-15T08:00:00.000Z", start_id: "gone:1", at: "2026-01-15T08:00:00Z" }));
  writeHeartbeat(stateDir, { pid, at: "2026-01-15T09:30:00Z", tick: 40, next_at: null, last_poll_at: null });
  return pid;
}

test("--notify at effect level plan still sends a bad verdict to both channels, urgent, the verdict in title, body and about", withWorld({}, async (w) => {
  diedDaemon(w.stateDir);
  const ran = await w.health({ at: "2026-01-15T10:00:00Z" });
  assert.is(ran.code, 4);
  const host = new URL(w.receivers.webhookUrl).host;
  assert.match(ran.text, /^DIED: the daemon \(pid \d+, lock .*daemon\.lock taken 2026-01-15T08:00:00Z\) is gone/);
  assert.match(ran.text, `\nwebhook (${host}): delivered\n`);
  assert.match(ran.text, "\npushover: delivered\n");
  const { webhook, pushover } = w.receivers.received();
  assert.is(webhook.length, 1);
  assert.is(pushover.length, 1);
  const json = webhook[0].body as { kind: string; title: string; message: string; urgency: string; verdict: string; host: string };
  assert.is(json.title, "robot-army on box: daemon DIED");
  assert.equal([json.kind, json.urgency, json.verdict, json.host], ["health", "high", "DIED", "box"]);
  assert.match(json.message, "DIED on box: the daemon (pid");
  const form = pushover[0].body as Record<string, string>;
  assert.equal([form.title, form.priority], ["robot-army on box: daemon DIED", "1"]);
  assert.match(form.message, "robot-army run");
  assert.equal(readSentAlert(w.stateDir), { verdict: "DIED", sent_at: "2026-01-15T10:00:00Z" });
}));

test("with a store, each channel's delivery is audited as notification.send, an intent and an outcome, not simulated", withWorld({ pushover: "fail" }, async (w) => {
  diedDaemon(w.stateDir);
  (await openStore(w.stateDir)).close();
  const ran = await w.health({ at: "2026-01-15T10:00:00Z" });
  assert.not.match(ran.text, "audit could not be written");
  const store = (await openExistingStore(w.stateDir))!;
  try {
    const records = queryAudit(store, { kind: "notification.send" });
    const intents = records.filter((r) => r.phase === "intent");
    const outcomes = records.filter((r) => r.phase === "outcome");
    assert.equal(intents.map((r) => [r.body.channel, r.body.kind, r.body.title]).sort(), [
      ["pushover", "health", "robot-army on box: daemon DIED"],
      ["webhook", "health", "robot-army on box: daemon DIED"],
    ]);
    assert.equal(outcomes.map((r) => [r.body.channel, r.body.ok]).sort(), [["pushover", false], ["webhook", true]]);
    assert.ok(records.every((r) => !r.simulated));
  } finally {
    store.close();
  }
}));

test("an unchanged verdict is sent again only after an hour; another verdict at once; ok clears the memory", withWorld({}, async (w) => {
  const pid = diedDaemon(w.stateDir);
  await w.health({ at: "2026-01-15T10:00:00Z" });
  const held = await w.health({ at: "2026-01-15T10:20:00Z" });
  assert.is(held.code, 4);
  assert.match(held.text, "\nnot sent: DIED was sent at 2026-01-15T10:00:00Z; the next reminder after 2026-01-15T11:00:00Z\n");
  assert.is(w.receivers.received().webhook.length, 1, "nothing more was sent within the hour");

  await w.health({ at: "2026-01-15T11:00:00Z" });
  assert.is(w.receivers.received().webhook.length, 2, "the reminder, an hour on");

  writeFileSync(lockPath(w.stateDir), "junk");
  const changed = await w.health({ at: "2026-01-15T11:05:00Z" });
  assert.match(changed.text, /^UNREADABLE: /);
  assert.is(w.receivers.received().webhook.length, 3, "a new verdict goes at once");

  writeHeartbeat(w.stateDir, { pid, at: "2026-01-15T11:09:00Z", tick: 41, next_at: null, last_poll_at: null });
  rmLock(w.stateDir);
  const ok = await w.health({ at: "2026-01-15T11:10:00Z" });
  assert.is(ok.code, 0);
  assert.match(ok.text, "\nnothing to send: the daemon is ok\n");
  assert.not.ok(existsSync(healthAlertPath(w.stateDir)), "ok clears the memory");
  assert.is(w.receivers.received().webhook.length, 3, "ok is never sent");

  rmHeartbeat(w.stateDir);
  diedDaemon(w.stateDir);
  await w.health({ at: "2026-01-15T11:15:00Z" });
  assert.is(w.receivers.received().webhook.length, 4, "after an ok, the same bad verdict goes at once");
}));

test("one channel failing does not stop the other; each outcome is printed, and the verdict counts as sent", withWorld({ pushover: "fail" }, async (w) => {
  diedDaemon(w.stateDir);
  const ran = await w.health({ at: "2026-01-15T10:00:00Z", json: true });
  const report = JSON.parse(ran.text) as HealthReport;
  assert.equal(report.deliveries.map((d) => [d.channel, d.ok, d.status]), [["webhook", true, 200], ["pushover", false, 500]]);
  assert.is(report.notified, "sent");
  assert.is(readSentAlert(w.stateDir)?.verdict, "DIED");
  const text = await w.health({ at: "2026-01-15T11:00:00Z" });
  assert.match(text.text, /\npushover: not delivered: 500 .+\n/);
}));

test("when no channel takes it, nothing is remembered and the next run tries again", withWorld({ webhook: "fail", pushover: "fail" }, async (w) => {
  diedDaemon(w.stateDir);
  const first = await w.health({ at: "2026-01-15T10:00:00Z" });
  assert.match(first.text, "\nnot sent: no channel took it; the next run tries again\n");
  assert.is(readSentAlert(w.stateDir), undefined);
  await w.health({ at: "2026-01-15T10:05:00Z" });
  assert.is(w.receivers.received().webhook.length, 2);
}));

test("with no channel configured, --notify says so in one line and the verdict's exit code stands", withWorld({}, async (w) => {
  const ran = await w.health({ at: "2026-01-15T10:00:00Z", channels: false });
  assert.is(ran.code, 4);
  assert.match(ran.text, /^NEVER STARTED: .*\nnot sent: no channel is configured \(set \[health\] webhook_url or \[pushover\] token_file and user_key_file\)\n$/);
  assert.is(w.receivers.received().webhook.length, 0);
}));

test("a store that cannot be opened does not stop the alert: it is sent, and the missing audit said", withWorld({}, async (w) => {
  diedDaemon(w.stateDir);
  writeFileSync(storePath(w.stateDir), "this is not a database");
  const ran = await w.health({ at: "2026-01-15T10:00:00Z" });
  assert.match(ran.text, /\nthe audit could not be written: .+; sending anyway\n/);
  assert.match(ran.text, "\npushover: delivered\n");
  assert.is(w.receivers.received().pushover.length, 1);
}));

test("a channel whose credential file cannot be used is not sent to, and the other still gets the alert", withWorld({}, async (w) => {
  diedDaemon(w.stateDir);
  chmodSync(w.receivers.tokenFile, 0o644);
  const ran = await w.health({ at: "2026-01-15T10:00:00Z" });
  assert.is(ran.code, 4);
  assert.is(w.receivers.received().webhook.length, 1);
  assert.is(w.receivers.received().pushover.length, 0);
  assert.match(ran.text, "pushover: not delivered: not sent: Pushover token file");
  assert.match(ran.text, "has mode 0644");
}));

test("a store that opens and then refuses the audit does not stop the alert: it is sent unaudited, and that is said", withWorld({}, async (w) => {
  diedDaemon(w.stateDir);
  const ran = await w.health({
    at: "2026-01-15T10:00:00Z",
    openStore: async () => {
      const store = await openStore(w.stateDir);
      store.close();
      return { ...store, close: () => {} } as Store;
    },
  });
  assert.is(ran.code, 4);
  assert.match(ran.text, "the audit could not be written: ");
  assert.match(ran.text, "; sending anyway");
  assert.is(w.receivers.received().webhook.length, 1);
  assert.is(w.receivers.received().pushover.length, 1);
}));

test("a store that refuses the outcomes after the alert went out: it is not sent again", withWorld({}, async (w) => {
  diedDaemon(w.stateDir);
  const ran = await w.health({
    at: "2026-01-15T10:00:00Z",
    openStore: async () => {
      const store = await openStore(w.stateDir);
      store.db.exec("CREATE TEMP TRIGGER no_outcomes BEFORE INSERT ON audit WHEN NEW.phase = 'outcome' BEGIN SELECT RAISE(ABORT, 'the disk said no'); END");
      return store;
    },
  });
  assert.is(ran.code, 4);
  assert.match(ran.text, "the audit could not be written: the disk said no; the alert was sent");
  assert.is(w.receivers.received().webhook.length, 1);
  assert.is(w.receivers.received().pushover.length, 1);
}));

test("without --notify nothing is sent, and --json gives the verdict and its facts", withWorld({}, async (w) => {
  const pid = diedDaemon(w.stateDir);
  const ran = await w.health({ at: "2026-01-15T10:00:00Z", notify: false, json: true });
  const report = JSON.parse(ran.text) as HealthReport;
  assert.equal(
    [report.verdict, report.pid, report.heartbeat_at, report.age_s, report.max_age_s, report.notified, report.deliveries],
    ["DIED", pid, "2026-01-15T09:30:00Z", 1800, 300, null, []],
  );
  assert.is(w.receivers.received().webhook.length, 0);
}));

function rmLock(stateDir: string): void {
  rmSync(lockPath(stateDir), { force: true });
}

function rmHeartbeat(stateDir: string): void {
  rmSync(heartbeatPath(stateDir), { force: true });
}

test.run();
