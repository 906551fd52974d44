/**
 * What a channel makes of its service's answer, the same for every channel: a redirect is
 * never followed (a Pushover send redirected elsewhere would carry its token and user key
 * there), only the first few KiB of an answer are read (a receiver that keeps streaming must
 * not grow the daemon), and an answer is quoted only once the secrets in it are redacted (a
 * receiver that echoes the URL it was sent to would otherwise print the URL's secret).
 */
import { redact } from "../../redact.ts";

/** A channel's service answered, and did not take the message: its status and what it said. */
export class ChannelRefused extends Error {
  /** The HTTP status the service answered with. */
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "ChannelRefused";
    this.status = status;
  }
}

/** The most of an answer a channel reads; the rest is cancelled, unread. */
export const ANSWER_LIMIT_BYTES = 4096;

/**
 * POSTs `body` to `url` without following a redirect, and reads at most ANSWER_LIMIT_BYTES of
 * the answer. A 3xx is a refusal naming where it pointed (never visited).
 */
export async function postOnce(url: string, init: { headers: Record<string, string>; body: string; signal?: AbortSignal }, who: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: "POST", ...init, redirect: "manual" });
  if (res.status >= 300 && res.status <= 399) {
    await res.body?.cancel();
    const location = res.headers.get("location");
    throw new ChannelRefused(res.status, `${who} answered HTTP ${res.status}, a redirect${location ? ` to ${hostOf(location, url)}` : ""}, which is never followed: the message was not delivered`);
  }
  return { status: res.status, text: await readAnswer(res) };
}

/** At most `limit` bytes of the answer's body, as text; the rest of the stream is cancelled. */
export async function readAnswer(res: Response, limit = ANSWER_LIMIT_BYTES): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value.subarray(0, limit - size));
      size += Math.min(value.byteLength, limit - size);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const joined = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(joined);
}

/** The first few lines of an answer's text, its secrets redacted, for an error that says what the service said. */
export function answerSnippet(text: string): string {
  const line = redact(text).trim().split("\n").slice(0, 3).join(" ").trim();
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

/** The host a redirect pointed to (relative to the URL asked), or that it could not be read. */
function hostOf(location: string, base: string): string {
  try {
    return new URL(location, base).host;
  } catch {
    return "an address that cannot be read";
  }
}
