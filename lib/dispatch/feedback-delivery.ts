/**
 * Feedback reaches the worker that wrote the code (lib/intake/feedback.ts gathers it). An
 * interactive worker (tmux, kitty) idle at its prompt has it typed in, as one line that says
 * what came, from whom, and where it is read in full, each piece's words quoted (never a key, a
 * newline or a command: lib/dispatch/verbs/send.ts refuses them); the worker then works on it
 * as on anything its owner types. A worker at work, or waiting on its owner's answer, has it
 * held until it is idle. A worker whose session ended has nothing typed: the item shows it
 * waiting and `resume` gives it (lib/dispatch/feedback-message.ts); a headless worker
 * (`launcher = "process"`) gets it in its next attempt's prompt.
 *
 * Each piece is given once: its row names the `feedback.delivered` effect that carries it as
 * soon as the intent is written and before anything is typed, so a typing a crash cut short is
 * reported (the effect's evidence is none) and never typed again. An item gets at most
 * FEEDBACK_PER_MESSAGE pieces a message and a message at most every FEEDBACK_SPACING_MS, so a
 * long review never floods its terminal: the rest waits for the next turn the worker is idle.
 */
import { now, isoSeconds } from "../clock.ts";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import type { DaemonEvent } from "../events.ts";
import { itemsWithWaitingFeedback, waitingFeedback } from "../intake/feedback.ts";
import type { FeedbackRow } from "../intake/feedback.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "../work-items/queries.ts";
import { latestSession } from "../work-items/sessions.ts";
import { workerIdleness } from "../work-items/idleness.ts";
import { transition } from "../work-items/transition.ts";
import { feedbackMessage, writeFeedbackFile } from "./feedback-message.ts";
import { printable } from "../printable.ts";
import { typeIntoWorker } from "./verbs/send.ts";
import type { SendDeps } from "./verbs/send.ts";

/** The most pieces one message gives. */
export const FEEDBACK_PER_MESSAGE = 5;

/** The least time between two messages to one item's worker. */
export const FEEDBACK_SPACING_MS = 60_000;

/** What delivery works with. */
export interface FeedbackDeliveryDeps extends SendDeps {
  config: Pick<Config, "worker">;
  /** Where the file holding each message's feedback in full is written (the item's prompt folder). */
  stateDir: string;
}

/** What one pass of delivery did. */
export interface FeedbackDelivery {
  /** Messages typed, and the pieces they carried. */
  messages: number;
  pieces: number;
  /** Items whose feedback waits: the worker at work, ended, headless, on another host, or typed to less than a minute ago. */
  held: number;
  events: DaemonEvent[];
}

/** Types the waiting feedback of every item whose interactive worker is idle at its prompt on this host. */
export async function deliverFeedback(deps: FeedbackDeliveryDeps): Promise<FeedbackDelivery> {
  const result: FeedbackDelivery = { messages: 0, pieces: 0, held: 0, events: [] };
  settleFeedbackClaims(deps.store);
  for (const id of itemsWithWaitingFeedback(deps.store)) {
    const item = getItem(deps.store, id);
    if (!item) continue;
    const waiting = waitingFeedback(deps.store, id);
    if (item.state === "done" || item.state === "abandoned") {
      // Finished since it came: shown, given to no one.
      markDelivered(deps.store, waiting, "not delivered", null);
      continue;
    }
    // A failed check or a conflict of a head the worker has since moved on from is old news: shown, never typed.
    const stale = waiting.filter((piece) => superseded(deps.store, piece));
    markDelivered(deps.store, stale, "superseded", null);
    const current = waiting.filter((piece) => !stale.includes(piece));
    if (!current.length) continue;
    const session = latestSession(deps.store, id);
    const why = await heldBecause(deps, session, id);
    if (why) {
      result.held++;
      continue;
    }
    // Only the pieces this pass claims: another process (a resume's launch) may have claimed some since they were read.
    const claim = claimFeedback(deps.store, current.slice(0, FEEDBACK_PER_MESSAGE));
    if (!claim) continue;
    const pieces = current.filter((piece) => claim.ids.includes(piece.id));
    let bound: string | undefined;
    try {
      const file = writeFeedbackFile(deps.stateDir, id, `feedback-${claim.token.split(" ").at(-1)}.md`, pieces);
      const text = feedbackMessage(item, pieces, current.length - pieces.length, file);
      const sent = await typeIntoWorker(deps, id, text, {
        kind: "feedback.delivered",
        body: { feedback: pieces.map((p) => p.id), github_ids: pieces.map((p) => `${p.source}:${p.github_id}`), feedback_claim: claim.token, file },
        // The session judged idle, and no other: one started since is not typed into.
        session: session!.id,
        typing: (actionId) => {
          bound = actionId;
          bindFeedback(deps.store, claim.token, actionId);
        },
      });
      markDelivered(deps.store, pieces, "typed", sent.sessionId);
      if (item.state === "awaiting_review") transition(deps.store, id, "active", { reason: `feedback given to its worker: ${pieces.map((p) => `@${printable(p.author)} ${printable(p.what)}`).join("; ")}` });
      result.messages++;
      result.pieces += pieces.length;
      result.events.push({
        event: "feedback_delivered", line: `item ${id} (${item.repo}#${item.issue}): ${pieces.length} piece${pieces.length === 1 ? "" : "s"} of feedback typed into ${sent.session}`,
        item: id, session: sent.session, feedback: pieces.map((p) => p.id),
      });
    } catch (error) {
      // A refusal (before the typing, or the worker's pane no longer there to type into) typed nothing: the pieces wait for
      // the next pass. Any other failure may have come mid-typing: the pieces stay carried by it, never typed again.
      if (!(error instanceof PreconditionError)) {
        if (bound === undefined) releaseFeedback(deps.store, claim.token);
        throw error;
      }
      releaseFeedback(deps.store, claim.token, bound);
      result.held++;
      result.events.push({ event: "feedback_held", line: `item ${id}: feedback not typed: ${error.message}`, item: id });
    }
  }
  return result;
}

