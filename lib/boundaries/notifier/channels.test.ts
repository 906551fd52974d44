import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createTcpServer } from "node:net";
import type { Server } from "node:http";
import { join } from "node:path";
import { parseConfig } from "../../config.ts";
import { PreconditionError } from "../../errors.ts";
import { withTempDir } from "../../testing/fixtures.ts";
import { SAMPLE_MESSAGE, withNotifyReceivers } from "../../testing/notify-receivers.ts";
import { Buffer } from "node:buffer";
import { channelsOf, configuredChannelNames, configuredChannels, deliver } from "./channels.ts";
import { webhookChannel as webhookChannelOf } from "./webhook.ts";
import type { Channel } from "./message.ts";

const message = SAMPLE_MESSAGE;

const withReceivers = withNotifyReceivers;

const secretFile = (path: string, content: string, mode = 0o600) => {
  writeFileSync(path, content, { mode });
  chmodSync(path, mode);
  return path;
};

const byName = (channels: Channel[], name: string) => channels.find((c) => c.name === name)!;

test("both channels get one message each: the webhook's body is JSON, Pushover's is form-encoded with token, user, title, message and priority", () =>
  withReceivers(async (r) => {
    const channels = configuredChannels(r.config);
    assert.equal(channels.map((c) => c.name), ["webhook", "pushover"]);
    const deliveries = await Promise.all(channels.map((c) => deliver(c, message, 5_000)));
    assert.equal(deliveries.map((d) => [d.channel, d.ok, d.status, d.error, d.timed_out]), [["webhook", true, 200, null, false], ["pushover", true, 200, null, false]]);
    const { webhook, pushover } = r.received();
    assert.is(webhook.length, 1);
    assert.is(pushover.length, 1);
    assert.is(webhook[0].content_type, "application/json");
    assert.equal(webhook[0].body, {
      source: "robot-army", kind: "failure", title: message.title, message: message.text, urgency: "high",
      host: "box", item: 3, repo: "demo/widgets", issue: 3, state: "failed", commands: ["robot-army show 3"],
    });
    assert.is(pushover[0].content_type, "application/x-www-form-urlencoded");
    assert.equal(pushover[0].body, { token: r.token, user: r.user, title: message.title, message: message.text, priority: "1" });
  }));

test("the receivers' config snippet loads as a config, and the channels it sets up deliver to both", () =>
  withReceivers(async (r, dir) => {
    const config = await parseConfig(r.configToml, join(dir, "config.toml"), {});
    assert.equal(configuredChannelNames(config), ["webhook", "pushover"]);
    const deliveries = await Promise.all(configuredChannels(config).map((c) => deliver(c, { ...message, urgency: "low" }, 5_000)));
    assert.equal(deliveries.map((d) => d.ok), [true, true]);
    assert.is((r.received().pushover[0].body as Record<string, string>).priority, "-1", "low urgency is Pushover's -1");
  }));

test("a channel's target names the host only: a webhook URL read from its 0600 file is a secret, trimmed and remembered", () =>
  withReceivers(async (r, dir) => {
    const file = secretFile(join(dir, "webhook-url"), `  ${r.webhookUrl}?auth=tk_webhooksecret\n`);
    const [webhook] = configuredChannels({ health: { webhook_url_file: file, max_age: "5m" }, pushover: { api_url: r.pushoverUrl } });
    assert.is(webhook.target, new URL(r.webhookUrl).host);
    const delivery = await deliver(webhook, message, 5_000);
    assert.ok(delivery.ok);
    assert.is(r.received().webhook[0].path, "/hook?auth=tk_webhooksecret");
    assert.is(byName(configuredChannels(r.config), "pushover").target, new URL(r.pushoverUrl).host);
    assert.is(webhook.target.includes("webhooksecret"), false);
  }));

test("a webhook URL with user:password@ in its file is sent as Basic authentication, the URL without them (fetch refuses such a URL on Node)", () =>
  withReceivers(async (r, dir) => {
    const url = new URL(r.webhookUrl);
    url.username = "robot";
    url.password = "pa55word-webhook";
    const file = secretFile(join(dir, "webhook-url"), url.toString());
    const [webhook] = configuredChannels({ health: { webhook_url_file: file, max_age: "5m" }, pushover: { api_url: r.pushoverUrl } });
    const delivery = await deliver(webhook, message, 5_000);
    assert.ok(delivery.ok, String(delivery.error));
    assert.is(r.received().webhook[0].authorization, `Basic ${btoa("robot:pa55word-webhook")}`);
    assert.is(r.received().webhook[0].path, "/hook");
  }));

