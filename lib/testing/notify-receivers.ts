/**
 * Loopback imitations of the two notification services, for tests and scenario setups: a
 * generic JSON webhook (ntfy, a chat bridge) and Pushover's messages API. Each checks what
 * the real service checks, so a channel that sends the wrong thing is refused here as it
 * would be there: the webhook takes only a JSON object (`application/json`), Pushover only
 * form-encoded parameters (it rejects a JSON body) with its application's token, a user
 * key, a message, and a priority from -2 to 2.
 *
 * Every request is kept in memory and appended as one JSON line to
 * `<dir>/received/webhook.jsonl` or `pushover.jsonl` (method, path, content type, the body
 * as parsed, the answer given), so a scenario can read what arrived with `files_contain`.
 *
 * @example
 * const receivers = await startNotifyReceivers(dir, { webhook: "fail" });
 * appendFileSync(configPath, receivers.configToml);
 * // ... send ...
 * assert.is(receivers.received().pushover.length, 1);
 * await receivers.close();
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readBody } from "../forge/server.ts";
import type { Message } from "../boundaries/notifier/message.ts";
import { withTempDir } from "./fixtures.ts";

/** How an imitation answers: as the service does (`ok`), with a 500 (`fail`), or never (`hang`: it reads the request and holds the connection open). */
export type ReceiverMode = "ok" | "fail" | "hang";

/** One request an imitation received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  content_type: string | null;
  /** The Authorization header, when one came (a webhook URL with user:password@ is sent as Basic). */
  authorization: string | null;
  /** The body as parsed: a JSON value (webhook), the form's fields (Pushover), or the raw text when it parses as neither. */
  body: unknown;
  /** What the imitation answered; null when it never answered (`hang`). */
  answer: { status: number; body: unknown } | null;
}

/** The two imitations, running. */
export interface NotifyReceivers {
  /** The URL to give `health.webhook_url`. */
  webhookUrl: string;
  /** The URL to give `pushover.api_url` (`.../1/messages.json`). */
  pushoverUrl: string;
  /** The application token the Pushover imitation accepts, and the user key; both also in the files below. */
  token: string;
  user: string;
  /** 0600 files holding the token and the user key, for `pushover.token_file` and `pushover.user_key_file`. */
  tokenFile: string;
  userKeyFile: string;
  /** Where the received requests are written (`webhook.jsonl`, `pushover.jsonl`). */
  receivedDir: string;
  /** `[health]` and `[pushover]` tables pointing robot-army at both imitations, to append to a config.toml. */
  configToml: string;
  /** The same two tables as a loaded config holds them, for a test that builds channels without a config file. */
  config: { health: { webhook_url: string; max_age: string }; pushover: { token_file: string; user_key_file: string; api_url: string } };
  /** Every request received so far, oldest first. */
  received(): { webhook: ReceivedRequest[]; pushover: ReceivedRequest[] };
  /** Stops both servers, ending open (and hanging) connections. */
  close(): Promise<void>;
}

/** Pushover's own limits (https://pushover.net/api): longer titles and messages are refused. */
export const PUSHOVER_LIMITS = { title: 250, message: 1024 } as const;

const PUSHOVER_PATH = "/1/messages.json";
const WEBHOOK_PATH = "/hook";

/** How the imitations answer, the webhook's port (default: one the system chooses), and who hears of each request. */
export interface ReceiverOptions {
  webhook?: ReceiverMode;
  pushover?: ReceiverMode;
  webhookPort?: number;
  onReceive?: (which: "webhook" | "pushover", request: ReceivedRequest) => void;
}

/** A failure's message, as tests of the channels send it. */
export const SAMPLE_MESSAGE: Message = {
  kind: "failure",
  title: "robot-army: demo/widgets#3 failed (item 3)",
  text: "The worker's start failed on box.\nrobot-army show 3",
  urgency: "high",
  about: { host: "box", item: 3, repo: "demo/widgets", issue: 3, state: "failed" },
  commands: ["robot-army show 3"],
};

/** Runs `fn` with both imitations started in a temp dir of their own, closed after it. */
export function withNotifyReceivers(fn: (r: NotifyReceivers, dir: string) => Promise<void>, options: ReceiverOptions = {}): Promise<void> {
  return withTempDir(async (dir) => {
    const receivers = await startNotifyReceivers(dir, options);
    try {
      await fn(receivers, dir);
    } finally {
      await receivers.close();
    }
  });
}

