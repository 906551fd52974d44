import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import { clearSentAlert, decideAlert, healthAlertPath, healthMessage, readSentAlert, recordSentAlert } from "./health-alert.ts";
import type { Health } from "./health.ts";

const at = (time: string) => new Date(`2026-01-15T${time}Z`);

test("an unchanged bad verdict is sent again only an hour after it was sent; another verdict goes at once", () => withTempDir((dir) => {
  assert.equal(decideAlert(dir, "DIED", at("10:00:00")), { send: true });
  recordSentAlert(dir, "DIED", at("10:00:00"));
  assert.equal(decideAlert(dir, "DIED", at("10:05:00")), { send: false, sent_at: "2026-01-15T10:00:00Z", next_at: "2026-01-15T11:00:00Z" });
  assert.equal(decideAlert(dir, "DIED", at("10:59:59")).send, false);
  assert.equal(decideAlert(dir, "HUNG", at("10:05:00")), { send: true });
  assert.equal(decideAlert(dir, "DIED", at("11:00:00")), { send: true });
}));

test("the alert file is private and written whole; ok clears it, so the next bad verdict goes at once", () => withTempDir((dir) => {
  const state = join(dir, "state");
  recordSentAlert(state, "HUNG", at("10:00:00"));
  assert.is(statSync(healthAlertPath(state)).mode & 0o777, 0o600);
  assert.equal(readSentAlert(state), { verdict: "HUNG", sent_at: "2026-01-15T10:00:00Z" });
  clearSentAlert(state);
  assert.not.ok(existsSync(healthAlertPath(state)));
  assert.equal(decideAlert(state, "HUNG", at("10:01:00")), { send: true });
  clearSentAlert(state); // nothing to clear is fine
}));

test("an alert file that cannot be read counts as none: the alert goes out", () => withTempDir((dir) => {
  writeFileSync(healthAlertPath(dir), "{ torn");
  assert.equal(decideAlert(dir, "DIED", at("10:00:00")), { send: true });
  writeFileSync(healthAlertPath(dir), JSON.stringify({ verdict: "DIED", sent_at: "soon" }));
  assert.equal(decideAlert(dir, "DIED", at("10:00:00")), { send: true });
}));

test("the alert is urgent and names the host and the verdict in its title, its body and about", () => {
  const health: Health = { verdict: "DIED", detail: "the daemon (pid 12) is gone", pid: 12, heartbeat_at: null, age_s: null, max_age_s: 300 };
  const message = healthMessage(health, "box");
  assert.equal([message.kind, message.urgency, message.title, message.about], ["health", "high", "robot-army on box: daemon DIED", { host: "box", verdict: "DIED" }]);
  assert.match(message.text, "DIED on box: the daemon (pid 12) is gone");
  assert.match(message.text, "robot-army run");
  assert.ok(message.commands.includes("robot-army run"));
});

test.run();
