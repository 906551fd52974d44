/**
 * The unfinished-effect sweep (DESIGN rule 3: an intent with no outcome is how a crash is
 * found). At start-up and on every tick, before dispatch, each intent without an outcome
 * that was cut short is settled from evidence or reported. Cut short means its writer
 * (pid plus start time, recorded in the intent) is proven gone, or it is older than its
 * kind's `timeoutSeconds` (lib/store/effect-kinds.ts): a writer that still runs, or cannot
 * be checked, is waited for.
 *
 * Settled: an outcome with the same action id, `settled_from: "<evidence>"`, what was
 * found, and `ok` only when the effect took place. Not settled (nothing readable tells):
 * an `effect_unfinished` anomaly naming the kind, the item and what to check, raised once;
 * its intent stays without an outcome. Evidence that cannot be read now (GitHub
 * unreachable) is left for the next pass. Nothing is retried.
 */
import { now, parseTimestamp } from "../clock.ts";
import { liveness } from "../processes.ts";
import { listAnomalies, raiseAnomaly } from "../store/anomalies.ts";
import { abandonedHere, advanceCursor, appendAudit, intentsWithoutOutcome, lastAuditId, writerOf } from "../store/audit.ts";
import type { AuditRecord, LogCursor } from "../store/audit.ts";
import { EFFECT_KINDS, isEffectKind } from "../store/effect-kinds.ts";
import type { EffectEvidence, EffectKind } from "../store/effect-kinds.ts";
import type { Store } from "../store/open.ts";
import { endSession } from "../work-items/sessions.ts";
import type { DaemonEvent } from "../events.ts";
import { tabCloseEvidence } from "../ending/tabs.ts";
import { archiveEvidence } from "../cleanup/record-archive.ts";
import { agentTrustEvidence } from "../dispatch/agent-trust.ts";
import { rememberSettledClaim } from "../work-items/issue-claims.ts";
import { branchEvidence, bundleEvidence, claimEvidence, commentEvidence, fileEvidence, sessionEvidence, worktreeEvidence } from "./unfinished-evidence.ts";
import type { EvidenceDeps } from "./unfinished-evidence.ts";
import type { Finding } from "../store/findings.ts";

/** What the sweep works with: the store, and where each kind's evidence is read. */
export interface SweepDeps extends EvidenceDeps {
  store: Store;
}

/** What one sweep did. */
export interface SweepResult {
  /** Intents given an outcome from evidence. */
  settled: number;
  /** Intents nothing settles, newly raised as `effect_unfinished`. */
  reported: number;
  /** Intents waited for (their writer runs or cannot be checked, and their timeout has not passed) or whose evidence cannot be read now. */
  waiting: number;
  events: DaemonEvent[];
}

/** How long an intent of a kind not in the table is waited for. */
const DEFAULT_TIMEOUT_SECONDS = 300;

/**
 * Settles or reports every intent without an outcome that was cut short. With a cursor (the
 * daemon's, kept from pass to pass) only the intents written since the last pass are read, and
 * those it left waiting; the cursor moves on once the sweep is done. Every other intent behind
 * it has its outcome, or was reported and is the owner's: nothing there can need the sweep again.
 */
export async function sweepUnfinished(deps: SweepDeps, cursor?: LogCursor): Promise<SweepResult> {
  const result: SweepResult = { settled: 0, reported: 0, waiting: 0, events: [] };
  const top = lastAuditId(deps.store);
  const intents = intentsWithoutOutcome(deps.store, cursor);
  // An intent already reported is the owner's now: its evidence is not read again every pass.
  const reported = intents.length ? new Set(listAnomalies(deps.store, { kind: "effect_unfinished" }).map((a) => a.action_id)) : new Set();
  const waiting: number[] = [];
  for (const intent of intents) {
    if (reported.has(intent.actionId)) continue;
    const cut = cutShort(intent);
    if (!cut) {
      result.waiting++;
      waiting.push(intent.id);
      continue;
    }
    const evidence = evidenceOf(intent.kind);
    const finding = intent.simulated ? simulated() : await read(deps, intent, evidence);
    if (finding.settled === "later") {
      result.waiting++;
      waiting.push(intent.id);
      continue;
    }
    if (finding.settled) {
      // One transaction: a crash between the outcome and the owner's notice would lose the notice for good.
      deps.store.transaction(() => {
        settle(deps.store, intent, evidence, finding);
        closeRetiredRow(deps.store, intent, finding);
        if (intent.kind === "claim.create" && finding.ok && typeof finding.facts?.sha === "string") rememberSettledClaim(deps.store, intent, finding.facts.sha);
        result.settled++;
        result.events.push({
          event: "effect_settled", line: `unfinished ${intent.kind} ${about(intent)}: ${cut}; settled from ${EVIDENCE_WORDS[evidence]}: ${finding.found}`,
          kind: intent.kind, action_id: intent.actionId, item: intent.item, ok: finding.ok, found: finding.found,
        });
        if (finding.tellOwner) report(deps.store, intent, finding.tellOwner, result);
      });
      continue;
    }
    report(deps.store, intent, `no evidence settles it: ${finding.check}`, result);
  }
  if (cursor) advanceCursor(cursor, top, waiting);
  return result;
}

/**
 * Why an intent is taken for cut short, or null while it is waited for. A writer that still
 * runs is waited for however long it takes (its outcome will come; a second one could not
 * be written), unless it is this very process and no longer runs the effect. A writer
 * proven gone cuts it short, once its kind's `settleAfterSeconds` have passed; a writer
 * that cannot be checked, once its kind's timeout has.
 */
