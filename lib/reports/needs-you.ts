/**
 * What needs the owner, computed in one place for `status` (its text and `--json`), the
 * dashboard's first page and the commands notifications suggest: items whose worker asked
 * something, failed, interrupted and awaiting review items, open anomalies, the pause, and
 * ready items held by the owner, held for the owner's approval, or waiting for their
 * repository's trust. Each need says what it is about, why, since when, and the commands
 * that help, in the order to try them (lib/work-items/owner-commands.ts).
 */
import type { Anomaly } from "../store/anomalies.ts";
import { NEEDS_YOU_STATES, anomalyCommands, itemCommands, ownerQuestion } from "../work-items/owner-commands.ts";
import type { NeedsYouState } from "../work-items/owner-commands.ts";
import type { Store } from "../store/open.ts";
import { listItems } from "../work-items/queries.ts";
import { quickExitsOf } from "../work-items/quick-exit.ts";
import type { QuickExit } from "../work-items/quick-exit.ts";
import { latestSession } from "../work-items/sessions.ts";
import { waitingFeedback } from "../intake/feedback.ts";
import type { Pause } from "../dispatch/controls.ts";

/** The fields of an item every list shows. */
export type ItemJson = { id: number; repo: string; issue: number; title: string; created_at: string; simulated: boolean };

/** What a need is about: an item in a state that waits for the owner, an anomaly, the pause, or a ready item held. */
export type NeedKind = NeedsYouState | "anomaly" | "paused" | "held" | "held_for_owner" | "untrusted";

/** How each kind of need is named where it is listed (`status`, the dashboard's cards). */
export const NEED_LABELS: Record<NeedKind, string> = {
  failed: "failed", needs_info: "the worker asks you", interrupted: "interrupted", awaiting_review: "awaiting your review", anomaly: "anomaly",
  paused: "dispatch paused", held: "held by you", held_for_owner: "held for your approval", untrusted: "repository not trusted",
};

/** One thing that needs the owner. */
export interface Need {
  kind: NeedKind;
  /** The item it is about; null for an anomaly of no item (its `anomaly` names it) and the pause. */
  item: ItemJson | null;
  /** Why: the worker's question, the failure, the anomaly's kind and detail, the hold's reason. */
  what: string;
  since: string;
  /** The commands that help, in the order to try them. */
  commands: string[];
  /** The open anomaly it is (its id), else null. */
  anomaly: number | null;
  /** The pull request an item awaiting review waits on, when one is known. */
  review?: { number: number; url: string; merged: boolean };
  /** How the item's latest worker ended when that was within seconds of its start, with its last output lines. */
  quick_exit?: QuickExit;
}

/** Why an item in a state that waits for the owner waits, when its reason does not say. */
const NO_REASON: Record<NeedsYouState, string> = {
  needs_info: "no question was recorded", failed: "no reason was recorded",
  interrupted: "its session ended without an exit record", awaiting_review: "its worker exited 0 with a pull request open",
};

/** What the other needs are read from: the parts of the status report that hold them. */
export interface NeedSources {
  anomalies: readonly Anomaly[];
  paused: Pause | null;
  held: ReadonlyArray<ItemJson & { hold: { reason: string | null; set_at: string }; unhold: string }>;
  held_for_owner: ReadonlyArray<ItemJson & { reason: string }>;
  untrusted: ReadonlyArray<ItemJson & { reason: string; remedy: string }>;
}

/**
 * Everything that needs the owner: the items waiting for them (a worker's question first,
 * then failed, interrupted and awaiting review, each oldest change first), then the open
 * anomalies, the pause, and the ready items held, held for the owner and untrusted.
 * `pullToReview` gives an item awaiting review its pull request.
 */
