/**
 * What must hold once a soak (scripts/dev/bench-soak.ts) has ended: every demo issue's item
 * done; every worker retired, or kept (and stopped by the soak at its end); every done
 * item's worktree reclaimed or its keeping recorded (`cleanups`), with nothing else in the
 * worktree root; no comment said twice on an issue and no notification received twice; no
 * audit intent without an outcome left unreported; every write the owner's CLI made in the
 * audit log exactly once; and `PRAGMA integrity_check` ok. Each check gives a figure, and
 * a line for each thing broken. For tests and benchmarks only.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { integrityProblems } from "./store-integrity.ts";
import { latestCleanup, worktreeGone } from "../cleanup/records.ts";
import { rehearsalProgress } from "../daemon/rehearsal-end.ts";
import { keptSession } from "../ending/keeps.ts";
import { printable } from "../printable.ts";
import { intentsWithoutOutcome, queryAudit } from "../store/audit.ts";
import { listAnomalies } from "../store/anomalies.ts";
import { openExistingStore } from "../store/open.ts";
import { listItems } from "../work-items/queries.ts";
import type { Store } from "../store/open.ts";
import type { ReceivedRequest } from "./notify-receivers.ts";

/** What the checks read: the store, the forge, what the receiver got and what the CLI wrote. */
export interface SoakEnd {
  stateDir: string;
  worktreeRoot: string;
  forgeUrl: string;
  token: string;
  repo: string;
  issues: readonly number[];
  /** The sessions the soak found kept when every issue was finished, and stopped. */
  keptSessions: readonly string[];
  /** What the loopback webhook received. */
  webhook: readonly ReceivedRequest[];
  /** Writes the CLI made that changed something, by the audit record each must have written (lib/testing/soak.ts `CliFigures.writes`). */
  writes: Readonly<Record<string, number>>;
}

/** Each invariant's figure, in words, and every one broken. */
export interface SoakVerdict {
  figures: string[];
  broken: string[];
}

/** Runs every check of the soak's end; never throws for what it finds. */
export async function checkSoakEnd(end: SoakEnd): Promise<SoakVerdict> {
  const verdict: SoakVerdict = { figures: [], broken: [] };
  const store = await openExistingStore(end.stateDir);
  if (!store) return { figures: [], broken: [`no store in ${end.stateDir}`] };
  try {
    checkIssues(store, end, verdict);
    checkWorktrees(store, end, verdict);
    checkIntents(store, verdict);
    checkWrites(store, end, verdict);
    const integrity = integrityProblems(store);
    verdict.figures.push(`integrity_check: ${integrity.length ? integrity.join("; ") : "ok"}`);
    verdict.broken.push(...integrity);
    checkNotifications(store, end, verdict);
  } finally {
    store.close();
  }
  await checkComments(end, verdict);
  return verdict;
}

/** One host of a soak of several (scripts/dev/bench-soak-hosts.ts): its name, state and worktree root. */
export interface SoakHost {
  host: string;
  stateDir: string;
  worktreeRoot: string;
}

/**
 * What must hold once a soak of several hosts has ended: on each host, every issue's item
 * done, every worker it started retired, every worktree it made reclaimed, no intent left
 * unreported and the store sound; across them, every issue dispatched exactly once (one
 * host's sessions, and never two dispatch comments), no claim left on the forge, and no comment
 * said more often than there are hosts (each host tells the issue of its own item once).
 */
