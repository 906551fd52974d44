/**
 * What must hold once the daemon has restarted after a crash and run until quiet: no item
 * stuck (`dispatching`, or `active` with no live worker), no issue with two dispatch
 * comments for one session, no item with two live workers, every intent left without an
 * outcome settled or reported as an `effect_unfinished` anomaly, no commit lost, and the
 * store's `PRAGMA integrity_check` ok; and of the effect the crash cut, that the world was
 * as its case states and that recovery concluded what its case states (`settled_from`,
 * `found`, `ok`, the anomaly). Each check returns the problems it found, in words.
 */
import { git } from "../testing/fixtures.ts";
import { integrityProblems } from "../testing/store-integrity.ts";
import { listRecords } from "../sessions/records.ts";
import { workerRuns } from "../sessions/state.ts";
import { queryAudit, writerOf } from "../store/audit.ts";
import type { AuditRecord } from "../store/audit.ts";
import { EFFECT_KINDS } from "../store/effect-kinds.ts";
import type { EffectKindName } from "../store/effect-kinds.ts";
import { openExistingStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import type { Conclusion, CrashPhase } from "./cases.ts";
import type { Lab } from "./lab.ts";
import { worldOf } from "./world.ts";
import type { WorldFact } from "./world.ts";

/** What the crash left, read right after it and before any restart. */
export interface CrashEvidence {
  /** Every local branch but the base, with its tip: the commits that must not be lost. */
  branches: Array<{ branch: string; sha: string }>;
}

/** Reads the evidence the later checks compare against. */
export function crashEvidence(lab: Lab): CrashEvidence {
  const refs = git(lab.clone, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/");
  const branches = refs.split("\n").filter(Boolean).map((line) => {
    const [branch, sha] = line.split(" ");
    return { branch, sha };
  });
  return { branches: branches.filter((b) => b.branch !== "main") };
}

/** The effect a crash cut: the intent the crashed process wrote last of the kind, and what the world shows of it right after. */
export interface CutEffect {
  kind: EffectKindName;
  phase: CrashPhase;
  intent: AuditRecord;
  /** Whether the crashed process wrote the outcome too. */
  outcomeWritten: boolean;
  world: WorldFact | undefined;
}

/** Finds the effect the crashed process (`pid`) cut at `kind:phase`, or says why there is none to check. */
export async function cutEffect(lab: Lab, kind: EffectKindName, phase: CrashPhase, pid: number): Promise<CutEffect | string> {
  const found = await withStoreOf(lab, (store) => {
    if (!store) return undefined;
    const intent = queryAudit(store, { kind }).filter((r) => r.kind === kind && r.phase === "intent" && writerOf(r)?.pid === pid).at(-1);
    return intent && { intent, outcomeWritten: outcomesOf(store, intent.actionId!).length > 0 };
  });
  if (!found) return `the crashed process, pid ${pid}, wrote no ${kind} intent naming it as its writer`;
  if (found.outcomeWritten !== (phase === "outcome")) return `cut at ${kind}:${phase}, yet the crashed process ${found.outcomeWritten ? "wrote" : "did not write"} the outcome`;
  return { kind, phase, ...found, world: await worldOf(lab, kind, found.intent) };
}

/** Whether the first restart pass settled or reported the cut effect (it runs at the crash's clock, so only its writer being gone can). */
export async function settledOrReported(lab: Lab, cut: CutEffect): Promise<boolean> {
  return await withStoreOf(lab, (store) => !!store && (outcomesOf(store, cut.intent.actionId!).length > 0 || reportedAnomaly(store, cut.intent.actionId!)));
}

/**
 * After a restart pass inside the cut kind's settleAfterSeconds: how the cut intent and its item differ from
 * what its case states (neither settled nor reported, and the item in its stated state).
 */
export async function pendingProblems(lab: Lab, cut: CutEffect, pending: NonNullable<Conclusion["pending"]>, waits: number): Promise<string[]> {
  const at = `${cut.kind}:${cut.phase}`;
  const early = `a restart pass at the crash's clock, before ${cut.kind}'s settleAfterSeconds (${waits}s) passed,`;
  return await withStoreOf(lab, (store) => {
    if (!store) return ["the store is gone"];
    const problems: string[] = [];
    const actionId = cut.intent.actionId!;
    const outcome = outcomesOf(store, actionId)[0];
    if (outcome) problems.push(`${early} settled ${at} already (${describeOutcome(outcome)})`);
    if (reportedAnomaly(store, actionId)) problems.push(`${early} reported ${at} already`);
    const item = cut.intent.item;
    if (pending.item !== undefined) {
      const row = item === null ? undefined : store.db.prepare("SELECT state FROM work_items WHERE id = ?").get(item) as { state: string } | undefined;
      if (row?.state !== pending.item) problems.push(`${early} left item ${item} ${row?.state ?? "gone"}, not ${pending.item}`);
    }
    return problems;
  });
}

/** How the world and the recovery of the cut effect differ from what its case states. */
export async function conclusionProblems(lab: Lab, cut: CutEffect, expected: Conclusion): Promise<string[]> {
  const at = `${cut.kind}:${cut.phase}`;
  const problems: string[] = [];
  if (expected.world !== undefined && cut.world !== expected.world) problems.push(`right after the crash at ${at} the world shows "${cut.world}", not "${expected.world}"`);
  await withStoreOf(lab, (store) => {
    if (!store) return void problems.push("the store is gone");
    const actionId = cut.intent.actionId!;
    const outcomes = outcomesOf(store, actionId);
    const reported = reportedAnomaly(store, actionId);
    const settledOutcomes = outcomes.filter((o) => o.body.settled_from !== undefined);
    if (expected.item !== undefined) problems.push(...itemProblems(store, cut, expected.item));
    if (outcomes.length > 1) problems.push(`${at} has ${outcomes.length} outcomes`);
    if (expected.settle === "nothing") {
      if (settledOutcomes.length) problems.push(`${at} had its outcome, yet recovery settled it again (${describeOutcome(settledOutcomes[0])})`);
      if (reported) problems.push(`${at} had its outcome, yet recovery reported it as effect_unfinished`);
      return;
    }
    if (expected.settle === "reported") {
      if (outcomes.length) problems.push(`${at} must be reported, not settled: nothing readable tells what became of it, yet recovery found ${describeOutcome(outcomes[0])}`);
      if (!reported) problems.push(`${at} was not reported: no effect_unfinished anomaly names action ${actionId}`);
      return;
    }
    const outcome = outcomes[0];
    if (!outcome) return void problems.push(`${at} was not settled: its intent has no outcome`);
    const wanted = `settled_from "${EFFECT_KINDS[cut.kind].evidence}", found ${expected.found}, ok ${expected.ok}`;
    const body = outcome.body;
    const foundMatches = typeof body.found === "string" && (typeof expected.found === "string" ? body.found === expected.found : expected.found.test(body.found));
    if (body.settled_from !== EFFECT_KINDS[cut.kind].evidence || body.ok !== expected.ok || !foundMatches) {
      problems.push(`${at} was settled as ${describeOutcome(outcome)}, not ${wanted}`);
    }
    if (reported !== (expected.reported === true)) problems.push(`${at} was ${reported ? "" : "not "}reported as effect_unfinished, and must ${expected.reported ? "" : "not "}be`);
  });
  if (expected.item === "active") problems.push(...await adoptedTold(lab, cut));
  return problems;
}

/** An adopted worker's issue is told where it runs once, as its start would have told it: one comment naming its session. */
async function adoptedTold(lab: Lab, cut: CutEffect): Promise<string[]> {
  const issue = await withStoreOf(lab, (store) => (store?.db.prepare("SELECT issue FROM work_items WHERE id = ?").get(cut.intent.item) as { issue: number } | undefined)?.issue);
  if (issue === undefined || !cut.intent.sessionId) return [`the adopted worker of ${cut.kind}:${cut.phase} has no issue or session id to look for`];
  const comments = (await lab.api("GET", `/repos/demo/widgets/issues/${issue}/comments`)) as Array<{ body: string }>;
  const naming = comments.filter((comment) => comment.body.includes(`- Session id: ${cut.intent.sessionId}`)).length;
  return naming === 1 ? [] : [`issue #${issue} has ${naming} comments naming the adopted session ${cut.intent.sessionId}, not 1`];
}

/**
 * How the cut effect's item differs from the state its case states: `active` with an open row
 * for the session its launch started (adopted), `interrupted` with no row of that session, or
 * `requeued`: back in the queue by a `dispatching -> ready` move (no worker of it ever started),
 * and since then waiting or dispatched anew, never in the session the cut launch named.
 */
function itemProblems(store: Store, cut: CutEffect, state: NonNullable<Conclusion["item"]>): string[] {
  const at = `${cut.kind}:${cut.phase}`;
  const item = cut.intent.item;
  if (item === null) return [`${at} names no item, so its item's state cannot be checked`];
  const row = store.db.prepare("SELECT state FROM work_items WHERE id = ?").get(item) as { state: string } | undefined;
  if (state === "requeued") {
    const moves = queryAudit(store, { kind: "state.work_item", item });
    if (!moves.some((m) => m.body.from === "dispatching" && m.body.to === "ready" && m.body.requeued === true)) {
      return [`after recovery from ${at} item ${item} was not put back in the queue (it is ${row?.state ?? "gone"})`];
    }
    if (!["ready", "dispatching", "active"].includes(row?.state ?? "")) return [`after recovery from ${at} item ${item} is ${row?.state ?? "gone"}, not back in the queue or dispatched anew`];
    const cutSession = cut.intent.sessionId;
    const adopted = cutSession && store.db.prepare("SELECT 1 FROM sessions WHERE item = ? AND id = ?").get(item, cutSession);
    return adopted ? [`after recovery from ${at} item ${item} has a row for the session its cut launch named (${cutSession}), which never started`] : [];
  }
  if (state === "dispatched") {
    if (row?.state !== "active") return [`after recovery from ${at} item ${item} is ${row?.state ?? "gone"}, not active: its worker was not started`];
    const claim = store.db.prepare("SELECT mine, action_id FROM issue_claims WHERE item = ?").get(item) as { mine: number; action_id: string | null } | undefined;
    // The cut effect's own claim, or one moved on from it by a fast-forward (a start after the crash moves a held claim on).
    const made = queryAudit(store, { kind: "claim.create", item }).find((r) => r.actionId === cut.intent.actionId && r.phase === "outcome")?.body.sha;
    const movedOn = queryAudit(store, { kind: "claim.create", item }).some((r) => r.phase === "intent" && r.actionId === claim?.action_id && made !== undefined && r.body.from === made);
    return claim?.mine === 1 && (claim.action_id === cut.intent.actionId || movedOn) ? [] : [`after recovery from ${at} item ${item} works under ${claim ? `claim action ${claim.action_id ?? "(another host's)"}` : "no claim"}, neither the one the cut effect made (${cut.intent.actionId}) nor one moved on from it`];
  }
  if (row?.state !== state) return [`after recovery from ${at} item ${item} is ${row?.state ?? "gone"}, not ${state}`];
  const launched = cut.intent.sessionId;
  if (state !== "active" || !launched) return [];
  const open = store.db.prepare("SELECT 1 FROM sessions WHERE item = ? AND id = ? AND ended_at IS NULL").get(item, launched);
  return open ? [] : [`after recovery from ${at} item ${item} is active, yet no open row records the session its launch started (${launched})`];
}

function outcomesOf(store: Store, actionId: string): AuditRecord[] {
  return queryAudit(store, {}).filter((r) => r.actionId === actionId && r.phase === "outcome");
}

function reportedAnomaly(store: Store, actionId: string): boolean {
  return tableExists(store, "anomalies") && store.db.prepare("SELECT 1 FROM anomalies WHERE kind = 'effect_unfinished' AND action_id = ?").get(actionId) !== undefined;
}

function describeOutcome(outcome: AuditRecord): string {
  const { settled_from, found, ok } = outcome.body;
  return settled_from === undefined ? `its own outcome (ok ${ok})` : `settled_from "${settled_from}", found "${found}", ok ${ok}`;
}

/** What a pass of the daemon leaves that a further pass may change; equal twice in a row means quiet. */
export async function storeSnapshot(lab: Lab): Promise<string> {
  return await withStoreOf(lab, (store) => {
    if (!store) return "no store";
    const rows = (sql: string) => store.db.prepare(sql).all().map((row) => ({ ...row }));
    return JSON.stringify({
      items: rows("SELECT id, state FROM work_items ORDER BY id"),
      sessions: rows("SELECT id, end_reason FROM sessions ORDER BY id"),
      effects: rows("SELECT count(*) AS n FROM audit WHERE phase != 'fact' OR kind = 'state.work_item'"),
      anomalies: tableExists(store, "anomalies") ? rows("SELECT count(*) AS n FROM anomalies") : null,
    });
  });
}

/** The anomalies the owner is shown (`robot-army anomalies --json`'s list), or why they cannot be read. */
export type AnomalyList = unknown[] | string;

/** Every check, after the restart; `anomalies` is read only when an intent has no outcome. */
export async function recoveryProblems(lab: Lab, evidence: CrashEvidence, anomalies: AnomalyList | (() => Promise<AnomalyList>)): Promise<string[]> {
  const problems: string[] = [];
  let open: OpenIntent[] = [];
  await withStoreOf(lab, (store) => {
    if (!store) return;
    problems.push(...integrityProblems(store), ...stuckItems(lab, store), ...twoLiveWorkers(lab));
    open = intentsLeftOpen(store);
  });
  if (open.length) problems.push(...unreported(open, typeof anomalies === "function" ? await anomalies() : anomalies));
  problems.push(...await duplicateDispatchComments(lab), ...lostCommits(lab, evidence));
  return problems;
}

/** Items left `dispatching`, or `active` with no session row whose worker still runs. */
function stuckItems(lab: Lab, store: Store): string[] {
  const problems: string[] = [];
  const items = store.db.prepare("SELECT id, state FROM work_items WHERE state IN ('dispatching', 'active')").all() as Array<{ id: number; state: string }>;
  for (const item of items) {
    if (item.state === "dispatching") {
      problems.push(`item ${item.id} is stuck dispatching`);
      continue;
    }
    const open = store.db.prepare("SELECT id FROM sessions WHERE item = ? AND ended_at IS NULL").all(item.id) as Array<{ id: string }>;
    const live = open.filter((row) => liveWorkers(lab).some((record) => record.id === row.id));
    if (live.length === 0) problems.push(`item ${item.id} is active with no live worker (open session rows: ${open.map((r) => r.id).join(", ") || "none"})`);
  }
  return problems;
}

/** Items with more than one worker running (managed sessions tagged with the item whose processes still run). */
function twoLiveWorkers(lab: Lab): string[] {
  const byItem = new Map<string, string[]>();
  for (const record of liveWorkers(lab)) {
    const item = record.tags.ra_item!;
    byItem.set(item, [...(byItem.get(item) ?? []), record.name]);
  }
  return [...byItem].filter(([, names]) => names.length > 1).map(([item, names]) => `item ${item} has ${names.length} live workers: ${names.join(", ")}`);
}

function liveWorkers(lab: Lab) {
  return listRecords(lab.sessionRoot).filter((record) => record.tags.ra_item !== undefined && workerRuns(lab.sessionRoot, record) !== false);
}

interface OpenIntent {
  action_id: string;
  kind: string;
}

/** Intents with no outcome: not settled. */
function intentsLeftOpen(store: Store): OpenIntent[] {
  return store.db.prepare(`SELECT action_id, kind FROM audit AS i WHERE phase = 'intent' AND NOT EXISTS
    (SELECT 1 FROM audit AS o WHERE o.action_id = i.action_id AND o.phase = 'outcome') ORDER BY id`).all() as unknown as OpenIntent[];
}

/** Open intents that no `effect_unfinished` anomaly names by its action id. */
function unreported(open: OpenIntent[], anomalies: AnomalyList): string[] {
  if (typeof anomalies === "string") return open.map((i) => `intent ${i.kind} ${i.action_id} has no outcome, and the anomalies cannot be read: ${anomalies}`);
  const reported = new Set(anomalies.flatMap((a) => {
    const anomaly = a as { kind?: unknown; action_id?: unknown };
    return anomaly.kind === "effect_unfinished" && typeof anomaly.action_id === "string" ? [anomaly.action_id] : [];
  }));
  return open.filter((i) => !reported.has(i.action_id)).map((i) => `intent ${i.kind} ${i.action_id} is neither settled (no outcome) nor reported (no effect_unfinished anomaly)`);
}

/** Issues on the forge with two "dispatched" comments naming one session id. */
async function duplicateDispatchComments(lab: Lab): Promise<string[]> {
  const problems: string[] = [];
  const issues = (await lab.api("GET", "/repos/demo/widgets/issues?state=all")) as Array<{ number: number }>;
  for (const issue of issues) {
    const comments = (await lab.api("GET", `/repos/demo/widgets/issues/${issue.number}/comments`)) as Array<{ body: string }>;
    const seen = new Map<string, number>();
    for (const comment of comments) {
      const session = /^- Session id: (\S+)$/m.exec(comment.body)?.[1];
      if (session) seen.set(session, (seen.get(session) ?? 0) + 1);
    }
    for (const [session, count] of seen) if (count > 1) problems.push(`issue #${issue.number} has ${count} comments for session ${session}`);
  }
  return problems;
}

/** Branch tips from before the restart that are no longer reachable from their branch, here or on origin. */
function lostCommits(lab: Lab, evidence: CrashEvidence): string[] {
  const bare = git(lab.clone, "remote", "get-url", "origin");
  return evidence.branches.filter(({ branch, sha }) => !reachable(lab.clone, branch, sha) && !reachable(bare, branch, sha))
    .map(({ branch, sha }) => `commit ${sha.slice(0, 12)} of branch ${branch} is lost (reachable neither from the branch nor from origin's)`);
}

function reachable(repo: string, branch: string, sha: string): boolean {
  try {
    git(repo, "merge-base", "--is-ancestor", sha, `refs/heads/${branch}`);
    return true;
  } catch {
    return false;
  }
}

function tableExists(store: Store, name: string): boolean {
  return store.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

async function withStoreOf<T>(lab: Lab, fn: (store: Store | undefined) => T): Promise<T> {
  const store = await openExistingStore(lab.stateDir);
  try {
    return fn(store);
  } finally {
    store?.close();
  }
}
