/**
 * `robot-army health`: the dead man's switch. Says from outside the daemon whether it is
 * alive and ticking (lib/daemon/health.ts), exits 4 unless it is, and with `--notify` sends
 * a bad verdict to every configured channel, again at most once an hour while it stays the
 * same (lib/daemon/health-alert.ts). It takes no `--effect-level` and is never gated by
 * one: a switch that stayed silent while the daemon runs below `live` would be no switch.
 */
import { hostname } from "node:os";
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, asJson, parse, runMain, stringOption, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import type { Config } from "../lib/config.ts";
import { now } from "../lib/clock.ts";
import { checkHealth } from "../lib/daemon/health.ts";
import type { Health } from "../lib/daemon/health.ts";
import { clearSentAlert, decideAlert, healthMessage, recordSentAlert } from "../lib/daemon/health-alert.ts";
import { parseDuration } from "../lib/duration.ts";
import { EXIT } from "../lib/errors.ts";
import type { Channel, Message } from "../lib/boundaries/notifier/message.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { openExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { channelsOf } from "../lib/boundaries/notifier/channels.ts";
import type { Delivery } from "../lib/boundaries/notifier/channels.ts";
import { SendNotRecorded, sendMessage } from "../lib/notify/send.ts";
import type { NotSent } from "../lib/notify/send.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "health",
  summary: "Check from outside that the daemon is alive and ticking; --notify alerts every channel when it is not",
  usage: "health [--max-age DURATION] [--notify] [--json] [--config FILE]",
  description: `\
Reads the daemon's lock and heartbeat in the state dir and the process table (by pid and
start time) and prints one verdict with what was found and what to run:
  ok             the daemon runs and ticked within [health] max_age (or, with no daemon,
                 the last "run --once" did)
  STARTING       the daemon took the lock within max_age and has not ticked yet
  NEVER STARTED  no daemon has run with this state dir
  STOPPED        no daemon runs: the last one was stopped (SIGTERM, Ctrl-C), as it said
                 when it stopped, and its last tick is older than max_age (a reboot stops
                 it the same way, so this is not ok either)
  DIED           the lock's process is gone (by pid and start time), or no daemon holds
                 the lock and the last tick is older than max_age
  HUNG           the lock's process runs, but its last tick is older than max_age and the
                 next one it announced is overdue (or it never ticked within max_age of
                 taking the lock)
  UNREADABLE     the lock or the heartbeat cannot be read, or the lock's process cannot be
                 checked: never taken for ok
Exit 0 for ok, 4 for any other verdict.

With --notify, any verdict but ok goes to every configured channel ([health] webhook_url,
[pushover]) as one urgent message naming the verdict, whatever the config's effect level:
this command takes no --effect-level. An unchanged verdict is sent again at most once an
hour (<state dir>/health-alert.json remembers the last one); ok clears it. Each send is
audited when the store can be opened, and sent anyway when it cannot. Run it every few
minutes from cron or a systemd timer (the README shows both). --max-age 30m judges one
check against another allowance than [health] max_age.
`,
  options: {
    notify: { type: "boolean", description: "Send a bad verdict to every configured channel (at most once an hour while unchanged)" },
    "max-age": { type: "string", value: "DURATION", description: "How old the last tick may be (5m, 1h) instead of [health] max_age" },
    json: JSON_OPTION,
    config: CONFIG_OPTION,
  },
  examples: ["robot-army health", "robot-army health --notify", "robot-army health --json"],
};

/** What `health --json` prints: the verdict, the facts behind it, and what --notify did. */
export interface HealthReport extends Health {
  /** With --notify: `sent`, `not_sent` (the same verdict went out within the hour), `no_channel`, `nothing` (ok); null without it. */
  notified: "sent" | "not_sent" | "no_channel" | "nothing" | "cannot_send" | null;
  /** One line saying what --notify did, or null without it. */
  notify_note: string | null;
  deliveries: Delivery[];
}

/** What `run` is given: where the daemon's files are, the config, and the channels and send (tests give loopback ones). */
export interface HealthDeps {
  stateDir: string;
  config: Config;
  host: string;
  /** The configured channels, their credential files read (throws PreconditionError naming a file that cannot be). */
  /** The configured channels, each built on its own: one whose credential file cannot be used is not sent to, and says why. */
  channels: () => Array<Channel | NotSent>;
  /** Sends one message to every channel, auditing it in `store` when there is one. */
  send: (store: Store | undefined, channels: Array<Channel | NotSent>, message: Message, timeoutMs: number) => Promise<Delivery[]>;
  /** Opens the store for the audit, undefined when there is none; throws when it cannot be opened. */
  openStore: () => Promise<Store | undefined>;
  write: Write;
}