export async function checkHostsEnd(end: { hosts: readonly SoakHost[]; forgeUrl: string; token: string; repo: string; issues: readonly number[] }): Promise<SoakVerdict & { workedBy: Map<number, string[]> }> {
  const verdict: SoakVerdict = { figures: [], broken: [] };
  const workedBy = new Map<number, string[]>(end.issues.map((issue) => [issue, []]));
  for (const host of end.hosts) {
    const store = await openExistingStore(host.stateDir);
    if (!store) {
      verdict.broken.push(`no store in ${host.stateDir}`);
      continue;
    }
    const own: SoakVerdict = { figures: [], broken: [] };
    try {
      const hostEnd = { ...end, stateDir: host.stateDir, worktreeRoot: host.worktreeRoot, keptSessions: [], webhook: [], writes: {} };
      checkIssues(store, hostEnd, own);
      checkWorktrees(store, hostEnd, own);
      checkIntents(store, own);
      own.broken.push(...integrityProblems(store));
      for (const issue of rehearsalProgress(store, end.repo, end.issues, keptSession).issues) {
        if (issue.sessions.length) workedBy.get(issue.issue)!.push(host.host);
      }
    } finally {
      store.close();
    }
    verdict.figures.push(...own.figures.map((f) => `${host.host}: ${f}`));
    verdict.broken.push(...own.broken.map((b) => `${host.host}: ${b}`));
  }
  const twice = [...workedBy].filter(([, hosts]) => hosts.length !== 1);
  verdict.figures.push(`issues worked by exactly one host: ${end.issues.length - twice.length} of ${end.issues.length} (${end.hosts.map((h) => `${h.host} ${[...workedBy.values()].filter((w) => w.length === 1 && w[0] === h.host).length}`).join(", ")})`);
  for (const [issue, hosts] of twice) verdict.broken.push(`${end.repo}#${issue} was worked by ${hosts.length ? hosts.join(" and ") : "no host"}`);
  let dispatched = 0;
  for (const issue of end.issues) {
    const bodies = await issueComments(end, issue, verdict);
    if (!bodies) continue;
    const dispatches = bodies.filter((b) => b.startsWith("robot-army dispatched")).length;
    dispatched += dispatches;
    // None when a kill cut its dispatch short before the comment and the issue closed before the daemon came back.
    if (dispatches > 1) verdict.broken.push(`${end.repo}#${issue} was told of ${dispatches} dispatches`);
    for (const [body, n] of counted(bodies)) {
      if (n > end.hosts.length) verdict.broken.push(`${end.repo}#${issue} has ${n} comments saying ${JSON.stringify(body.split("\n")[0])}`);
    }
  }
  verdict.figures.push(`dispatch comments on the forge: ${dispatched} for ${end.issues.length} issues`);
  const response = await fetch(`${end.forgeUrl}/repos/${end.repo}/git/matching-refs/robot-army/claims/`, { headers: { authorization: `token ${end.token}` } });
  const claims = (await response.json()) as Array<{ ref: string }>;
  verdict.figures.push(`claims left on the forge: ${claims.length}`);
  for (const claim of claims) verdict.broken.push(`the claim ${claim.ref} was never released`);
  return { ...verdict, workedBy };
}

/** The bodies of an issue's comments on the forge without their action markers, or null (said in `verdict`) when they cannot be read. */
async function issueComments(end: { forgeUrl: string; token: string; repo: string }, issue: number, verdict: SoakVerdict): Promise<string[] | null> {
  try {
    const response = await fetch(`${end.forgeUrl}/repos/${end.repo}/issues/${issue}/comments?per_page=100`, { headers: { authorization: `token ${end.token}` } });
    return ((await response.json()) as Array<{ body: string }>).map((c) => c.body.replace(ACTION_MARKER, "").trimEnd());
  } catch (error) {
    verdict.broken.push(`the comments of ${end.repo}#${issue} could not be read: ${(error as Error).message}`);
    return null;
  }
}

/** Every issue's item done, and every one of its workers retired or kept. */
function checkIssues(store: Store, end: SoakEnd, verdict: SoakVerdict): void {
  const progress = rehearsalProgress(store, end.repo, end.issues, keptSession);
  const sessions = progress.issues.flatMap((i) => i.sessions);
  const retired = sessions.filter((s) => s.end_reason === "retired");
  const kept = sessions.filter((s) => end.keptSessions.includes(s.id));
  verdict.figures.push(`issues done: ${progress.done} of ${end.issues.length}`);
  verdict.figures.push(`workers: ${sessions.length} sessions, ${retired.length} retired, ${kept.length} kept (stopped at the end)`);
  for (const issue of progress.issues) {
    if (issue.item?.state !== "done") verdict.broken.push(`${end.repo}#${issue.issue} is not done: ${issue.item ? `item ${issue.item.id} is ${issue.item.state}` : "no work item"}`);
  }
  for (const session of sessions) {
    if (session.end_reason === "retired" || end.keptSessions.includes(session.id)) continue;
    verdict.broken.push(`worker ${session.name} of item ${session.item} was neither retired nor kept: ${session.ended_at ? `it ended ${session.end_reason}` : "its row is open"}`);
  }
}

