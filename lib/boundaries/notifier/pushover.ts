/**
 * The Pushover channel: every message as a form-encoded POST to Pushover's messages API
 * (https://pushover.net/api), which refuses a JSON body, so a generic webhook cannot reach
 * it. Pushover answers `{"status":1}` when it took a message and a 4xx with
 * `{"status":0,"errors":[...]}` when not; the errors are what the delivery reports.
 */
import type { Channel, Message, Urgency } from "./message.ts";
import { ChannelRefused, answerSnippet, postOnce } from "./_refused.ts";

/** Pushover's priority for each urgency: health alerts high, summaries low. */
export const PUSHOVER_PRIORITY: Record<Urgency, number> = { low: -1, normal: 0, high: 1 };

/** Pushover's limits on a title and a message (longer ones are refused, so they are cut here). */
const LIMITS = { title: 250, message: 1024 };

/** What a Pushover channel needs: the API's URL, the application's token and the owner's user key. */
export interface PushoverCredentials {
  apiUrl: string;
  token: string;
  user: string;
}

/** The form Pushover is sent for a message. */
export function pushoverForm(message: Message, credentials: Pick<PushoverCredentials, "token" | "user">): URLSearchParams {
  const form = new URLSearchParams({
    token: credentials.token,
    user: credentials.user,
    title: cut(message.title, LIMITS.title),
    message: cut(message.text || message.title, LIMITS.message),
    priority: String(PUSHOVER_PRIORITY[message.urgency]),
  });
  // Pushover shows it as a link under the message: one tap opens the item's page.
  if (message.url) {
    form.set("url", message.url);
    form.set("url_title", "open in the dashboard");
  }
  return form;
}

/** A channel that sends to Pushover; its target is the API's host. */
export function pushoverChannel(credentials: PushoverCredentials): Channel {
  return {
    name: "pushover",
    target: new URL(credentials.apiUrl).host,
    async send(message, signal) {
      const res = await postOnce(credentials.apiUrl, {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: pushoverForm(message, credentials).toString(),
        signal,
      }, "Pushover");
      const { text } = res;
      const answer = parseAnswer(text);
      if (res.status >= 200 && res.status <= 299 && answer?.status === 1) return { status: res.status };
      throw new ChannelRefused(res.status, `Pushover answered HTTP ${res.status}: ${refusal(answer, text)}`);
    },
  };
}

function parseAnswer(text: string): { status?: unknown; errors?: unknown } | null {
  try {
    const parsed = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null ? parsed : null;
  } catch {
    return null;
  }
}

/** What Pushover said was wrong: its `errors`, or the answer's text when it gave none. */
function refusal(answer: { status?: unknown; errors?: unknown } | null, text: string): string {
  if (Array.isArray(answer?.errors) && answer.errors.length) return answer.errors.map(String).join("; ");
  if (answer && answer.status !== 1) return `status ${JSON.stringify(answer.status ?? null)}`;
  return answerSnippet(text) || "no answer text";
}

function cut(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 3)}...` : text;
}