/** Parses argv, wires the real channels and store, and runs the check. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const config = await configFromArgs(args);
  const stateDir = stateDirPath();
  const maxAge = stringOption(args, "max-age");
  if (maxAge !== undefined) parseDuration(maxAge, "--max-age");
  return await run({ notify: args.values.notify === true, json: args.values.json === true, maxAge }, {
    stateDir,
    config,
    host: hostname(),
    channels: () => healthChannels(config),
    send: (store, channels, message, timeoutMs) => sendMessage(store, channels, message, { simulated: false, timeoutMs }),
    openStore: () => openExistingStore(stateDir),
    write: writeStdout,
  });
}

/** Checks the daemon, prints the verdict, sends it with --notify, and returns 0 for ok, 4 otherwise. */
export async function run(opts: { notify: boolean; json: boolean; maxAge?: string }, deps: HealthDeps): Promise<number> {
  const at = now();
  const maxAgeMs = opts.maxAge === undefined ? parseDuration(deps.config.health.max_age, "health.max_age") : parseDuration(opts.maxAge, "--max-age");
  const health = checkHealth(deps.stateDir, maxAgeMs, { now: at });
  const report: HealthReport = { ...health, notified: null, notify_note: null, deliveries: [] };
  const lines = [`${health.verdict}: ${health.detail}`];
  if (opts.notify) lines.push(...(await notify(report, at, deps)));
  deps.write(opts.json ? asJson(report) : lines.map((line) => line + "\n").join(""));
  return health.verdict === "ok" ? EXIT.ok : EXIT.checkFailed;
}

/** The configured channels, each on its own: one whose credential file cannot be used is recorded as not sent, never a reason to send to none. */
export function healthChannels(config: Config): Array<Channel | NotSent> {
  const { channels, broken } = channelsOf(config);
  return [...channels, ...broken.map((b) => ({ name: b.name, target: b.target, notSent: `not sent: ${b.problem}` }))];
}

/** Sends the verdict when it is bad and not sent within the hour; fills in the report and returns the lines to print. */
async function notify(report: HealthReport, at: Date, deps: HealthDeps): Promise<string[]> {
  const say = (notified: NonNullable<HealthReport["notified"]>, note: string): string[] => {
    report.notified = notified;
    report.notify_note = note;
    return [note];
  };
  if (report.verdict === "ok") {
    clearSentAlert(deps.stateDir);
    return say("nothing", "nothing to send: the daemon is ok");
  }
  const channels = deps.channels();
  if (channels.length === 0) {
    return say("no_channel", "not sent: no channel is configured (set [health] webhook_url or [pushover] token_file and user_key_file)");
  }
  const decision = decideAlert(deps.stateDir, report.verdict, at);
  if (!decision.send) {
    return say("not_sent", `not sent: ${report.verdict} was sent at ${decision.sent_at}; the next reminder after ${decision.next_at}`);
  }
  const lines: string[] = [];
  let store: Store | undefined;
  try {
    store = await deps.openStore();
    if (!store) lines.push("the audit could not be written: there is no store in the state dir yet; sending anyway");
  } catch (error) {
    lines.push(`the audit could not be written: ${(error as Error).message}; sending anyway`);
  }
  const message = healthMessage(report, deps.host);
  const timeoutMs = parseDuration(deps.config.notifications.timeout, "notifications.timeout");
  try {
    report.deliveries = await deps.send(store, channels, message, timeoutMs);
  } catch (error) {
    // The store opened and then refused the audit (full, locked by a hung daemon, read-only): the alert matters most,
    // and it is sent unaudited only when nothing was sent; once sent, what the channels said stands.
    if (!store || !(error instanceof SendNotRecorded)) throw error;
    if (error.deliveries) {
      lines.push(`the audit could not be written: ${error.message}; the alert was sent`);
      report.deliveries = error.deliveries;
    } else {
      lines.push(`the audit could not be written: ${error.message}; sending anyway`);
      report.deliveries = await deps.send(undefined, channels, message, timeoutMs);
    }
  } finally {
    store?.close();
  }
  lines.push(...report.deliveries.map(deliveryLine));
  if (report.deliveries.some((delivery) => delivery.ok)) {
    recordSentAlert(deps.stateDir, report.verdict, at);
    report.notified = "sent";
    report.notify_note = `sent ${report.verdict} to ${report.deliveries.filter((d) => d.ok).length} of ${report.deliveries.length} channels`;
  } else {
    report.notified = "cannot_send";
    report.notify_note = "not sent: no channel took it; the next run tries again";
    lines.push(report.notify_note);
  }
  return lines;
}

/** `webhook (ntfy.sh): delivered`, `pushover: not delivered: 400 ...`. */
function deliveryLine(delivery: Delivery): string {
  const where = delivery.target && delivery.channel === "webhook" ? `${delivery.channel} (${delivery.target})` : delivery.channel;
  if (delivery.ok) return `${where}: delivered`;
  if (delivery.timed_out) return `${where}: not delivered: no answer within the timeout ([notifications] timeout)`;
  return `${where}: not delivered: ${[delivery.status, delivery.error].filter((part) => part !== null && part !== "").join(" ")}`;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
