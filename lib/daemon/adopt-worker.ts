/**
 * Adopting a worker whose start a crash cut short: its managed session was launched, but
 * the process that claimed its item ended before the session row was written
 * (lib/dispatch/start-worker.ts). Left alone, nothing would ever watch, retire or count that
 * worker. It is adopted only from evidence, every piece of it proven:
 *
 * - the item's latest claim was followed by a `session.launch` intent, written by the
 *   claimer itself (pid plus a start both record: a pid alone is never taken for it), that
 *   names a session id and holds all its row needs;
 * - that session's own record (read by the id the launch names, never another session tagged
 *   for the item) says it runs, by pid plus start time, and is tagged for the item and this store;
 * - no other record in the session root leaves unknown whether a worker of the item runs;
 * - that launch has an outcome saying it took place: its own (naming the same session id),
 *   or one the unfinished-effect sweep settled from the session's record (lib/daemon/unfinished.ts,
 *   which runs first in the tick; until then the claim is left `dispatching`: launchPending);
 * - no session row of the item has been written since (the launch's attempt is the next);
 * - the session runs in the worktree the launch named, which is the item's, and git lists
 *   it on the branch the launch named.
 *
 * Anything missing, or that cannot be read, is an answer of "not adopted" with why (and the
 * launched session, when it runs or cannot be checked, so the owner is told of it): the
 * claim is then settled as before (the item interrupted, the worker named). Nothing is
 * signalled here.
 */
import { existingWorktree, worktreePath } from "../boundaries/worktrees.ts";
import { parseTerminal } from "../boundaries/launchers/types.ts";
import type { LaunchPlace } from "../boundaries/launchers/types.ts";
import { WORKER_PROFILES } from "../config.ts";
import type { Config, WorkerProfile } from "../config.ts";
import type { LiveAnswer } from "../dispatch/verbs/live-session.ts";
import type { LaunchedWorker } from "../dispatch/start-worker.ts";
import { worktreeRoot } from "../work-items/worktree-root.ts";
import { provenSameProcess } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { samePath } from "../same-path.ts";
import { readRecord } from "../sessions/records.ts";
import type { SessionRecord } from "../sessions/records.ts";
import { workerRuns } from "../sessions/state.ts";
import { ITEM_TAG, STORE_TAG } from "../sessions/worker-tags.ts";
import { listAnomalies } from "../store/anomalies.ts";
import { queryAudit, writerOf } from "../store/audit.ts";
import type { AuditRecord } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { latestSession, nextAttempt, sessionById } from "../work-items/sessions.ts";

/** What adoption reads. */
export interface AdoptDeps {
  store: Store;
  config: Config;
  stateDir: string;
  sessionRoot: string;
}

/** A worker proven launched for the item's current dispatch: its row, and the comment its start would have made. */
export interface Adoption {
  worker: LaunchedWorker;
  /** The `session.launch` action that launched it. */
  launch: string;
  /** The audit id of the claim the launch followed: the adoption stands only while it is still the item's latest. */
  claim: number;
  /** The attempt the launch was made for: the adoption stands only while it is still the item's next. */
  attempt: number;
  /** What the item's move to active records beside the session, as its start would have (a resume's earlier session). */
  details: Record<string, unknown>;
  comment: { purpose: string; body: string } | null;
}

/** The session the launch named, when its record says it runs or cannot be checked: named to the owner when it is not adopted. */
export interface LaunchedSession {
  record: SessionRecord;
  runs: true | "unknown";
}

/** Why no worker is adopted, with the session the launch named when it runs or cannot be checked. */
export interface NotAdopted {
  not: string;
  session?: LaunchedSession;
}

/** The item's latest claim: its last move to `dispatching`, on record. */
export function latestClaim(store: Store, item: number): AuditRecord | undefined {
  return queryAudit(store, { kind: "state.work_item", item }).filter((r) => r.body.to === "dispatching").at(-1);
}

