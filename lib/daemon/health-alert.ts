/**
 * What `health --notify` tells the owner, and how often: the alert for a bad verdict (one
 * message, every channel: DESIGN rule 5, identifiers and state names and what to run), sent
 * again for an unchanged verdict at most once an hour. `<state dir>/health-alert.json`
 * remembers the last verdict sent and when; an ok verdict clears it.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic.ts";
import { isoSeconds, parseTimestamp } from "../clock.ts";
import type { Message } from "../boundaries/notifier/message.ts";
import type { Health, HealthVerdict } from "./health.ts";

/** How long an unchanged bad verdict waits before it is sent again. */
export const REMIND_AFTER_MS = 60 * 60 * 1000;

/** What the alert file holds: the last verdict sent and when. */
export interface SentAlert {
  verdict: HealthVerdict;
  sent_at: string;
}

/** Whether to send now: `send`, or `hold` with when the same verdict went and when the next reminder is due. */
export type AlertDecision = { send: true } | { send: false; sent_at: string; next_at: string };

/** The alert file of a state dir. */
export function healthAlertPath(stateDir: string): string {
  return join(stateDir, "health-alert.json");
}

/**
 * Whether an alert for `verdict` goes out at `now`: always for a verdict other than the
 * last one sent, and for the same one an hour after it was sent. A file that cannot be
 * read counts as none: the alert matters more than a duplicate.
 */
export function decideAlert(stateDir: string, verdict: HealthVerdict, now: Date): AlertDecision {
  const last = readSentAlert(stateDir);
  if (!last || last.verdict !== verdict) return { send: true };
  const sent = parseTimestamp(last.sent_at)!;
  const next = new Date(sent.getTime() + REMIND_AFTER_MS);
  if (now.getTime() >= next.getTime()) return { send: true };
  return { send: false, sent_at: last.sent_at, next_at: isoSeconds(next) };
}

/** Remembers that `verdict` was sent at `now` (0600, written whole). */
export function recordSentAlert(stateDir: string, verdict: HealthVerdict, now: Date): void {
  const alert: SentAlert = { verdict, sent_at: isoSeconds(now) };
  writeFileAtomic(healthAlertPath(stateDir), JSON.stringify(alert, null, 2) + "\n", { private: true });
}

/** Forgets the last alert (the daemon is ok again), so the next bad verdict goes out at once. */
export function clearSentAlert(stateDir: string): void {
  rmSync(healthAlertPath(stateDir), { force: true });
}

/** The last alert sent, or undefined when there is none or its file cannot be read. */
export function readSentAlert(stateDir: string): SentAlert | undefined {
  try {
    const alert = JSON.parse(readFileSync(healthAlertPath(stateDir), "utf8")) as SentAlert;
    return typeof alert?.verdict === "string" && parseTimestamp(alert.sent_at) ? alert : undefined;
  } catch {
    return undefined;
  }
}

/** The alert for a bad verdict: urgent, its verdict in the title and in `about`, the detail and what to run in its text. */
export function healthMessage(health: Health, host: string): Message {
  const commands = health.verdict === "STARTING" || health.verdict === "UNREADABLE"
    ? ["robot-army status", "robot-army health"]
    : ["robot-army log", "robot-army run"];
  return {
    kind: "health",
    title: `robot-army on ${host}: daemon ${health.verdict}`,
    text: [`${health.verdict} on ${host}: ${health.detail}`, `Run on ${host}: ${commands.join("; ")}`].join("\n"),
    urgency: "high",
    about: { host, verdict: health.verdict },
    commands,
  };
}