/** Why the item's feedback waits this pass, or null when its worker can be typed into now. */
async function heldBecause(deps: FeedbackDeliveryDeps, session: ReturnType<typeof latestSession>, id: number): Promise<string | null> {
  if (!session || session.ended_at !== null) return "its worker's session has ended: resume gives it";
  if (session.launcher === "process" || session.terminal?.launcher === "process") return "its worker runs headless: its next attempt's prompt gives it";
  if (session.host !== deps.host) return `its worker runs on ${session.host}`;
  const idle = await workerIdleness(session, session.profile ?? deps.config.worker.profile, now());
  if (!idle.idle) return idle.why;
  const last = deps.store.statement("SELECT max(delivered_at) AS at FROM feedback WHERE item = ? AND delivered_how = 'typed'").get(id) as { at: string | null };
  if (last.at !== null && now().getTime() - Date.parse(last.at) < FEEDBACK_SPACING_MS) return "its worker was given feedback less than a minute ago";
  return null;
}

/** How a claim is written before its effect's intent: `pending <time> <uuid>`, the time this process claimed them. */
const PENDING = "pending ";

/** A claim older than this with no intent naming it was cut short before its effect began, by a crash: nothing was given. */
const CLAIM_SETTLE_MS = 60_000;

/**
 * Claims the pieces for an effect about to give them (a typing, or a launch that gives them in
 * its prompt), before its intent is written, and returns the claim the intent names
 * (`feedback_claim`); null when there are none. A claimed piece is not given by anything else.
 */
export function claimFeedback(store: Store, pieces: readonly FeedbackRow[]): { token: string; ids: number[] } | null {
  if (!pieces.length) return null;
  const token = `${PENDING}${isoSeconds(now())} ${globalThis.crypto.randomUUID()}`;
  const ids = store.transaction(() => pieces.flatMap((piece) => (store.statement(
    "UPDATE feedback SET delivery_action = ? WHERE id = ? AND delivered_at IS NULL AND delivery_action IS NULL RETURNING id",
  ).get(token, piece.id) as { id: number } | undefined)?.id ?? []));
  return ids.length ? { token, ids } : null;
}

/** The claimed pieces carried by the effect `actionId`, once its intent is written and before it acts: one cut short never gives them again. */
export function bindFeedback(store: Store, claim: string | null, actionId: string): void {
  if (claim !== null) store.statement("UPDATE feedback SET delivery_action = ? WHERE delivery_action = ?").run(actionId, claim);
}

/** The claimed pieces back to waiting, under their claim or the action it was bound to: nothing was given. */
export function releaseFeedback(store: Store, claim: string | null, bound?: string): void {
  if (claim !== null) store.statement("UPDATE feedback SET delivery_action = NULL WHERE delivery_action IN (?, ?) AND delivered_at IS NULL").run(claim, bound ?? claim);
}

/** Whether a failed check or a conflict is of a head its pull request has moved on from (its GitHub id starts with the head). */
function superseded(store: Store, piece: FeedbackRow): boolean {
  if ((piece.source !== "check" && piece.source !== "conflict") || piece.pull_request === null) return false;
  const pull = store.statement("SELECT head_sha FROM pull_requests WHERE repo = ? AND number = ?").get(piece.repo, piece.pull_request) as { head_sha: string } | undefined;
  return pull !== undefined && !piece.github_id.startsWith(`${pull.head_sha}:`);
}

/**
 * Claims a crash left before their effect was bound, from the log's evidence: an intent that
 * names the claim carries them (whether they reached the worker is then unknown, and they are
 * not given again); none, a minute on, means the effect never began, so nothing was given and
 * they wait again.
 */
function settleFeedbackClaims(store: Store): void {
  const claims = store.statement("SELECT DISTINCT delivery_action AS claim FROM feedback WHERE delivered_at IS NULL AND delivery_action LIKE 'pending %'").all() as Array<{ claim: string }>;
  for (const { claim } of claims) {
    const intent = store.statement(
      "SELECT action_id FROM audit WHERE kind IN ('feedback.delivered', 'session.launch') AND phase = 'intent' AND json_extract(body, '$.feedback_claim') = ? LIMIT 1",
    ).get(claim) as { action_id: string } | undefined;
    if (intent) bindFeedback(store, claim, intent.action_id);
    else if (now().getTime() - Date.parse(claim.split(" ")[1]) > CLAIM_SETTLE_MS) releaseFeedback(store, claim);
  }
}

/** Records how the pieces were given (or that they are given to no one), and to which session. */
export function markDelivered(store: Store, pieces: readonly FeedbackRow[], how: NonNullable<FeedbackRow["delivered_how"]>, session: string | null): void {
  const at = isoSeconds(now());
  store.transaction(() => {
    for (const piece of pieces) {
      store.statement("UPDATE feedback SET delivered_at = ?, delivered_how = ?, delivered_session = ? WHERE id = ? AND delivered_at IS NULL").run(at, how, session, piece.id);
    }
  });
}