/** The item's last `session.launch` intent after its latest claim, with its outcome when it has one. */
function currentLaunch(store: Store, item: number): { claim: AuditRecord; intent: AuditRecord | undefined; outcome: AuditRecord | undefined } | undefined {
  const claim = latestClaim(store, item);
  if (!claim) return undefined;
  const launches = queryAudit(store, { kind: "session.launch", item, afterId: claim.id });
  const intent = launches.filter((r) => r.phase === "intent").at(-1);
  const outcome = intent && launches.find((r) => r.phase === "outcome" && r.actionId === intent.actionId);
  return { claim, intent, outcome };
}

/**
 * The claimer's launch after the item's latest claim while it has no outcome yet, and the
 * unfinished-effect sweep has neither settled nor reported it: its child may still be
 * starting (the kind's settleAfterSeconds), so whether a worker was launched is not known
 * yet and the claim is left as it is. Undefined when there is no such launch.
 */
export function launchPending(store: Store, item: number, claimer: ProcessIdentity): AuditRecord | undefined {
  const launch = currentLaunch(store, item);
  const intent = launch?.intent;
  if (!intent || launch.outcome) return undefined;
  const writer = writerOf(intent);
  if (!writer || !provenSameProcess(writer, claimer)) return undefined;
  // Reported as effect_unfinished: nothing readable will settle it, so the claim is settled as before (the owner is told of the launch).
  if (listAnomalies(store, { kind: "effect_unfinished" }).some((a) => a.action_id === intent.actionId)) return undefined;
  return intent;
}

/** The worker to adopt for a `dispatching` item whose claimer is proven gone, or why none is adopted. */
export async function adoptionOf(deps: AdoptDeps, item: WorkItem, claimer: ProcessIdentity, live: LiveAnswer): Promise<Adoption | NotAdopted> {
  const launch = currentLaunch(deps.store, item.id);
  if (!launch) return { not: "its claim is not on record" };
  const { claim, intent, outcome } = launch;
  if (!intent) return { not: "no launch of its current dispatch is on record" };
  const writer = writerOf(intent);
  if (!writer || !provenSameProcess(writer, claimer)) return { not: "its last launch is not proven written by the process that claimed it" };
  const body = intent.body;
  const id = launchedId(intent);
  if (!id) return { not: "its last launch names no session id" };
  const named = typeof body.session === "string" ? `"${body.session}" (${id})` : id;
  // The session the launch names, by its own record: never another session that happens to be tagged for the item.
  let record: SessionRecord | undefined;
  try {
    record = readRecord(deps.sessionRoot, id);
  } catch (error) {
    return { not: `the record of session ${named} its launch named cannot be read (${(error as Error).message})` };
  }
  if (!record) return { not: `session ${named} its launch named has no record` };
  const runs = workerRuns(deps.sessionRoot, record);
  if (runs === "unknown") return { not: `whether session ${named} its launch named runs cannot be checked`, session: { record, runs } };
  if (!runs) return { not: `session ${named} its launch named no longer runs` };
  const session: LaunchedSession = { record, runs };
  const not = (why: string): NotAdopted => ({ not: why, session });
  const tags = record.tags ?? {};
  if (tags[ITEM_TAG] !== String(item.id) || (tags[STORE_TAG] !== undefined && tags[STORE_TAG] !== deps.store.path)) return not(`session ${named} is not tagged for it`);
  // A record that cannot be read (or a session that cannot be checked) may be another worker of the item's.
  if (live.live === "unknown") return not(`whether another worker runs for it cannot be checked (${live.unreadable ? `session record "${live.unreadable}" cannot be read` : "the session root cannot be read"})`);
  const proven = provenLaunched(outcome, id);
  if (proven !== true) return not(proven);
  if (sessionById(deps.store, id)) return not(`session ${id} already has a row`);
  const attempt = nextAttempt(deps.store, item.id);
  if (body.attempt !== attempt) return not("a session row of it was written since its launch");
  const facts = launchFacts(body);
  if (typeof facts === "string") return not(facts);
  if (!samePath(record.cwd, facts.cwd)) return not(`session ${named} does not run in the worktree its launch named`);
  const repo = deps.config.repos[item.repo];
  if (!repo) return not(`repository ${item.repo} is not in the config, so its worktree cannot be checked`);
  // The item's worktree: where dispatch makes it, or where its last session worked (which resume and restart reuse).
  const itemWorktrees = [worktreePath(worktreeRoot(deps.config, deps.stateDir), item.repo, item.issue), latestSession(deps.store, item.id)?.worktree];
  if (!itemWorktrees.some((path) => path !== undefined && samePath(facts.cwd, path))) return not(`its launch named worktree "${facts.cwd}", which is not the item's`);
  let listed;
  try {
    listed = await existingWorktree({ repoPath: repo.path, path: facts.cwd, branch: facts.branch });
  } catch (error) {
    return not(`git's list of worktrees cannot be read (${(error as Error).message})`);
  }
  if (!listed) return not(`git does not list "${facts.cwd}" as a worktree on branch ${facts.branch}`);
  // The place as launched, when the launch's own outcome says it; else as its intent knew it.
  const place = outcome?.body.settled_from === undefined ? placeOf(outcome?.body) ?? facts.place : facts.place;
  return {
    worker: {
      sessionId: id, name: facts.name, place, worktree: { path: facts.cwd, branch: facts.branch }, episodeKey: facts.episodeKey, profile: facts.profile,
      // When it started, as its record says: not when it was adopted.
      startedAt: record.startedAt,
    },
    launch: intent.actionId!,
    claim: claim.id,
    attempt,
    details: facts.details,
    comment: facts.comment,
  };
}

