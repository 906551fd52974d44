/**
 * Sending one message to every configured channel, each delivery audited on its own
 * (DESIGN rule 3): one `notification.send` intent per channel, all written before anything
 * is sent, then the channels in parallel, each bounded by the timeout, and one outcome per
 * channel saying whether it took the message. So the log can say "the webhook took it and
 * Pushover did not", and a crash between intent and outcome is found, never sent again.
 */
import { deliver } from "../boundaries/notifier/channels.ts";
import type { Delivery } from "../boundaries/notifier/channels.ts";
import type { Channel, ChannelName, Message } from "../boundaries/notifier/message.ts";
import { auditEffect } from "../store/audit.ts";
import type { Store } from "../store/open.ts";

/** How a message is sent. */
export interface SendOptions {
  /** Below effect level live: nothing is sent, each channel's outcome says `simulated` ("would notify"). */
  simulated: boolean;
  /** The longest one delivery may take (`[notifications] timeout`). */
  timeoutMs: number;
  /** The id of the last audit record this message reports (the notification pass's memory). */
  through?: number;
  /** The work item and repository the audit records are about. */
  item?: number;
  repo?: string;
  /** A shorter bound for some channels (what is left of a pass's time for them). */
  timeouts?: Partial<Record<ChannelName, number>>;
}

/** A channel this message is not sent to, and why (its file cannot be used, its time this pass ran out): recorded, never sent. */
export interface NotSent {
  name: ChannelName;
  target: string;
  notSent: string;
}

/**
 * Sends `message` to every channel and says what became of it on each; a channel's failure
 * or timeout is in its Delivery, never thrown. With no store (health, when the store cannot
 * be opened) the message is sent unaudited.
 * @example
 * const deliveries = await sendMessage(store, configuredChannels(config), message, { simulated: false, timeoutMs: 10_000, item: 3, repo: "demo/widgets" });
 * deliveries.filter((d) => !d.ok).map((d) => `${d.channel}: ${d.error}`);
 */
export async function sendMessage(store: Store | undefined, channels: Array<Channel | NotSent>, message: Message, options: SendOptions): Promise<Delivery[]> {
  const send = (channel: Channel | NotSent): Promise<Delivery> => {
    if ("notSent" in channel) return Promise.resolve(notSent(channel));
    if (options.simulated) return Promise.resolve(wouldNotify(channel));
    return deliver(channel, message, options.timeouts?.[channel.name] ?? options.timeoutMs);
  };
  if (!store) return Promise.all(channels.map(send));

  const messageId = globalThis.crypto.randomUUID();
  let openGate!: (go: boolean) => void;
  const gate = new Promise<boolean>((resolve) => (openGate = resolve));
  // auditEffect writes its intent, then calls its effect at once: `started` counts the intents on disk.
  let started = 0;
  const deliveries: Delivery[] = [];
  // The sends run side by side; the outcomes are written in the channels' order, so the log reads the same every time.
  const runs: Array<Promise<Delivery>> = [];
  channels.forEach((channel, index) => runs.push(
    auditEffect(
      store,
      {
        kind: "notification.send",
        repo: options.repo,
        item: options.item,
        simulated: options.simulated,
        body: {
          message_id: messageId,
          channel: channel.name,
          target: channel.target,
          kind: message.kind,
          title: message.title,
          text: message.text,
          ...(options.through === undefined ? {} : { through: options.through }),
        },
      },
      async () => {
        started++;
        // Nothing is sent unless every channel's intent is on disk.
        if (!(await gate)) throw new Error("not sent: the audit log refused another channel's intent");
        const delivery = await send(channel);
        deliveries[index] = delivery;
        await runs[index - 1]?.catch(() => {});
        return delivery;
      },
      outcomeOf,
    ),
  ));
  openGate(started === channels.length);
  const settled = await Promise.allSettled(runs);
  // Only the store can fail here (a delivery never throws): every send has finished before that is reported.
  const failed = settled.find((result) => result.status === "rejected") as PromiseRejectedResult | undefined;
  if (failed) throw new SendNotRecorded(failed.reason, started === channels.length ? channels.map((c, i) => deliveries[i] ?? unknownDelivery(c)) : null);
  return settled.map((result) => (result as PromiseFulfilledResult<Delivery>).value);
}

/**
 * The audit log failed around a send: `deliveries` says what the channels did when the
 * message was sent (its outcomes may be missing), null when nothing was sent at all (an
 * intent could not be written), so a caller may send it unaudited without sending it twice.
 */
export class SendNotRecorded extends Error {
  readonly deliveries: Delivery[] | null;
  constructor(cause: unknown, deliveries: Delivery[] | null) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = "SendNotRecorded";
    this.deliveries = deliveries;
  }
}

/** A channel whose delivery never reported (its run failed on the store before it sent): not taken for delivered. */
function unknownDelivery(channel: Channel | NotSent): Delivery {
  return { channel: channel.name, target: channel.target, ok: false, status: null, error: "not known: the audit log failed", timed_out: false, ms: 0 };
}

/** A delivery below live: nothing left the machine. */
function notSent(channel: NotSent): Delivery {
  return { channel: channel.name, target: channel.target, ok: false, status: null, error: channel.notSent, timed_out: false, ms: 0 };
}

function wouldNotify(channel: Channel): Delivery {
  return { channel: channel.name, target: channel.target, ok: true, status: null, error: null, timed_out: false, ms: 0, simulated: true };
}

/** The outcome's body: the delivery's own `ok` (auditEffect's `ok: true` means only that nothing threw). */
function outcomeOf(delivery: Delivery): Record<string, unknown> {
  if (delivery.simulated) return { ok: true, simulated: true, channel: delivery.channel, target: delivery.target };
  return {
    ok: delivery.ok,
    channel: delivery.channel,
    target: delivery.target,
    status: delivery.status,
    error: delivery.error,
    timed_out: delivery.timed_out,
  };
}
