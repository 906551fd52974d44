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
import type { DaemonEvent } from "../events.ts";
import { parseDuration } from "../duration.ts";
import type { Effects } from "../effects.ts";
import { channelsOf, configuredChannelNames } from "../boundaries/notifier/channels.ts";
import type { Delivery } from "../boundaries/notifier/channels.ts";
import type { Channel, ChannelName, Message } from "../boundaries/notifier/message.ts";
import { appendAudit, lastAuditId } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { notifiableSince, notifiedThrough } from "./events.ts";
import type { Notifiable } from "./events.ts";
import { sendMessage } from "./send.ts";
import type { NotSent } from "./send.ts";

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
 * Where this effect level's notifications are told from, opening it at `from` when none is
 * yet (a channel newly configured: what happens from now on is told); null with no channel.
 * The daemon opens it as a tick begins, before any step, so a tick stopped or killed before
 * its notification step leaves what it did to the next tick's pass, never behind its start.
 */
export function openNotificationCursor(deps: Pick<NotifyDeps, "store" | "config" | "effects">, from: number): number | null {
  if (configuredChannelNames(deps.config).length === 0) return null;
  const simulated = !deps.effects.notifications;
  const through = notifiedThrough(deps.store, simulated);
  if (through !== null) return through;
  appendAudit(deps.store, { kind: "notification.cursor", simulated, body: { through: from, why: "a notification channel is configured: what happens from now on is told" } });
  return from;
}

/**
 * Runs the step. `passStartedAfter` is the newest audit record when the pass began: the
 * first pass with a channel tells what happened in that pass, never the history before it.
 * `channels` defaults to the config's (their credential files read now; one that cannot be
 * used is recorded as not sent, and the others still send).
 *
 * Each channel has one `notifications.timeout` for the whole pass: its deliveries share it,
 * and once it is spent the channel's remaining messages are recorded as not sent. So a
 * channel that hangs, or answers slowly each time, delays the other and the heartbeat by at
 * most one timeout.
 */
export async function notifyPass(deps: NotifyDeps, options: { passStartedAfter?: number; channels?: Channel[] } = {}): Promise<NotifyResult> {
  const result: NotifyResult = { sent: 0, held_back: 0, failed_deliveries: 0, events: [] };
  if (configuredChannelNames(deps.config).length === 0) return result;
  // One cursor per effect level: a pass below live never passes over what live has still to tell, nor the other way.
  const simulated = !deps.effects.notifications;
  const through = openNotificationCursor(deps, options.passStartedAfter ?? lastAuditId(deps.store))!;
  const wanted = new Set<NotificationEvent>(deps.config.notifications.events);
  const scan = notifiableSince(deps.store, through, { host: deps.host, simulated: deps.effects.simulated, dashboard: deps.config.web.public_url });
  const due = scan.found.filter((n) => wanted.has(n.event));
  // What was looked at and is not to be told is passed for good, so a quiet pass never reads it again.
  const passOver = () => {
    const covered = due.at(-1)?.id ?? through;
    if (scan.lastId > covered) appendAudit(deps.store, { kind: "notification.cursor", simulated, body: { through: scan.lastId, why: "nothing more to tell up to here" } });
  };
  if (due.length === 0) {
    passOver();
    return result;
  }
  const { channels, broken } = options.channels ? { channels: options.channels, broken: [] } : channelsOf(deps.config);
  const timeoutMs = parseDuration(deps.config.notifications.timeout, "notifications.timeout");
  const max = deps.config.notifications.max_per_cycle;
  const now = due.slice(0, max);
  const held = due.slice(max);
  const left = new Map<ChannelName, number>(channels.map((c) => [c.name, timeoutMs]));
  const send = async (message: Message, covers: number, item?: number, repo?: string): Promise<void> => {
    const to: Array<Channel | NotSent> = [
      ...channels.map((c) => ((left.get(c.name) ?? 0) > 0 ? c : { name: c.name, target: c.target, notSent: `not sent: its ${timeoutText(timeoutMs)} for this pass (notifications.timeout) ran out` })),
      ...broken.map((b) => ({ name: b.name, target: b.target, notSent: `not sent: ${b.problem}` })),
    ];
    const timeouts = Object.fromEntries(left) as Partial<Record<ChannelName, number>>;
    const deliveries = await sendMessage(deps.store, to, message, { simulated, timeoutMs, timeouts, through: covers, item, repo });
    const attempted = new Set(to.filter((c) => !("notSent" in c)).map((c) => c.name));
    for (const d of deliveries) if (attempted.has(d.channel)) left.set(d.channel, (left.get(d.channel) ?? 0) - Math.max(d.ms, 1));
    const taken = deliveries.filter((d) => d.ok).length;
    if (taken > 0) result.sent++;
    result.failed_deliveries += deliveries.length - taken;
    result.events.push(messageEvent(message, deliveries, simulated));
  };
  for (const n of now) await send(n.message, n.id, n.message.about.item, n.message.about.repo);
  if (held.length) {
    result.held_back = held.length;
    await send(summaryOf(held, deps.host), held.at(-1)!.id);
  }
  passOver();
  return result;
}

function timeoutText(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
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

/** One line per message: where it went and what each channel said; `not notified` when no channel took it. */
function messageEvent(message: Message, deliveries: Delivery[], simulated: boolean): DaemonEvent {
  const title = message.title.replace(/^robot-army: /, "");
  const channels = deliveries.map((d) => `${d.channel}${d.ok ? "" : ` not delivered: ${d.error ?? `status ${d.status}`}`}`).join(", ");
  const taken = deliveries.filter((d) => d.ok).length;
  // Below live nothing leaves the machine, whatever a channel's state: the line says so first.
  const verb = simulated ? (taken === deliveries.length ? "would notify" : taken === 0 ? "would not notify" : "would notify in part")
    : taken === 0 ? "not notified" : taken === deliveries.length ? "notified" : "notified in part";
  return {
    event: "notification", line: `${verb}: ${title} (${channels || "no channel"})`, kind: message.kind, simulated,
    deliveries: deliveries.map((d) => ({ channel: d.channel, ok: d.ok, status: d.status, error: d.error, timed_out: d.timed_out })),
  };
}
