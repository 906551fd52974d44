/**
 * The notification channels the owner configured (DESIGN rule 5): the generic JSON webhook
 * (`[health] webhook_url`, or the 0600 file `webhook_url_file` for a URL that carries its
 * own secret) and Pushover (`[pushover]`, its token and user key each in a 0600 file). Both
 * get every message. One delivery to one channel never throws and never outlasts its
 * timeout, so a channel that fails or hangs cannot stop or hold up the other.
 */
import { isHttpUrl } from "../../config.ts";
import type { Config } from "../../config.ts";
import { PreconditionError } from "../../errors.ts";
import type { Channel, ChannelName, Message } from "./message.ts";
import { printable } from "../../printable.ts";
import { redact } from "../../redact.ts";
import { readSecretFile } from "../../secret-file.ts";
import { ChannelRefused } from "./_refused.ts";
import { pushoverChannel } from "./pushover.ts";
import { webhookChannel } from "./webhook.ts";

/** What became of one message on one channel. */
export interface Delivery {
  channel: ChannelName;
  target: string;
  /** The service took it. */
  ok: boolean;
  /** The HTTP status it answered with; null when it never answered. */
  status: number | null;
  /** Why it was not taken, redacted; null when it was. */
  error: string | null;
  /** No answer came within the timeout. */
  timed_out: boolean;
  /** How long the delivery took, in milliseconds. */
  ms: number;
  /** Nothing was sent: the effect level is below live (`would notify`). */
  simulated?: true;
}

/** The channels the config sets up, without reading a credential file (for `doctor`, `status`, a dry run). */
export function configuredChannelNames(config: Pick<Config, "health" | "pushover">): ChannelName[] {
  const names: ChannelName[] = [];
  if (config.health.webhook_url !== undefined || config.health.webhook_url_file !== undefined) names.push("webhook");
  if (config.pushover.token_file !== undefined && config.pushover.user_key_file !== undefined) names.push("pushover");
  return names;
}

/** A configured channel that cannot send now (its credential file cannot be used), and why. */
export interface BrokenChannel {
  name: ChannelName;
  target: string;
  problem: string;
}

/**
 * The channels the config sets up, ready to send: their credential files read (each checked
 * 0600 again, as it may have changed since the config was loaded) and remembered by the
 * redactor. Each is built on its own, so one whose file cannot be used is `broken`, with
 * why, and never keeps the other from sending.
 */
export function channelsOf(config: Pick<Config, "health" | "pushover">): { channels: Channel[]; broken: BrokenChannel[] } {
  const channels: Channel[] = [];
  const broken: BrokenChannel[] = [];
  for (const name of configuredChannelNames(config)) {
    try {
      channels.push(name === "webhook" ? webhookFromConfig(config.health) : pushoverFromConfig(config.pushover));
    } catch (error) {
      // Whatever keeps one channel from being built (its file, its URL) never keeps the other from sending.
      broken.push({ name, target: name === "webhook" ? webhookTarget(config.health) : hostOf(config.pushover.api_url), problem: error instanceof Error ? error.message : String(error) });
    }
  }
  return { channels, broken };
}

/**
 * The channels the config sets up, ready to send (as `channelsOf`), or a PreconditionError
 * naming the first whose credential file cannot be used.
 */
export function configuredChannels(config: Pick<Config, "health" | "pushover">): Channel[] {
  const { channels, broken } = channelsOf(config);
  if (broken.length) throw new PreconditionError(broken[0].problem);
  return channels;
}

/** Where the webhook sends, as far as the config says without reading its file. */
function webhookTarget(health: Config["health"]): string {
  return health.webhook_url !== undefined ? hostOf(health.webhook_url) : "its URL in health.webhook_url_file";
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "?";
  }
}

/**
 * Sends `message` on `channel` and says what became of it; never throws. Bounded twice: the
 * send's AbortSignal times out after `timeoutMs`, and a timer a little later gives up on a
 * send that ignored it (a server that accepts and never answers, or trickles its answer).
 */
