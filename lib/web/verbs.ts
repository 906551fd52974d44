/**
 * The owner's verbs as the dashboard's buttons: which there are, which need the owner's
 * confirmation first (those that stop a worker or could lose work: cancel, abandon, reset,
 * restart), and the button a command the owner would run becomes (`robot-army resume 12` ->
 * a button that posts to `/items/12/resume`). The pages draw them (pages/_parts.ts); the
 * actions answer them (actions.ts).
 */

/** A verb on one work item, as `/items/<id>/<verb>` takes it. */
export type ItemVerb = "resume" | "restart" | "retry" | "reset" | "cancel" | "abandon" | "keep" | "unkeep" | "hold" | "unhold" | "send";

/** Every item verb, with its button's label. */
export const ITEM_VERBS: Readonly<Record<ItemVerb, string>> = {
  resume: "resume", restart: "restart…", retry: "retry", reset: "reset…", cancel: "cancel…", abandon: "abandon…",
  keep: "keep", unkeep: "release the keep", hold: "hold", unhold: "unhold", send: "send",
};

/**
 * The verbs that ask first, with what the confirmation says they do: each stops a worker or
 * could lose work, so a button only opens the confirmation, and the action refuses a request
 * without it.
 */
export const CONFIRMED: Readonly<Partial<Record<ItemVerb, string>>> = {
  cancel: "stops its worker's session (SIGTERM, then SIGKILL): what the worker has not written to disk is lost. The item becomes interrupted, its worktree kept as it is",
  abandon: "gives the item up for good: it is never dispatched again. A worker still running is left running (cancel ends it); the worktree and branch are left as they are",
  reset: "removes its worktree and branch, under the guards of every removal: git's refusal over uncommitted work stands, and a branch with commits origin lacks is kept (only reset --force, typed at a terminal, discards them). With both gone the item goes back to the queue",
  restart: "starts a fresh worker in its worktree: the worktree's files stay, but the worker's conversation so far is not carried over (resume carries it on)",
};

/** Whether `text` names an item verb. */
export function isItemVerb(text: string): text is ItemVerb {
  return Object.hasOwn(ITEM_VERBS, text);
}

/** A button a command becomes: posted at once, or opening the confirmation first. */
export type Button = { post: string; label: string } | { confirm: string; label: string };

/**
 * The button for a command the owner would run, or null for one with none (attach, approve,
 * doctor, a command with flags the dashboard does not take).
 * @example buttonFor("robot-army resume 12") // { post: "/items/12/resume", label: "resume" }
 * @example buttonFor("robot-army cancel 12") // { confirm: "/items/12/confirm/cancel", label: "cancel…" }
 */
export function buttonFor(command: string): Button | null {
  const item = /^robot-army (\w+) ([1-9]\d*)$/.exec(command);
  if (item && isItemVerb(item[1]) && item[1] !== "send") {
    const [, verb, id] = item;
    return CONFIRMED[verb] ? { confirm: `/items/${id}/confirm/${verb}`, label: ITEM_VERBS[verb] } : { post: `/items/${id}/${verb}`, label: ITEM_VERBS[verb] };
  }
  const ack = /^robot-army anomalies --acknowledge ([1-9]\d*)$/.exec(command);
  if (ack) return { post: `/anomalies/${ack[1]}/acknowledge`, label: "acknowledge" };
  if (command === "robot-army unpause") return { post: "/dispatch/unpause", label: "unpause" };
  const approve = /^robot-army onboard ([\w.-]+)\/([\w.-]+) --reapprove$/.exec(command);
  if (approve) return { confirm: `/repos/${approve[1]}/${approve[2]}/approve`, label: "review and approve…" };
  const repo = /^robot-army (hold|unhold) --repo ([\w.-]+)\/([\w.-]+)$/.exec(command);
  if (repo) return { post: `/repos/${repo[2]}/${repo[3]}/${repo[1]}`, label: `${repo[1]} repository` };
  return null;
}
