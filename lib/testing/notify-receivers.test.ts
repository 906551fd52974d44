import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { withNotifyReceivers } from "./notify-receivers.ts";

const withReceivers = withNotifyReceivers;

const post = async (url: string, contentType: string | null, body: string) => {
  const headers: Record<string, string> = contentType ? { "content-type": contentType } : {};
  const res = await fetch(url, { method: "POST", headers, body });
  return { status: res.status, body: await res.json() as Record<string, unknown> };
};

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

test("the Pushover imitation refuses a JSON body, as Pushover does, even one with every field right", () =>
  withReceivers(async (r) => {
    const answer = await post(r.pushoverUrl, "application/json", JSON.stringify({ token: r.token, user: r.user, message: "hello" }));
    assert.is(answer.status, 400);
    assert.is(answer.body.status, 0);
    assert.match(String((answer.body.errors as string[])[0]), "form-encoded");
    assert.is(r.received().pushover.length, 1, "the refused request is still recorded");
    assert.is(r.received().pushover[0].answer?.status, 400);
  }));

test("the Pushover imitation refuses a missing or wrong token, a missing or wrong user key, a blank message and a bad priority", () =>
  withReceivers(async (r) => {
    const form_ = "application/x-www-form-urlencoded";
    const cases: Array<[Record<string, string>, string]> = [
      [{ user: r.user, message: "m" }, "token"],
      [{ token: "wrongwrongwrong", user: r.user, message: "m" }, "token"],
      [{ token: r.token, message: "m" }, "user"],
      [{ token: r.token, user: "nobodynobody", message: "m" }, "user"],
      [{ token: r.token, user: r.user }, "message"],
      [{ token: r.token, user: r.user, message: "m", priority: "3" }, "priority"],
      [{ token: r.token, user: r.user, message: "x".repeat(1025) }, "message"],
    ];
    for (const [fields, field] of cases) {
      const answer = await post(r.pushoverUrl, form_, form(fields));
      assert.is(answer.status, 400, JSON.stringify(fields));
      assert.is(answer.body[field], "invalid", JSON.stringify(answer.body));
      assert.is(answer.body.status, 0);
    }
    const ok = await post(r.pushoverUrl, `${form_};charset=UTF-8`, form({ token: r.token, user: r.user, message: "m", title: "t", priority: "-1" }));
    assert.is(ok.status, 200);
    assert.is(ok.body.status, 1);
    assert.type(ok.body.request, "string");
  }));

test("the webhook imitation takes a JSON object only: another content type is 415, a JSON array or broken JSON is 400", () =>
  withReceivers(async (r) => {
    assert.is((await post(r.webhookUrl, "text/plain", "{}")).status, 415);
    assert.is((await post(r.webhookUrl, "application/x-www-form-urlencoded", "a=1")).status, 415);
    assert.is((await post(r.webhookUrl, "application/json", "[1]")).status, 400);
    assert.is((await post(r.webhookUrl, "application/json", "{not json")).status, 400);
    const ok = await post(r.webhookUrl, "application/json; charset=utf-8", JSON.stringify({ title: "t" }));
    assert.is(ok.status, 200);
    assert.equal(r.received().webhook.at(-1)!.body, { title: "t" });
  }));

test("each request is appended to received/<service>.jsonl with what was answered", () =>
  withReceivers(async (r, dir) => {
    await post(r.webhookUrl, "application/json", JSON.stringify({ kind: "failure" }));
    await post(r.pushoverUrl, "application/x-www-form-urlencoded", form({ token: r.token, user: r.user, message: "m" }));
    const line = (file: string) => JSON.parse(readFileSync(join(dir, "received", file), "utf8").trim());
    assert.equal(line("webhook.jsonl"), { method: "POST", path: "/hook", content_type: "application/json", authorization: null, body: { kind: "failure" }, answer: { status: 200, body: { ok: true } } });
    const pushover = line("pushover.jsonl");
    assert.equal(pushover.body, { token: r.token, user: r.user, message: "m" });
    assert.is(pushover.answer.status, 200);
    assert.is(r.receivedDir, join(dir, "received"));
  }));

test("the credential files are 0600 and the config snippet points at both imitations", () =>
  withReceivers(async (r) => {
    assert.is(statSync(r.tokenFile).mode & 0o777, 0o600);
    assert.is(statSync(r.userKeyFile).mode & 0o777, 0o600);
    assert.is(readFileSync(r.tokenFile, "utf8").trim(), r.token);
    assert.is(readFileSync(r.userKeyFile, "utf8").trim(), r.user);
    assert.match(r.configToml, `[health]\nwebhook_url = "${r.webhookUrl}"`);
    assert.match(r.configToml, `token_file = "${r.tokenFile}"`);
    assert.match(r.configToml, `user_key_file = "${r.userKeyFile}"`);
    assert.match(r.configToml, `api_url = "${r.pushoverUrl}"`);
  }));

test("fail answers 500; hang never answers, and close ends the held connection", () =>
  withReceivers(async (r) => {
    assert.is((await post(r.webhookUrl, "application/json", "{}")).status, 500);
    const held = fetch(r.pushoverUrl, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "message=m" })
      .then(() => "answered", () => "ended");
    const deadline = Date.now() + 5_000;
    while (r.received().pushover.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.is(r.received().pushover[0].answer, null);
    const early = await Promise.race([held, new Promise((resolve) => setTimeout(() => resolve("waiting"), 200))]);
    assert.is(early, "waiting");
    await r.close();
    assert.is(await held, "ended");
  }, { webhook: "fail", pushover: "hang" }));

test.run();
