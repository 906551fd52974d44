/**
 * Adopting a worker whose start a crash cut short: its managed session was launched, but
 * the process that claimed its item ended before the session row was written
 * (lib/dispatch/start-worker.ts). Left alone, nothing would ever watch, retire or count that
 * worker. It is adopted only from evidence, every piece of it proven:
 *
 * - a managed session tagged for the item runs (liveSessionOf answers `true`);
 * - the item's latest claim was followed by a `session.launch` intent, written by the
 *   claimer itself, that names this session's id and holds all its row needs;
 * - that launch has an outcome saying it took place: its own (naming the same session id),
 *   or one the unfinished-effect sweep settled from the session's record (lib/daemon/unfinished.ts,
 *   which runs first in the tick);
 * - no session row of the item has been written since (the launch's attempt is the next);
 * - the session runs in the worktree the launch named, which is the item's, and git lists
 *   it on the branch the launch named.
 *
 * Anything missing, or that cannot be read, is an answer of "not adopted" with why: the
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
import { worktreeRoot } from "../dispatch/worktree-root.ts";
import { sameProcess } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { samePath } from "../same-path.ts";
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
}

/** A worker proven launched for the item's current dispatch: its row, and the comment its start would have made. */
export interface Adoption {
  worker: LaunchedWorker;
  /** The `session.launch` action that launched it. */
  launch: string;
  comment: { purpose: string; body: string } | null;
}

/** The worker to adopt for a `dispatching` item whose claimer is proven gone, or why none is adopted. */
export async function adoptionOf(deps: AdoptDeps, item: WorkItem, claimer: ProcessIdentity, live: LiveAnswer): Promise<Adoption | { not: string }> {
  if (live.live !== true || !live.session) return { not: "no worker of it is proven running" };
  const session = live.session;
  const claim = queryAudit(deps.store, { kind: "state.work_item", item: item.id }).filter((r) => r.body.to === "dispatching").at(-1);
  if (!claim) return { not: "its claim is not on record" };
  const launches = queryAudit(deps.store, { kind: "session.launch", item: item.id, afterId: claim.id });
  const intent = launches.filter((r) => r.phase === "intent").at(-1);
  if (!intent) return { not: "no launch of its current dispatch is on record" };
  const writer = writerOf(intent);
  if (!writer || !sameProcess(writer, claimer)) return { not: "its last launch was not written by the process that claimed it" };
  const body = intent.body;
  if (launchedId(intent) !== session.id) return { not: `its last launch does not name session "${session.name}" (${session.id})` };
  const outcome = launches.find((r) => r.phase === "outcome" && r.actionId === intent.actionId);
  const proven = provenLaunched(outcome, session.id);
  if (proven !== true) return { not: proven };
  if (sessionById(deps.store, session.id)) return { not: `session ${session.id} already has a row` };
  if (body.attempt !== nextAttempt(deps.store, item.id)) return { not: "a session row of it was written since its launch" };
  const facts = launchFacts(body);
  if (typeof facts === "string") return { not: facts };
  if (!samePath(session.cwd, facts.cwd)) return { not: `session "${session.name}" does not run in the worktree its launch named` };
  const repo = deps.config.repos[item.repo];
  if (!repo) return { not: `repository ${item.repo} is not in the config, so its worktree cannot be checked` };
  // The item's worktree: where dispatch makes it, or where its last session worked (which resume and restart reuse).
  const itemWorktrees = [worktreePath(worktreeRoot(deps.config, deps.stateDir), item.repo, item.issue), latestSession(deps.store, item.id)?.worktree];
  if (!itemWorktrees.some((path) => path !== undefined && samePath(facts.cwd, path))) return { not: `its launch named worktree "${facts.cwd}", which is not the item's` };
  let listed;
  try {
    listed = await existingWorktree({ repoPath: repo.path, path: facts.cwd, branch: facts.branch });
  } catch (error) {
    return { not: `git's list of worktrees cannot be read (${(error as Error).message})` };
  }
  if (!listed) return { not: `git does not list "${facts.cwd}" as a worktree on branch ${facts.branch}` };
  // The place as launched, when the launch's own outcome says it; else as its intent knew it.
  const place = outcome?.body.settled_from === undefined ? placeOf(outcome?.body) ?? facts.place : facts.place;
  return {
    worker: { sessionId: session.id, name: facts.name, place, worktree: { path: facts.cwd, branch: facts.branch }, episodeKey: facts.episodeKey, profile: facts.profile },
    launch: intent.actionId!,
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
  return { name: session, cwd, branch, episodeKey: episode_key, profile: profile as WorkerProfile, place, comment: said };
}

/** The launcher, marker and terminal a launch record names, or undefined when it names them not. */
function placeOf(body: Record<string, unknown> | undefined): LaunchPlace | undefined {
  if (!body || typeof body.launcher !== "string" || typeof body.marker !== "string") return undefined;
  const terminal = parseTerminal(JSON.stringify(body.terminal ?? null));
  if (!terminal || terminal.launcher !== body.launcher) return undefined;
  return { launcher: body.launcher as LaunchPlace["launcher"], marker: body.marker, terminal };
}