export function cutShort(intent: AuditRecord, at: Date = now()): string | null {
  const kind: EffectKind | undefined = isEffectKind(intent.kind) ? EFFECT_KINDS[intent.kind] : undefined;
  const started = parseTimestamp(intent.at);
  const age = started ? (at.getTime() - started.getTime()) / 1000 : null;
  const writer = writerOf(intent);
  const alive = writer ? liveness(writer) : "unknown";
  if (alive === "running") return abandonedHere(intent) ? "this process wrote it and could not record its outcome" : null;
  const settleAfter = settleAfterOf(kind, intent);
  if (alive === "exited") return age !== null && age >= settleAfter ? `its writer, pid ${writer!.pid}, is gone` : null;
  const timeout = Math.max(kind?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS, settleAfter);
  return age !== null && age >= timeout ? `no outcome after ${timeout}s` : null;
}

/**
 * How long after its intent an intent whose writer is gone is left unsettled: its kind's
 * `settleAfterSeconds`, or the longer wait the intent names of its own (`settle_after_seconds`:
 * a launch's configured timeout).
 */
function settleAfterOf(kind: EffectKind | undefined, intent: AuditRecord): number {
  const own = intent.body.settle_after_seconds;
  return Math.max(kind?.settleAfterSeconds ?? 0, typeof own === "number" && Number.isFinite(own) ? own : 0);
}

const EVIDENCE_WORDS: Record<EffectEvidence | "simulated", string> = {
  "issue-comments": "the issue's comments",
  worktree: "the worktree's folder and git's list",
  "session-record": "the session's record and the process table",
  file: "the file's paths",
  terminal: "the terminal, by marker",
  branch: "the clone's branch",
  bundle: "the bundle's file",
  archive: "the archive's copies and the worktree",
  "agent-trust": "the agent's config file",
  "claim-ref": "the claim's reference on GitHub",
  none: "nothing",
  simulated: "its simulation",
};

function evidenceOf(kind: string): EffectEvidence {
  return isEffectKind(kind) ? EFFECT_KINDS[kind].evidence : "none";
}

/** A simulated effect wrote nothing outside: it settles as simulated, nothing posted or made. */
function simulated(): Finding {
  return { settled: true, ok: true, found: "simulated, nothing was written", facts: { simulated: true } };
}

async function read(deps: SweepDeps, intent: AuditRecord, evidence: EffectEvidence): Promise<Finding> {
  switch (evidence) {
    case "issue-comments":
      return await commentEvidence(deps, intent);
    case "worktree":
      return await worktreeEvidence(deps, intent);
    case "session-record":
      return sessionEvidence(deps, intent);
    case "file":
      return fileEvidence(intent);
    case "terminal":
      return await tabCloseEvidence(intent);
    case "branch":
      return await branchEvidence(deps, intent);
    case "bundle":
      return bundleEvidence(intent);
    case "archive":
      return archiveEvidence(intent);
    case "agent-trust":
      return agentTrustEvidence(intent);
    case "claim-ref":
      return await claimEvidence(deps, intent);
    default:
      return { settled: false, check: `look at what it names in the audit log (robot-army log --kind ${intent.kind})` };
  }
}

/**
 * A retirement cut short after its worker stopped (settled ok: stopped) closes the worker's
 * row `retired`, as the retirement would have: left open, the exit spool would close it
 * `killed` and the owner would read that a retired worker was killed. A row already closed
 * keeps its first ending.
 */
function closeRetiredRow(store: Store, intent: AuditRecord, finding: Extract<Finding, { settled: true }>): void {
  if (intent.kind !== "session.retire" || !finding.ok || !intent.sessionId) return;
  endSession(store, intent.sessionId, "retired");
}

/** Writes the outcome the evidence gives, with the intent's action id and subjects. */
function settle(store: Store, intent: AuditRecord, evidence: EffectEvidence, finding: Extract<Finding, { settled: true }>): void {
  appendAudit(store, {
    kind: intent.kind, phase: "outcome", actionId: intent.actionId!, simulated: intent.simulated,
    repo: intent.repo ?? undefined, item: intent.item ?? undefined, sessionId: intent.sessionId ?? undefined, episodeId: intent.episodeId ?? undefined,
    body: { ok: finding.ok, settled_from: intent.simulated ? "simulated" : evidence, found: finding.found, ...finding.facts },
  });
}

/** Raises `effect_unfinished` for an intent (once: a later pass finds it raised and says nothing). */
function report(store: Store, intent: AuditRecord, what: string, result: SweepResult): void {
  const kind = isEffectKind(intent.kind) ? EFFECT_KINDS[intent.kind].what : intent.kind;
  const detail = `${intent.kind} (${kind}) ${about(intent)} was cut short: ${what}`;
  const { anomaly, raised } = raiseAnomaly(store, {
    kind: "effect_unfinished", actionId: intent.actionId!, repo: intent.repo ?? undefined, item: intent.item ?? undefined, detail,
  });
  if (!raised) return;
  result.reported++;
  result.events.push({
    event: "effect_unfinished", line: `anomaly ${anomaly.id}: ${detail}; see "robot-army anomalies"`,
    anomaly: anomaly.id, kind: intent.kind, action_id: intent.actionId, item: intent.item,
  });
}

/**
 * What an intent is about, as a line names it: its issue and item, its item, or its action id.
 * @example about(intent) // "for demo/widgets#1 (item 1)"
 */
function about(intent: AuditRecord): string {
  const issue = typeof intent.body.issue === "number" ? `${intent.repo}#${intent.body.issue}` : intent.repo;
  const item = intent.item === null ? null : `item ${intent.item}`;
  if (issue && item) return `for ${issue} (${item})`;
  if (issue || item) return `for ${issue ?? item}`;
  return `(action ${intent.actionId})`;
}