export async function deliver(channel: Channel, message: Message, timeoutMs: number): Promise<Delivery> {
  const started = performance.now();
  const stop = new AbortController();
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), stop.signal]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const givenUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GaveUp()), timeoutMs + HARD_STOP_GRACE_MS);
  });
  const sending = Promise.resolve().then(() => channel.send(message, signal));
  // A send given up on may still reject later: that is expected, not unhandled.
  sending.catch(() => {});
  const about = { channel: channel.name, target: channel.target };
  try {
    const { status } = await Promise.race([sending, givenUp]);
    return { ...about, ok: true, status, error: null, timed_out: false, ms: elapsedSince(started) };
  } catch (error) {
    const timedOut = error instanceof GaveUp || isTimeout(error) || signal.aborted;
    return {
      ...about,
      ok: false,
      status: error instanceof ChannelRefused ? error.status : null,
      error: redact(printable(timedOut ? `no answer from ${channel.target} within ${seconds(timeoutMs)}` : reason(error, channel.target))),
      timed_out: timedOut,
      ms: elapsedSince(started),
    };
  } finally {
    clearTimeout(timer);
    // Ends the request if it is still open (given up on, or a body still trickling in).
    stop.abort();
  }
}

/** How long after its signal's timeout a send that ignored it is given up on. */
const HARD_STOP_GRACE_MS = 250;

/** The hard timer's verdict: the send outlived its signal. */
class GaveUp extends Error {}

function webhookFromConfig(health: Config["health"]): Channel {
  if (health.webhook_url !== undefined) return webhookChannel(health.webhook_url);
  const file = health.webhook_url_file!;
  const url = readSecretFile(file, { file: "webhook URL file", key: "health.webhook_url_file", holds: "the webhook's URL" });
  // The URL itself is never quoted: it is the secret the file keeps.
  if (!isHttpUrl(url)) throw new PreconditionError(`Webhook URL file "${file}" does not hold an http:// or https:// URL; health.webhook_url_file must name a file holding only the webhook's URL`);
  return webhookChannel(url);
}

function pushoverFromConfig(pushover: Config["pushover"]): Channel {
  const token = readSecretFile(pushover.token_file!, { file: "Pushover token file", key: "pushover.token_file", holds: "the application's API token" });
  const user = readSecretFile(pushover.user_key_file!, { file: "Pushover user key file", key: "pushover.user_key_file", holds: "your user key" });
  return pushoverChannel({ apiUrl: pushover.api_url, token, user });
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === "TimeoutError";
}

/** One line saying why a send failed: the service's answer, or what stopped the request reaching it. */
function reason(error: unknown, target: string): string {
  if (error instanceof ChannelRefused) return error.message;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  // Node's fetch puts what went wrong in its cause (`fetch failed`, cause ECONNREFUSED); Deno's in the cause's words.
  const words = typeof cause?.message === "string" ? cause.message : error instanceof Error ? error.message : String(error);
  const code = typeof cause?.code === "string" ? cause.code : NETWORK_FAILURES.find(([pattern]) => pattern.test(words))?.[1];
  // Deno's words can quote the whole URL, whose path may be the secret a webhook keeps: only its host is said.
  return `could not reach ${target}: ${code ?? words.split("\n")[0].replace(/\bhttps?:\/\/\S+/gi, target)}`;
}

/** Deno's words for the failures Node names by code, so both runtimes say the same. */
const NETWORK_FAILURES: Array<[RegExp, string]> = [
  [/connection refused/i, "ECONNREFUSED"],
  [/dns error|failed to lookup|name or service not known/i, "ENOTFOUND"],
  [/connection reset/i, "ECONNRESET"],
];

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}

function elapsedSince(started: number): number {
  return Math.round(performance.now() - started);
}