/** Every done item has a cleanup decision (not `skipped`) that matches the disk, and the worktree root holds nothing else. */
function checkWorktrees(store: Store, end: SoakEnd, verdict: SoakVerdict): void {
  const progress = rehearsalProgress(store, end.repo, end.issues, keptSession);
  let reclaimed = 0;
  let recorded = 0;
  const claimed = new Set<string>();
  for (const { item, sessions } of progress.issues) {
    // Nothing to reclaim for an item no worker of which ever started (another host worked its issue).
    if (item?.state !== "done" || sessions.length === 0) continue;
    const cleanup = latestCleanup(store, item.id);
    if (!cleanup) {
      verdict.broken.push(`item ${item.id}'s worktree has no cleanup decision`);
      continue;
    }
    if (cleanup.state === "skipped") verdict.broken.push(`item ${item.id}'s cleanup is still skipped: ${printable(cleanup.reason)}`);
    if (worktreeGone(cleanup)) {
      reclaimed++;
      if (existsSync(cleanup.worktree_path)) verdict.broken.push(`item ${item.id}'s worktree is recorded ${cleanup.worktree}, yet ${cleanup.worktree_path} is there`);
    } else {
      recorded++;
      claimed.add(cleanup.worktree_path);
    }
  }
  const repoRoot = join(end.worktreeRoot, end.repo);
  const left = existsSync(repoRoot) ? listDirs(repoRoot).filter((path) => !claimed.has(path)) : [];
  verdict.figures.push(`worktrees: ${reclaimed} reclaimed, ${recorded} kept and recorded, ${left.length} unaccounted for`);
  for (const path of left) verdict.broken.push(`worktree ${path} is on disk with no cleanup record keeping it`);
}

/**
 * What became of the dispatches the kills cut short: back in the queue by themselves (no
 * worker of theirs ever started), failed after three of those in a row, interrupted for the
 * owner (a worker may have started), or active with the launched worker adopted.
 */
export interface CutDispatches {
  requeued: number;
  failed: number;
  interrupted: number;
  adopted: number;
}

/** The cut dispatches the store's audit log records. */
export function cutDispatches(store: Store): CutDispatches {
  const moves = queryAudit(store, { kind: "state.work_item" }).filter((r) => r.body.from === "dispatching");
  const cut = (r: (typeof moves)[number]) => typeof r.body.reason === "string" && r.body.reason.startsWith("its dispatch was cut short");
  return {
    requeued: moves.filter((r) => r.body.to === "ready" && r.body.requeued === true).length,
    failed: moves.filter((r) => r.body.to === "failed" && cut(r)).length,
    interrupted: moves.filter((r) => r.body.to === "interrupted" && cut(r)).length,
    adopted: moves.filter((r) => r.body.to === "active" && r.body.adopted === true).length,
  };
}

/** `4 back in the queue, 0 failed, 1 interrupted for the owner, 2 workers adopted`. */
export function describeCuts(cuts: CutDispatches): string {
  return `${cuts.requeued} back in the queue by themselves, ${cuts.failed} failed, ${cuts.interrupted} interrupted for the owner, ${cuts.adopted} workers adopted`;
}

/** Every intent without an outcome is named by an `effect_unfinished` anomaly. */
function checkIntents(store: Store, verdict: SoakVerdict): void {
  const open = intentsWithoutOutcome(store);
  const unreported = unreportedIntents(store);
  const outcomes = queryAudit(store, {}).filter((r) => r.phase === "outcome");
  const settled = outcomes.filter((r) => r.body.settled_from !== undefined).length;
  verdict.figures.push(`intents without an outcome: ${open.length}, ${open.length - unreported.length} reported; ${settled} settled from evidence after a kill`);
  verdict.figures.push(`dispatches cut short by a kill: ${describeCuts(cutDispatches(store))}`);
  for (const intent of unreported) verdict.broken.push(`intent ${intent.kind} ${intent.actionId} (record ${intent.id}) has no outcome and no effect_unfinished anomaly`);
}

/**
 * Intents with neither an outcome nor an `effect_unfinished` anomaly: while a daemon runs,
 * ones a kill cut short that are still within their kind's settle window (a comment GitHub
 * may not list yet); at the end, none may be left.
 */