/** The session id a launch intent names (on the record, or in its body). */
function launchedId(intent: AuditRecord): string | undefined {
  return intent.sessionId ?? (typeof intent.body.session_id === "string" ? intent.body.session_id : undefined);
}

/** Whether a launch's outcome says this session was launched: its own, or one settled from the session's record. */
function provenLaunched(outcome: AuditRecord | undefined, sessionId: string): true | string {
  if (!outcome) return "its launch has no outcome yet";
  if (outcome.body.ok !== true) return "its launch's outcome says it failed";
  if (outcome.body.settled_from !== undefined && outcome.body.settled_from !== "session-record") return `its launch was settled from ${String(outcome.body.settled_from)}`;
  if (outcome.body.session_id !== sessionId) return "its launch's outcome names another session";
  return true;
}

interface LaunchFacts {
  name: string;
  cwd: string;
  branch: string;
  episodeKey: string;
  profile: WorkerProfile;
  place: LaunchPlace;
  comment: { purpose: string; body: string } | null;
  details: Record<string, unknown>;
}

/** What a launch intent holds for its row, or what it lacks. */
function launchFacts(body: Record<string, unknown>): LaunchFacts | string {
  const { session, cwd, branch, episode_key, profile, comment } = body;
  if (typeof session !== "string" || typeof cwd !== "string" || typeof branch !== "string" || typeof episode_key !== "string" || !WORKER_PROFILES.includes(profile as WorkerProfile)) {
    return "its launch intent does not hold its session's name, worktree, branch, episode key and profile";
  }
  const place = placeOf(body);
  if (!place) return "its launch intent does not say where it was launched";
  const told = comment as { purpose?: unknown; body?: unknown } | undefined;
  const said = told && typeof told.purpose === "string" && typeof told.body === "string" ? { purpose: told.purpose, body: told.body } : null;
  const details = typeof body.active_details === "object" && body.active_details !== null && !Array.isArray(body.active_details) ? body.active_details as Record<string, unknown> : {};
  return { name: session, cwd, branch, episodeKey: episode_key, profile: profile as WorkerProfile, place, comment: said, details };
}

/** The launcher, marker and terminal a launch record names, or undefined when it names them not. */
function placeOf(body: Record<string, unknown> | undefined): LaunchPlace | undefined {
  if (!body || typeof body.launcher !== "string" || typeof body.marker !== "string") return undefined;
  const terminal = parseTerminal(JSON.stringify(body.terminal ?? null));
  if (!terminal || terminal.launcher !== body.launcher) return undefined;
  return { launcher: body.launcher as LaunchPlace["launcher"], marker: body.marker, terminal };
}