export function needsOf(
  store: Store,
  sources: NeedSources,
  options: { includeSimulated: boolean; pullToReview: (item: number) => Need["review"] },
): Need[] {
  const needs: Need[] = [...itemNeeds(store, options)];
  for (const a of sources.anomalies) {
    needs.push({ kind: "anomaly", item: null, what: `${a.kind}: ${a.detail}`, since: a.raised_at, commands: anomalyCommands(a), anomaly: a.id });
  }
  if (sources.paused) needs.push({ kind: "paused", item: null, what: sources.paused.reason ?? "paused", since: sources.paused.since, commands: ["robot-army unpause"], anomaly: null });
  for (const h of sources.held) needs.push({ kind: "held", item: itemOf(h), what: h.hold.reason ?? "held", since: h.hold.set_at, commands: [h.unhold], anomaly: null });
  for (const h of sources.held_for_owner) needs.push({ kind: "held_for_owner", item: itemOf(h), what: h.reason, since: h.created_at, commands: [`robot-army show ${h.id}`], anomaly: null });
  for (const u of sources.untrusted) {
    const remedy = remedyOf(u.remedy);
    needs.push({ kind: "untrusted", item: itemOf(u), what: "step" in remedy ? `${u.repo} ${u.reason}: ${remedy.step}` : `${u.repo} ${u.reason}`, since: u.created_at, commands: "command" in remedy ? [remedy.command] : [], anomaly: null });
  }
  return needs;
}

/** The items in a state that waits for the owner, each with its newest worker's quick exit when it ended at once. */
function itemNeeds(store: Store, options: { includeSimulated: boolean; pullToReview: (item: number) => Need["review"] }): Need[] {
  const waiting = NEEDS_YOU_STATES.flatMap((state) =>
    listItems(store, { states: [state], includeSimulated: options.includeSimulated })
      .sort((a, b) => a.updated_at.localeCompare(b.updated_at) || a.id - b.id)
      .map((item): Need => {
        const review = state === "awaiting_review" ? options.pullToReview(item.id) : undefined;
        const what = state === "needs_info" ? ownerQuestion(item)!.question : item.reason ?? NO_REASON[state];
        // Feedback that came while no worker runs waits for a resume, which gives it to the worker first.
        const waiting = state === "awaiting_review" || state === "interrupted" ? waitingFeedback(store, item.id) : [];
        if (waiting.length) {
          const told = `feedback waits for its worker (${waiting.length}): ${waiting.slice(0, 3).map((f) => `@${f.author} ${f.what}`).join("; ")}${waiting.length > 3 ? "; …" : ""}; resume gives it to the worker`;
          const commands = [`robot-army resume ${item.id}`, ...itemCommands(state, item.id).filter((c) => c !== `robot-army resume ${item.id}`)];
          return { kind: state, item: itemOf(item), what: told, since: waiting.at(-1)!.seen_at, commands, anomaly: null, ...(review ? { review } : {}) };
        }
        return { kind: state, item: itemOf(item), what, since: item.updated_at, commands: itemCommands(state, item.id), anomaly: null, ...(review ? { review } : {}) };
      })
  );
  // Its newest worker's quick exit: a worker that ended at once is never reported without what it printed.
  const latest = waiting.flatMap((n) => latestSession(store, n.item!.id) ?? []);
  const quick = quickExitsOf(store, latest);
  return waiting.map((n) => {
    const exit = quick.get(latest.find((session) => session.item === n.item!.id)?.id ?? "");
    return exit ? { ...n, quick_exit: exit } : n;
  });
}

/**
 * What trusts a repository again (lib/dispatch/queue.ts trustRemedy), taken apart: the
 * command to run, unquoted, or the step to take when it is not a command.
 */
export function remedyOf(remedy: string): { command: string } | { step: string } {
  const command = /^"(robot-army [^"]+)"$/.exec(remedy)?.[1];
  return command ? { command } : { step: remedy };
}

/** An item's fields as every list shows them. */
export function itemOf(item: ItemJson): ItemJson {
  return { id: item.id, repo: item.repo, issue: item.issue, title: item.title, created_at: item.created_at, simulated: item.simulated };
}
