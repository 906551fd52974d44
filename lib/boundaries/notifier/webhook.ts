/**
 * The webhook channel: every message as one JSON POST to a URL the owner chose (ntfy, a
 * chat bridge, their own receiver). Any 2xx answer means it was taken.
 */
import { Buffer } from "node:buffer";
import type { Channel, Message } from "./message.ts";
import { rememberSecret } from "../../redact.ts";
import { ChannelRefused, answerSnippet, postOnce } from "./_refused.ts";

/** A URL's user-info part as written: percent-decoded when it decodes, else as it stands (`50%off`). */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The shortest path segment or query value taken for a secret of its own: shorter ones are words of the address ("hook", "api"). */
const SECRET_PART_MIN = 16;

/** A URL's path and query, whole, and each of their parts long enough to be a secret. */
export function secretParts(url: URL): string[] {
  const parts = [url.pathname.length > 1 ? url.pathname + url.search : url.search, url.search.slice(1)];
  for (const segment of url.pathname.split("/")) parts.push(decoded(segment));
  for (const [key, value] of url.searchParams) parts.push(key, value);
  return parts.filter((part, index) => index < 2 ? part.length > 1 : part.length >= SECRET_PART_MIN);
}

/** The JSON a webhook receives: the message's fields, flat, with `source` saying who sent it. */
export function webhookBody(message: Message): Record<string, unknown> {
  return {
    source: "robot-army",
    kind: message.kind,
    title: message.title,
    message: message.text,
    urgency: message.urgency,
    ...message.about,
    commands: message.commands,
    ...(message.url ? { url: message.url } : {}),
  };
}

/**
 * A channel that POSTs to `url`. Its target is the URL's host only: the rest of a URL read
 * from `health.webhook_url_file` may be a secret.
 */
export function webhookChannel(url: string): Channel {
  // A URL with user:password@ in it (kept in its 0600 file) is sent as Basic authentication: fetch refuses such a URL on Node.
  const parsed = new URL(url);
  const user = decoded(parsed.username);
  const password = decoded(parsed.password);
  // UTF-8, as RFC 7617 asks; btoa takes Latin-1 only.
  const basic = user || password ? `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}` : undefined;
  // `token@host` carries its secret as the user: both are remembered, so an answer echoing one is redacted.
  rememberSecret(user);
  rememberSecret(password);
  // So may its path and query (an ntfy topic, a hook's key): remembered whole, with each long part, for an answer that echoes them.
  for (const part of secretParts(parsed)) rememberSecret(part);
  parsed.username = "";
  parsed.password = "";
  const target = parsed.host;
  const plain = parsed.toString();
  return {
    name: "webhook",
    target,
    async send(message, signal) {
      const res = await postOnce(plain, {
        headers: { "content-type": "application/json", ...(basic ? { authorization: basic } : {}) },
        body: JSON.stringify(webhookBody(message)),
        signal,
      }, "the webhook");
      const { text } = res;
      if (res.status < 200 || res.status > 299) {
        const said = answerSnippet(text);
        throw new ChannelRefused(res.status, `the webhook answered HTTP ${res.status}${said ? `: ${said}` : ""}`);
      }
      return { status: res.status };
    },
  };
}