test("user-info that does not percent-decode, or is not Latin-1, is still sent as UTF-8 Basic authentication", () =>
  withReceivers(async (r, dir) => {
    const url = `${r.webhookUrl.replace("http://", "http://robot:50%off-p\u00e4sswort\u20ac@")}`;
    const file = secretFile(join(dir, "webhook-url"), url);
    const { channels, broken } = channelsOf({ health: { webhook_url_file: file, max_age: "5m" }, pushover: { api_url: r.pushoverUrl } });
    assert.equal(broken, []);
    const delivery = await deliver(channels[0], message, 5_000);
    assert.ok(delivery.ok, String(delivery.error));
    const sent = r.received().webhook[0].authorization!.replace(/^Basic /, "");
    assert.is(Buffer.from(sent, "base64").toString("utf8"), `robot:${new URL(url).password}`);
  }));

test("a failure's words never quote the URL, whose path may be the webhook's secret (Deno's TLS errors do)", () =>
  withReceivers(async (r) => {
    // https:// to a plain-HTTP server: the TLS handshake fails on both runtimes.
    const url = r.webhookUrl.replace("http://", "https://") + "/my-private-topic";
    const delivery = await deliver(webhookChannelOf(url), message, 5_000);
    assert.is(delivery.ok, false);
    assert.not.match(String(delivery.error), "my-private-topic");
    assert.match(String(delivery.error), `could not reach ${new URL(url).host}`);
  }));

test("a file that holds no http(s) URL is refused without quoting what it holds", () =>
  withTempDir(async (dir) => {
    const file = secretFile(join(dir, "webhook-url"), "ftp://secret-place/x\n");
    assert.throws(() => configuredChannels({ health: { webhook_url_file: file, max_age: "5m" }, pushover: { api_url: "https://api.pushover.net/1/messages.json" } }),
      (e: unknown) => e instanceof PreconditionError && e.message.startsWith(`Webhook URL file "${file}" does not hold an http:// or https:// URL`) && !e.message.includes("secret-place"));
  }));

test("a credential file with mode 0644 is refused by configuredChannels, naming the file and the key", () =>
  withReceivers(async (r, dir) => {
    chmodSync(r.userKeyFile, 0o644);
    assert.throws(() => configuredChannels(r.config), (e: unknown) =>
      e instanceof PreconditionError && e.exitCode === 3 && e.message === `Pushover user key file "${r.userKeyFile}" has mode 0644; it must be 0600 (chmod 600 "${r.userKeyFile}")`);
    chmodSync(r.userKeyFile, 0o600);
    chmodSync(r.tokenFile, 0o640);
    assert.throws(() => configuredChannels(r.config), (e: unknown) => e instanceof PreconditionError && e.message.startsWith(`Pushover token file "${r.tokenFile}" has mode 0640`));
    const url = secretFile(join(dir, "webhook-url"), r.webhookUrl, 0o604);
    assert.throws(() => configuredChannels({ health: { webhook_url_file: url, max_age: "5m" }, pushover: { api_url: r.pushoverUrl } }),
      (e: unknown) => e instanceof PreconditionError && e.message === `Webhook URL file "${url}" has mode 0604; it must be 0600 (chmod 600 "${url}")`);
    mkdirSync(join(dir, "folder"), { mode: 0o700 });
    assert.throws(() => configuredChannels({ health: { webhook_url_file: join(dir, "folder"), max_age: "5m" }, pushover: { api_url: r.pushoverUrl } }),
      (e: unknown) => e instanceof PreconditionError && e.message.endsWith("is a directory; health.webhook_url_file must name the file holding the webhook's URL"));
  }));

