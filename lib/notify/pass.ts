/**
 * The daemon's notification step, last before the heartbeat: what this pass (and any pass
 * since the last notification) did that the owner asked to be told of goes to every
 * configured channel, at most `[notifications] max_per_cycle` messages, then one summary
 * naming how many were held back and of which kinds. Off until a channel is configured;
 * below effect level `live` every message is recorded and printed as `would notify`.
 *
 * At most once: each message's intents name the audit record it covers (`through`) before
 * anything is sent, so a restart, or a crash in the middle of a send, never tells the same
 * transition twice; a send cut short is reported by the unfinished-effect sweep.
 */
import type { Config, NotificationEvent } from "../config.ts";
import type { DaemonEvent } from "../daemon/events.ts";
import { parseDuration } from "../duration.ts";
import type { Effects } from "../effects.ts";
import { configuredChannelNames, configuredChannels } from "../boundaries/notifier/channels.ts";
import type { Channel, Delivery } from "../boundaries/notifier/channels.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { lastAuditId, notifiableSince, notifiedThrough } from "./events.ts";
import type { Notifiable } from "./events.ts";
import type { Message } from "./message.ts";
import { sendMessage } from "./send.ts";

/** What the step works with. */
export interface NotifyDeps {
  store: Store;
  config: Config;
  effects: Effects;
  host: string;
}

/** What the step did: messages sent (or, below live, recorded), events held back into the summary, deliveries that failed. */
export interface NotifyResult {
  sent: number;
  held_back: number;
  failed_deliveries: number;
  events: DaemonEvent[];
}

/**
 * Runs the step. `passStartedAfter` is the newest audit record when the pass began: the
 * first pass with a channel tells what happened in that pass, never the history before it.
 * `channels` defaults to the config's (their credential files read now).
 */
export async function notifyPass(deps: NotifyDeps, options: { passStartedAfter?: number; channels?: Channel[] } = {}): Promise<NotifyResult> {
  const result: NotifyResult = { sent: 0, held_back: 0, failed_deliveries: 0, events: [] };
  if (configuredChannelNames(deps.config).length === 0) return result;
  let through = notifiedThrough(deps.store);
  if (through === null) {
    through = options.passStartedAfter ?? lastAuditId(deps.store);
    appendAudit(deps.store, { kind: "notification.cursor", body: { through, why: "a notification channel is configured: what happens from now on is told" } });
  }
  const wanted = new Set<NotificationEvent>(deps.config.notifications.events);
  const scan = notifiableSince(deps.store, through, { host: deps.host, simulated: deps.effects.simulated });
  const due = scan.found.filter((n) => wanted.has(n.event));
  // What was looked at and is not to be told is passed for good, so a quiet pass never reads it again.
  const passOver = () => {
    const covered = due.at(-1)?.id ?? through;
    if (scan.lastId > covered) appendAudit(deps.store, { kind: "notification.cursor", body: { through: scan.lastId, why: "nothing more to tell up to here" } });
  };
  if (due.length === 0) {
    passOver();
    return result;
  }
  const live = options.channels ?? configuredChannels(deps.config);
  const timeoutMs = parseDuration(deps.config.notifications.timeout, "notifications.timeout");
  const simulated = !deps.effects.notifications;
  const max = deps.config.notifications.max_per_cycle;
  const now = due.slice(0, max);
  const held = due.slice(max);
  // A channel that timed out is left out for the rest of the pass, so one hanging channel costs the pass one timeout.
  const timedOut = new Set<string>();
  const send = async (message: Message, covers: number, item?: number, repo?: string): Promise<void> => {
    const open = live.filter((c) => !timedOut.has(c.name));
    const deliveries = await sendMessage(deps.store, open, message, { simulated, timeoutMs, through: covers, item, repo });
    for (const d of deliveries) if (d.timed_out) timedOut.add(d.channel);
    result.sent++;
    result.failed_deliveries += deliveries.filter((d) => !d.ok).length;
    const skipped = live.filter((c) => !open.includes(c)).map((c) => `${c.name}: skipped, it timed out earlier this pass`);
    result.events.push(messageEvent(message, deliveries, simulated, skipped));
  };
  for (const n of now) await send(n.message, n.id, n.message.about.item, n.message.about.repo);
  if (held.length) {
    result.held_back = held.length;
    await send(summaryOf(held, deps.host), held.at(-1)!.id);
  }
  passOver();
  return result;
}

/** The one message standing for what a pass held back: how many, of which kinds, and where to look. */
export function summaryOf(held: Notifiable[], host: string): Message {
  const counts = new Map<string, number>();
  for (const n of held) counts.set(n.event, (counts.get(n.event) ?? 0) + 1);
  const kinds = [...counts].map(([event, count]) => `${count} ${event}`).join(", ");
  const commands = ["robot-army status", "robot-army log --kind state"];
  return {
    kind: "summary", urgency: "low",
    title: `robot-army: ${held.length} more held back on ${host}`,
    text: [`${held.length} more notification${held.length === 1 ? "" : "s"} held back this pass (notifications.max_per_cycle): ${kinds}`, ...commands.map((c) => `run: ${c}`)].join("\n"),
    about: { host }, commands,
  };
}

/** One line per message: where it went and what each channel said. */
function messageEvent(message: Message, deliveries: Delivery[], simulated: boolean, skipped: string[]): DaemonEvent {
  const title = message.title.replace(/^robot-army: /, "");
  const channels = [...deliveries.map((d) => `${d.channel}${d.ok ? "" : ` not delivered: ${d.error ?? `status ${d.status}`}`}`), ...skipped].join(", ");
  const verb = simulated ? "would notify" : deliveries.every((d) => d.ok) && skipped.length === 0 ? "notified" : "notified in part";
  return {
    event: "notification", line: `${verb}: ${title} (${channels || "no channel"})`, kind: message.kind, simulated,
    deliveries: deliveries.map((d) => ({ channel: d.channel, ok: d.ok, status: d.status, error: d.error, timed_out: d.timed_out })),
  };
}