export function unreportedIntents(store: Store): ReturnType<typeof intentsWithoutOutcome> {
  const reported = new Set(listAnomalies(store, { kind: "effect_unfinished" }).map((a) => a.action_id));
  return intentsWithoutOutcome(store).filter((intent) => !reported.has(intent.actionId));
}

/** Every write the CLI made that changed something is in the audit log exactly once. */
function checkWrites(store: Store, end: SoakEnd, verdict: SoakVerdict): void {
  let total = 0;
  for (const [write, made] of Object.entries(end.writes)) {
    const [kind, item] = write.split(":");
    const records = queryAudit(store, { kind, item: item === undefined ? undefined : Number(item) }).filter((r) => r.kind === kind).length;
    total += made;
    if (records !== made) verdict.broken.push(`the CLI made ${made} ${write} writes, and the audit log holds ${records}`);
  }
  verdict.figures.push(`CLI writes: ${total}, each in the audit log once${verdict.broken.some((b) => b.startsWith("the CLI made")) ? " (BUT NOT ALL)" : ""}`);
}

/**
 * No issue has one comment twice: two comments that say the same once their action marker
 * (which differs for every posting) is set aside are one transition told twice.
 */
async function checkComments(end: SoakEnd, verdict: SoakVerdict): Promise<void> {
  let count = 0;
  for (const issue of end.issues) {
    const bodies = await issueComments(end, issue, verdict);
    if (!bodies) continue;
    count += bodies.length;
    for (const [body, n] of counted(bodies)) {
      verdict.broken.push(`${end.repo}#${issue} has ${n} comments saying ${JSON.stringify(body.split("\n")[0])}`);
    }
  }
  verdict.figures.push(`comments on the forge: ${count}, ${verdict.broken.filter((b) => b.includes(" comments saying ")).length} said twice`);
}

/**
 * Each item's completion told, and its dispatch when it became active (an item whose issue
 * closed while its cut-short dispatch waited went straight to done), and no notification
 * arrived twice: each transition is told once. A send a kill cut short is never sent again
 * (a channel cannot be asked whether it arrived): it counts as told when it arrived, and as
 * never lost when the owner is told of it by its effect_unfinished anomaly.
 */
function checkNotifications(store: Store, end: SoakEnd, verdict: SoakVerdict): void {
  const twice = counted(end.webhook.map((r) => JSON.stringify(r.body)));
  verdict.figures.push(`notifications received: ${end.webhook.length}, ${twice.length} received twice`);
  for (const [body, n] of twice) verdict.broken.push(`the webhook received ${n} times: ${body.slice(0, 300)}`);
  const told = end.webhook.map((r) => r.body as { kind?: string; item?: number });
  for (const item of listItems(store, { repo: end.repo })) {
    const wentActive = queryAudit(store, { kind: "state.work_item", item: item.id }).some((r) => r.body.to === "active");
    for (const kind of wentActive ? ["dispatch", "completion"] : ["completion"]) {
      if (told.some((body) => body.kind === kind && body.item === item.id)) continue;
      if (cutSendReported(store, item.id, kind)) continue;
      verdict.broken.push(`no ${kind} notification of item ${item.id} (${end.repo}#${item.issue}) arrived, and no send of it cut short was reported`);
    }
  }
}

/** Whether a send of the item's `kind` notification has no outcome and is named by an effect_unfinished anomaly. */
function cutSendReported(store: Store, item: number, kind: string): boolean {
  const sends = queryAudit(store, { kind: "notification.send", item });
  const reported = new Set(listAnomalies(store, { kind: "effect_unfinished" }).map((a) => a.action_id));
  return sends.some((intent) => intent.phase === "intent" && intent.body.kind === kind && reported.has(intent.actionId ?? "") &&
    !sends.some((r) => r.phase === "outcome" && r.actionId === intent.actionId));
}

/** The marker every comment robot-army posts ends with (lib/effects.ts commentMarker). */
const ACTION_MARKER = /<!-- robot-army:action [^ ]+ -->/;

/** The values seen more than once, with how many times. */
function counted(values: string[]): Array<[string, number]> {
  const seen = new Map<string, number>();
  for (const value of values) seen.set(value, (seen.get(value) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1);
}

function listDirs(root: string): string[] {
  return readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(root, e.name));
}