test("a title and text longer than Pushover takes are cut to its limits, so the message still goes", () =>
  withReceivers(async (r) => {
    const long = { ...message, title: "t".repeat(400), text: "x".repeat(3000) };
    const delivery = await deliver(byName(configuredChannels(r.config), "pushover"), long, 5_000);
    assert.ok(delivery.ok, String(delivery.error));
    const form = r.received().pushover[0].body as Record<string, string>;
    assert.equal([form.title.length, form.message.length], [250, 1024]);
    assert.ok(form.message.endsWith("..."));
  }));

test("configuredChannelNames reads no file: it names the channels the config sets up, even when their files are gone", () => {
  const pushover = { token_file: "/nonexistent/token", user_key_file: "/nonexistent/user", api_url: "https://api.pushover.net/1/messages.json" };
  assert.equal(configuredChannelNames({ health: { max_age: "5m" }, pushover: { api_url: pushover.api_url } }), []);
  assert.equal(configuredChannelNames({ health: { webhook_url_file: "/nonexistent/url", max_age: "5m" }, pushover }), ["webhook", "pushover"]);
  assert.equal(configuredChannelNames({ health: { webhook_url: "https://ntfy.sh/x", max_age: "5m" }, pushover: { api_url: pushover.api_url } }), ["webhook"]);
});

test("Pushover's refusal is the delivery's error, its status kept, the credential it echoed redacted", () =>
  withReceivers(async (r, dir) => {
    const wrongUser = secretFile(join(dir, "wrong-user"), "uwrongwrongwrongwrongwrongwron\n");
    const channel = byName(configuredChannels({ ...r.config, pushover: { ...r.config.pushover, user_key_file: wrongUser } }), "pushover");
    const delivery = await deliver(channel, message, 5_000);
    assert.is(delivery.ok, false);
    assert.is(delivery.status, 400);
    assert.is(delivery.timed_out, false);
    assert.is(delivery.error, 'Pushover answered HTTP 400: user identifier "[redacted]" is not a valid user, group, or subscribed user key');
    const answered = JSON.stringify(r.received().pushover[0].answer);
    assert.match(answered, "uwrongwrongwrongwrongwrongwron", "the imitation did echo the key");
    assert.not.match(JSON.stringify(delivery), "uwrongwrong");
    assert.not.match(JSON.stringify(delivery), r.token);
  }));

test("a webhook answering 500 is a failed delivery with its status and what it said", () =>
  withReceivers(async (r) => {
    const delivery = await deliver(byName(configuredChannels(r.config), "webhook"), message, 5_000);
    assert.equal([delivery.ok, delivery.status, delivery.timed_out], [false, 500, false]);
    assert.is(delivery.error, 'the webhook answered HTTP 500: {"error":"the imitation was told to fail"}');
  }, { webhook: "fail" }));

test("a server that accepts and never answers is given up on at the timeout, timed_out", () =>
  withReceivers(async (r) => {
    const started = Date.now();
    const delivery = await deliver(byName(configuredChannels(r.config), "pushover"), message, 400);
    const took = Date.now() - started;
    assert.ok(took >= 350 && took < 2_000, `took ${took} ms`);
    assert.equal([delivery.ok, delivery.status, delivery.timed_out], [false, null, true]);
    assert.is(delivery.error, `no answer from ${new URL(r.pushoverUrl).host} within 0.4s`);
    assert.is(r.received().pushover.length, 1, "the request did arrive");
  }, { pushover: "hang" }));

