/**
 * What robot-army tells its owner: one message, the same on every channel (DESIGN rule 5:
 * identifiers and state names, and what to run; a failure's reason too, since the channels
 * are private). Nothing here reads a credential, so no credential can reach a message.
 */

/** What a message is about: a notification event, the summary of what a pass held back, or a health verdict. */
export type MessageKind = "dispatch" | "completion" | "failure" | "needs_info" | "anomaly" | "summary" | "health";

/** How urgent a message is; Pushover's priority follows it (low -1, normal 0, high 1). */
export type Urgency = "low" | "normal" | "high";

/** One message to the owner. */
export interface Message {
  kind: MessageKind;
  /** One line, e.g. `robot-army: demo/widgets#3 failed (item 3)`. */
  title: string;
  /** A few lines: what happened, where, and what to run. */
  text: string;
  urgency: Urgency;
  /** The identifiers the message is about, for a receiver that reads JSON. */
  about: {
    host: string;
    item?: number;
    repo?: string;
    issue?: number;
    session?: string;
    state?: string;
    /** A health check's verdict (`DIED`, `HUNG`, ...). */
    verdict?: string;
    /** An anomaly's kind. */
    anomaly?: string;
  };
  /** The commands that say more or fix it, each whole (`robot-army show 3`). */
  commands: string[];
  /** The dashboard's page about it, when `[web] public_url` is set (`https://robot.lan:8443/items/3`). */
  url?: string;
}

/** The channels robot-army can send to. */
export type ChannelName = "webhook" | "pushover";

/** One configured channel, ready to send. */
export interface Channel {
  readonly name: ChannelName;
  /** Where it sends, with no secret in it: the host (`ntfy.sh`, `api.pushover.net`). */
  readonly target: string;
  /** Sends one message; resolves when the service took it, rejects (a ChannelRefused with its status) when it did not. */
  send(message: Message, signal: AbortSignal): Promise<{ status: number }>;
}
