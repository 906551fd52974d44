/**
 * What the owner does about an item that waits for them, or an anomaly: the states that wait
 * for the owner, the commands that help with each (in the order to try them), and a waiting
 * worker's question. `status`, the dashboard (lib/reports/needs-you.ts) and the messages of
 * notifications (lib/notify/events.ts) all take them from here.
 */
import type { Anomaly } from "../store/anomalies.ts";
import type { WorkItem } from "./queries.ts";

/** The item states that wait for the owner, in the order they are listed. */
export const NEEDS_YOU_STATES = ["needs_info", "failed", "interrupted", "awaiting_review"] as const;

/** A state that waits for the owner. */
export type NeedsYouState = (typeof NEEDS_YOU_STATES)[number];

/** The commands that help an item in a state that waits for the owner, in the order to try them. */
export function itemCommands(state: NeedsYouState, item: number): string[] {
  switch (state) {
    case "needs_info":
      return [`robot-army attach ${item}`, `robot-army show ${item}`];
    case "failed":
      return [`robot-army show ${item}`, `robot-army retry ${item}`];
    case "interrupted":
      return [`robot-army resume ${item}`, `robot-army restart ${item}`, `robot-army show ${item}`];
    case "awaiting_review":
      return [`robot-army show ${item}`, `robot-army resume ${item}`];
  }
}

/**
 * The commands that help with an anomaly: for a repository's changed agent files the review
 * and the approval, then the acknowledgement, then the item it is about.
 */
export function anomalyCommands(anomaly: Pick<Anomaly, "id" | "kind" | "repo" | "item">): string[] {
  return [
    ...(anomaly.kind === "agent_files_changed" && anomaly.repo !== null ? [`robot-army onboard ${anomaly.repo} --diff`, `robot-army onboard ${anomaly.repo} --reapprove`] : []),
    `robot-army anomalies --acknowledge ${anomaly.id}`,
    ...(anomaly.item !== null ? [`robot-army show ${anomaly.item}`] : []),
  ];
}

/** The prefix the needs_info step gives a worker's question in the item's reason. */
const WORKER_ASKS = "worker asks: ";

/**
 * What a needs_info item's worker asks, since when (the item's move to needs_info), and the
 * command that opens the worker to answer it; null for an item in any other state.
 */
export function ownerQuestion(item: Pick<WorkItem, "id" | "state" | "reason" | "updated_at">): { question: string; asked_at: string; answer: string } | null {
  if (item.state !== "needs_info") return null;
  const reason = item.reason ?? "no question was recorded";
  const question = reason.startsWith(WORKER_ASKS) ? reason.slice(WORKER_ASKS.length) : reason;
  return { question, asked_at: item.updated_at, answer: `robot-army attach ${item.id}` };
}