test("a server that answers its headers and then trickles its body cannot hold a delivery past the timeout", async () => {
  const trickles = new Set<ReturnType<typeof setInterval>>();
  const server: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json" });
    res.write("{");
    const drip = setInterval(() => res.write(" "), 50);
    trickles.add(drip);
    res.on("close", () => clearInterval(drip));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  try {
    const [webhook] = configuredChannels({ health: { webhook_url: `http://127.0.0.1:${port}/hook`, max_age: "5m" }, pushover: { api_url: "https://api.pushover.net/1/messages.json" } });
    const started = Date.now();
    const delivery = await deliver(webhook, message, 400);
    const took = Date.now() - started;
    assert.ok(took < 2_000, `took ${took} ms`);
    assert.equal([delivery.ok, delivery.timed_out], [false, true]);
  } finally {
    for (const drip of trickles) clearInterval(drip);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
});

test("a send that ignores its signal is given up on by the hard timer, and one that throws at once is a failed delivery", async () => {
  const deaf: Channel = { name: "webhook", target: "deaf.example", send: () => new Promise(() => {}) };
  const started = Date.now();
  const delivery = await deliver(deaf, message, 200);
  const took = Date.now() - started;
  assert.ok(took >= 200 && took < 1_500, `took ${took} ms`);
  assert.equal([delivery.ok, delivery.status, delivery.timed_out, delivery.error], [false, null, true, "no answer from deaf.example within 0.2s"]);
  const broken: Channel = { name: "pushover", target: "broken.example", send: () => { throw new Error("boom"); } };
  const failed = await deliver(broken, message, 200);
  assert.equal([failed.ok, failed.timed_out, failed.error], [false, false, "could not reach broken.example: boom"]);
});

test("a refused connection says so in the same words on both runtimes", async () => {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  const [webhook] = configuredChannels({ health: { webhook_url: `http://127.0.0.1:${port}/hook`, max_age: "5m" }, pushover: { api_url: "https://api.pushover.net/1/messages.json" } });
  const delivery = await deliver(webhook, message, 5_000);
  assert.equal([delivery.ok, delivery.status, delivery.timed_out, delivery.error], [false, null, false, `could not reach 127.0.0.1:${port}: ECONNREFUSED`]);
});

/** Serves `handle` on loopback for the length of `fn`. */
async function serving(handle: Parameters<typeof createServer>[1], fn: (url: string, server: Server) => Promise<void>): Promise<void> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as { port: number }).port}`, server);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test("a webhook that answers 200 and keeps streaming is read a few KiB at most, then let go: the delivery ends, taken", () =>
  serving((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    const chunk = "x".repeat(64 * 1024);
    // Endless, as fast as the client reads: a client reading all of it would never finish and grow without bound.
    const pump = () => {
      while (res.write(chunk)) { /* keep writing */ }
    };
    res.on("drain", pump);
    pump();
  }, async (url) => {
    const started = performance.now();
    const delivery = await deliver(webhookChannelOf(`${url}/hook`), message, 10_000);
    assert.equal([delivery.ok, delivery.status, delivery.timed_out], [true, 200, false]);
    assert.ok(performance.now() - started < 5_000, "not held until the timeout");
  }));

test("a redirect is never followed: a Pushover send redirected elsewhere is a failed delivery, and the other host gets nothing (no token, no user key)", () =>
  serving((req, res) => {
    req.resume();
    res.writeHead(200).end('{"status":1}');
  }, async (elsewhere, other) => {
    let reached = 0;
    other.on("request", () => reached++);
    await serving((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${elsewhere}/1/messages.json` }).end();
    }, (api) => withTempDir(async (dir) => {
      const token_file = secretFile(join(dir, "token"), "azGDORePK8gMaC0QOYAMyEEuzJnyUi\n");
      const user_key_file = secretFile(join(dir, "user"), "uQiRzpo4DXghDmr9QzzfQu27cmVRsG\n");
      const [pushover] = configuredChannels({ health: { max_age: "5m" }, pushover: { api_url: `${api}/1/messages.json`, token_file, user_key_file } });
      const delivery = await deliver(pushover, message, 5_000);
      assert.equal([delivery.ok, delivery.status], [false, 307]);
      assert.match(delivery.error ?? "", `Pushover answered HTTP 307, a redirect to ${new URL(elsewhere).host}, which is never followed: the message was not delivered`);
      assert.is(reached, 0, "the token and user key went nowhere else");
    }));
  }));

test("a webhook answer that echoes the secret in its URL is quoted only redacted", () =>
  serving((req, res) => {
    req.resume();
    res.writeHead(404, { "content-type": "text/plain" }).end(`no such topic: ${req.url}`);
  }, async (url) => {
    const secret = "tp_9f2c41d07a8b4e6c";
    const delivery = await deliver(webhookChannelOf(`${url}/hook/${secret}?key=k3y-0f-the-webhook-owner`), message, 5_000);
    assert.equal([delivery.ok, delivery.status], [false, 404]);
    assert.match(delivery.error ?? "", "the webhook answered HTTP 404: no such topic:");
    assert.not.match(delivery.error ?? "", secret);
    assert.not.match(delivery.error ?? "", "k3y-0f-the-webhook-owner");
  }));

test.run();