/** Starts both imitations on 127.0.0.1 (ports chosen by the system) and writes their credential files into `dir`. */
export async function startNotifyReceivers(dir: string, options: ReceiverOptions = {}): Promise<NotifyReceivers> {
  const receivedDir = join(dir, "received");
  mkdirSync(receivedDir, { recursive: true });
  const token = randomKey();
  const user = randomKey();
  const tokenFile = secretFile(join(dir, "pushover-token"), token);
  const userKeyFile = secretFile(join(dir, "pushover-user"), user);
  const log = { webhook: [] as ReceivedRequest[], pushover: [] as ReceivedRequest[] };

  const webhook = await listen((req, res) => receive("webhook", req, res, options.webhook ?? "ok", answerWebhook), options.webhookPort);
  const pushover = await listen((req, res) => receive("pushover", req, res, options.pushover ?? "ok", (request) => answerPushover(request, token, user)));

  async function receive(
    which: "webhook" | "pushover",
    req: IncomingMessage,
    res: ServerResponse,
    mode: ReceiverMode,
    answer: (request: Omit<ReceivedRequest, "answer">) => { status: number; body: unknown },
  ): Promise<void> {
    const raw = await readBody(req);
    const contentType = req.headers["content-type"] ?? null;
    const request = { method: req.method ?? "GET", path: req.url ?? "/", content_type: contentType, authorization: req.headers.authorization ?? null, body: parseBody(raw, contentType) };
    const given = mode === "hang" ? null : mode === "fail" ? failure(which) : answer(request);
    const entry: ReceivedRequest = { ...request, answer: given };
    log[which].push(entry);
    appendFileSync(join(receivedDir, `${which}.jsonl`), JSON.stringify(entry) + "\n");
    options.onReceive?.(which, entry);
    if (!given) return; // hang: the connection stays open until close() ends it
    res.writeHead(given.status, { "content-type": "application/json" });
    res.end(JSON.stringify(given.body));
  }

  const webhookUrl = `${webhook.url}${WEBHOOK_PATH}`;
  const pushoverUrl = `${pushover.url}${PUSHOVER_PATH}`;
  return {
    webhookUrl,
    pushoverUrl,
    token,
    user,
    tokenFile,
    userKeyFile,
    receivedDir,
    configToml: [
      "",
      "[health]",
      `webhook_url = ${JSON.stringify(webhookUrl)}`,
      "",
      "[pushover]",
      `token_file = ${JSON.stringify(tokenFile)}`,
      `user_key_file = ${JSON.stringify(userKeyFile)}`,
      `api_url = ${JSON.stringify(pushoverUrl)}`,
      "",
    ].join("\n"),
    config: {
      health: { webhook_url: webhookUrl, max_age: "5m" },
      pushover: { token_file: tokenFile, user_key_file: userKeyFile, api_url: pushoverUrl },
    },
    received: () => ({ webhook: [...log.webhook], pushover: [...log.pushover] }),
    close: async () => {
      await Promise.all([webhook.close(), pushover.close()]);
    },
  };
}

/** What a generic JSON webhook checks: a POST to its path whose body is a JSON object. */
function answerWebhook(request: Omit<ReceivedRequest, "answer">): { status: number; body: unknown } {
  if (request.method !== "POST") return { status: 405, body: { error: "method not allowed" } };
  if (pathOf(request.path) !== WEBHOOK_PATH) return { status: 404, body: { error: "not found" } };
  if (mediaType(request.content_type) !== "application/json") return { status: 415, body: { error: `content type must be application/json, not ${request.content_type ?? "none"}` } };
  const body = request.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { status: 400, body: { error: "the body must be a JSON object" } };
  return { status: 200, body: { ok: true } };
}

/**
 * What Pushover's messages API checks, in its order and with its answers: a form-encoded
 * POST (a JSON body is refused), the application's token, a user key, a message, a title
 * and message within its limits, a priority from -2 to 2. Unlike the real service it names
 * the token it refused, as some services echo what they refuse, so a test can see that the
 * channel redacts a credential that comes back in an error.
 */
function answerPushover(request: Omit<ReceivedRequest, "answer">, token: string, user: string): { status: number; body: unknown } {
  const requestId = randomKey();
  const refuse = (field: string, error: string) => ({ status: 400, body: { [field]: "invalid", errors: [error], status: 0, request: requestId } });
  if (request.method !== "POST") return { status: 404, body: { errors: ["not found"], status: 0, request: requestId } };
  if (pathOf(request.path) !== PUSHOVER_PATH) return { status: 404, body: { errors: ["not found"], status: 0, request: requestId } };
  if (mediaType(request.content_type) !== "application/x-www-form-urlencoded") {
    return refuse("body", `the body must be form-encoded (application/x-www-form-urlencoded), not ${request.content_type ?? "none"}`);
  }
  const form = request.body as Record<string, string>;
  if (!form.token) return refuse("token", "application token is invalid");
  if (form.token !== token) return refuse("token", `application token "${form.token}" is invalid`);
  if (!form.user) return refuse("user", "user identifier is not a valid user, group, or subscribed user key");
  if (form.user !== user) return refuse("user", `user identifier "${form.user}" is not a valid user, group, or subscribed user key`);
  if (!form.message) return refuse("message", "message cannot be blank");
  if (form.message.length > PUSHOVER_LIMITS.message) return refuse("message", `message is longer than ${PUSHOVER_LIMITS.message} characters`);
  if ((form.title ?? "").length > PUSHOVER_LIMITS.title) return refuse("title", `title is longer than ${PUSHOVER_LIMITS.title} characters`);
  if (form.priority !== undefined && !/^-?[0-2]$/.test(form.priority)) return refuse("priority", "priority is invalid");
  return { status: 200, body: { status: 1, request: requestId } };
}

/** The answer of an imitation told to fail: a 500, in the service's own error shape. */
function failure(which: "webhook" | "pushover"): { status: number; body: unknown } {
  return which === "pushover"
    ? { status: 500, body: { errors: ["the imitation was told to fail"], status: 0, request: randomKey() } }
    : { status: 500, body: { error: "the imitation was told to fail" } };
}

function parseBody(raw: string, contentType: string | null): unknown {
  const type = mediaType(contentType);
  if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** A request's path without its query: `/hook?auth=x` -> `/hook`. */
function pathOf(path: string): string {
  return new URL(path, "http://receiver.invalid").pathname;
}

/** `application/json; charset=utf-8` -> `application/json`. */
function mediaType(contentType: string | null): string | null {
  return contentType?.split(";")[0].trim().toLowerCase() ?? null;
}

/** A server on 127.0.0.1, its port chosen by the system. */
async function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    handler(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : 0;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${bound}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** A key shaped like Pushover's: 30 letters and digits. */
function randomKey(): string {
  return globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 30);
}

function secretFile(path: string, content: string): string {
  writeFileSync(path, content + "\n", { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}
