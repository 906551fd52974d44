/**
 * Starting a worker for a claimed item (`dispatching`): the one path dispatch, `resume`
 * and `restart` share. It readies the worktree (dispatch makes one, a relaunch has it),
 * writes the prompt file when the worker is given one (with the repository's instruction files
 * as committed where the worktree's branch left the base branch), names the session (sessionName,
 * moved past names on record), chooses the session's id and the attempt's episode key
 * before the launch so the worker's profile can hand them to the agent (lib/dispatch/profiles.ts:
 * Claude Code's --session-id and hooks), puts robot-army on the worker's PATH, launches the
 * worker inside a managed session tagged `ra_item` (audited `session.launch`: its intent names
 * the session id and holds all the row needs, the comment to come and what the item's move to
 * active records among it, and the launcher's timeout, which a launch cut short is waited for;
 * its outcome where the launch put it), then records the session and moves the item to `active` in one
 * transaction (recordWorker, which settling a claim cut short after the launch also writes
 * with: lib/daemon/adopt-worker.ts), and tells the issue where it runs. Any failure after the claim makes the item `failed`:
 * the reason goes to the item and the audit record, and the issue hears, once, only that a
 * session could not be started (DESIGN rule 4). A worker launched but not recorded is
 * stopped first; if it cannot be proven stopped, the issue is told nothing.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { LaunchPlace, LaunchSpec } from "../boundaries/launchers/types.ts";
import { isoSeconds, now } from "../clock.ts";
import { commentOnIssue } from "../effects.ts";
import { readRecord } from "../sessions/records.ts";
import { stopSession } from "../sessions/stop.ts";
import { RobotArmyError } from "../errors.ts";
import { auditEffect } from "../store/audit.ts";
import type { WorkItem } from "../work-items/queries.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import type { WorkerProfile } from "../config.ts";
import { PATH_FIRST_VARIABLE } from "../sessions/holder.ts";
import { episodeKey, nextAttempt, recordSession } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";
import { ITEM_TAG, workerTags } from "./capacity.ts";
import { failureComment } from "./comments.ts";
import type { SessionPlace } from "./comments.ts";
import type { DispatchDeps } from "./dispatch-deps.ts";
import { editorsOf } from "../intake/issue-trust.ts";
import { composePrompt, writePromptFile } from "./prompt.ts";
import { writeFeedbackFile } from "./feedback-message.ts";
import { readRepoInstructions, startingCommit } from "./repo-instructions.ts";
import type { RepoInstructions } from "./repo-instructions.ts";
import { freeSessionName } from "./session-name.ts";
import { hooksOf, prepareWorktree, workerArgv } from "./profiles.ts";
import { workerBinDir, writeWorkerLauncher } from "../boundaries/launchers/worker-bin.ts";
import { baseBranchOf } from "../repos/base-branch.ts";
import { waitingFeedback } from "../intake/feedback.ts";
import type { FeedbackRow } from "../intake/feedback.ts";
import { bindFeedback, claimFeedback, markDelivered, releaseFeedback } from "./feedback-delivery.ts";

/** What differs between the starts of a dispatch, a resume and a restart. */
export interface WorkerStart {
  /** The session's id, chosen before the start so that its claim on GitHub names it (default: a new one). */
  sessionId?: string;
  /** The worktree the worker runs in: made now (dispatch) or the one the item has. */
  worktree: () => Promise<{ path: string; branch: string }>;
  /**
   * A resume (its context restored), with the earlier session it brings back; null for a fresh
   * start. The worker's argv is the configured command plus what its profile adds (lib/dispatch/profiles.ts).
   */
  resume: { earlier: string | null; agentSession?: string } | null;
  /** Whether the worker is given the item's prompt on stdin (a resumed worker has it in its context). */
  prompt: boolean;
  /** The item's reason for `active`, and details for its audit record. */
  becameActive: { reason: string; details?: Record<string, unknown> };
  /** The comment once it runs: its purpose (for the audit log) and its body. */
  comment: { purpose: string; body: (place: SessionPlace, attempt: number) => string };
}

/** How a start went: the session it runs in, or why it failed (private: never in a public comment). */
export type StartedWorker =
  | { result: "active"; attempt: number; session: { name: string; id: string; branch: string; worktree: string }; reason: null }
  | { result: "failed"; attempt: number; session: null; reason: string };

/** Starts the worker of a claimed item; a failure fails the item and says so once on its issue. */
export async function startWorker(deps: DispatchDeps, item: WorkItem, start: WorkerStart): Promise<StartedWorker> {
  const { store } = deps;
  const attempt = nextAttempt(store, item.id);
  // Chosen before the launch, so the worker's argv can carry them (Claude Code's --session-id, its hooks' key).
  const sessionId = start.sessionId ?? randomUUID();
  const key = episodeKey(item.id, attempt);
  let launched: Awaited<ReturnType<DispatchDeps["launcher"]["launch"]>>;
  let worktree: { path: string; branch: string };
  let name: string;
  let comment: { purpose: string; body: string };
  // The feedback not given yet, which this start gives: in a fresh start's prompt, or at a resume.
  let feedback: FeedbackRow[] = [];
  let claim: { token: string; ids: number[] } | null = null;
  let bound: string | undefined;
  try {
    worktree = await start.worktree();
    name = freeSessionName(deps.sessionRoot, item, attempt);
    // Claimed before it is written anywhere, and only what this start claims: the daemon may be typing some of it meanwhile.
    // A resumed agent that takes a first message is pointed at it; any other resumed worker is typed it once idle.
    if (start.prompt || (start.resume && hooksOf(deps.config.worker.profile))) {
      const waiting = waitingFeedback(store, item.id);
      claim = claimFeedback(store, waiting);
      feedback = claim ? waiting.filter((piece) => claim!.ids.includes(piece.id)) : [];
    }
    const promptFile = start.prompt ? writePromptFile(join(deps.stateDir, "prompts", `item-${item.id}`), composePrompt({
      item: item.id, repo: item.repo, issue: item.issue, title: item.title, body: item.body,
      branch: worktree.branch, worktree: worktree.path, episodeKey: key, episodeByHooks: hooksOf(deps.config.worker.profile),
      // Past the gate: the body is the author's, or the owner approved it as it reads.
      words: { editedBy: editorsOf(store, item.id), held: null },
      level: deps.effects.level,
      instructions: await worktreeInstructions(worktree.path, baseBranchOf(deps.store, deps.config, item.repo)),
      feedback,
    })) : undefined;
    const feedbackFile = !start.prompt && feedback.length ? writeFeedbackFile(deps.stateDir, item.id, `feedback-${sessionId}.md`, feedback) : undefined;
    const profile = { sessionId, episodeKey: key, resume: start.resume, robotArmy: writeWorkerLauncher(deps.stateDir), promptFile, feedbackFile, worktree: worktree.path, env: deps.launcher.workerEnv() };
    const spec = workerSpec(deps, item, {
      name, sessionId, episodeKey: key, cwd: worktree.path, argv: workerArgv(deps.config.worker, profile), promptFile,
    });
    // The comment once it runs, made before the launch from what the launch is given (its session id
    // among them), so a worker adopted after a crash cut its start short is told of in the same words.
    comment = { purpose: start.comment.purpose, body: start.comment.body({ host: deps.host, name, id: sessionId, branch: worktree.branch, worktree: worktree.path }, attempt) };
    // Audited (DESIGN rule 3): a crash mid-launch is settled from the managed session's record and the process table.
    // The intent holds all its row needs (lib/daemon/adopt-worker.ts adopts the worker from it when the crash came before the row).
    launched = await auditEffect(
      store,
      {
        kind: "session.launch", repo: item.repo, item: item.id, sessionId,
        body: {
          session: name, session_id: sessionId, cwd: worktree.path, branch: worktree.branch, attempt, profile: deps.config.worker.profile, episode_key: key,
          ...deps.launcher.placeOf({ item: item.id, name }), comment,
          // The feedback its prompt or first message gives (lib/dispatch/feedback-delivery.ts): never given twice.
          ...(claim ? { feedback_claim: claim.token } : {}),
          // What the item's move to active records beside the session (a resume's earlier session), so an adopted worker's does too.
          ...(start.becameActive.details ? { active_details: start.becameActive.details } : {}),
          // A child still starting when this process dies may write its record until the launch would have given up:
          // "not launched" is not concluded before then (lib/daemon/unfinished.ts).
          settle_after_seconds: Math.ceil(deps.launcher.timeoutMs / 1000),
        },
      },
      // The profile readies the worktree as part of the launch (Claude Code's hooks: the owner's settings file, merged).
      async (actionId) => {
        // Carried by this launch before it starts: a crash that cuts it short never gives them twice.
        bound = actionId;
        bindFeedback(store, claim?.token ?? null, actionId);
        await prepareWorktree(deps.config.worker, worktree.path, profile);
        return await deps.launcher.launch(spec);
      },
      (started) => ({ session_id: started.sessionId, launcher: started.launcher, marker: started.marker, terminal: started.terminal }),
    );
  } catch (error) {
    // Not started: what it claimed waits again.
    releaseFeedback(store, claim?.token ?? null, bound);
    return await failStart(deps, item, attempt, errorText(error), { tellIssue: true });
  }
  let row;
  try {
    row = recordWorker(deps, item, {
      sessionId: launched.sessionId, name, place: launched, worktree, episodeKey: key, profile: deps.config.worker.profile,
    }, start.becameActive);
  } catch (error) {
    // The worker runs but no row says so: nothing would ever watch or end it. It is stopped
    // (by its own record, audited); only once it is proven stopped does the issue hear that
    // no session could be started.
    const stopped = await stopUnrecorded(deps, item, launched.sessionId, name);
    const why = `its worker started as session ${name} (${launched.sessionId}) but could not be recorded: ${errorText(error)}; ${stopped.line}`;
    return await failStart(deps, item, attempt, why, { tellIssue: stopped.ok });
  }
  // Given: in its prompt, or at its resume. (A worker stopped as unrecorded gave them to no one: they stay carried by its launch, never given twice.)
  markDelivered(store, feedback, start.resume ? "resume" : "prompt", launched.sessionId);
  const session = { name, id: launched.sessionId, branch: worktree.branch, worktree: worktree.path };
  await tellIssue(deps, item, comment.purpose, comment.body);
  return { result: "active", attempt: row.attempt, session, reason: null };
}

/**
 * The repository's instructions as committed where the worktree's branch left its base
 * branch: a new worktree's first commit, or, once a worker has committed, the base commit
 * under its work, so nothing on the worker's branch is read as the repository's. Unread, the
 * start fails: a worker is not started without instructions its repository gives.
 */
async function worktreeInstructions(path: string, base: string | undefined): Promise<RepoInstructions> {
  if (base === undefined) throw new RobotArmyError(`The repository of the worktree "${path}" is not in the config, so its base branch is unknown`);
  return await readRepoInstructions(path, base, await startingCommit(path, "HEAD", base));
}

/** A launched worker, as its session row records it. */
export interface LaunchedWorker {
  sessionId: string;
  name: string;
  /** The launcher, the marker its place is found by, and its terminal server. */
  place: LaunchPlace;
  worktree: { path: string; branch: string };
  episodeKey: string;
  profile: WorkerProfile;
  /** When it started, as its managed session's record says (an adopted worker); else now, as its start records it. */
  startedAt?: string;
}

/**
 * Records a launched worker's session row and moves its item to `active`, in one
 * transaction: what every start writes once its worker runs, and what settling a claim
 * cut short writes for a worker it adopts (lib/daemon/adopt-worker.ts); with `active` null,
 * the row alone, for a worker whose item left `dispatching` before it was adopted. The
 * worker's pid and start time come from its managed session's record.
 */
export function recordWorker(
  deps: Pick<DispatchDeps, "store" | "host" | "sessionRoot">,
  item: WorkItem,
  worker: LaunchedWorker,
  active: { reason: string; details?: Record<string, unknown> } | null,
): StoredSession {
  const { store } = deps;
  return store.transaction(() => {
    const recorded = recordSession(store, {
      id: worker.sessionId, item: item.id, name: worker.name, host: deps.host, launcher: worker.place.launcher, marker: worker.place.marker,
      worktree: worker.worktree.path, branch: worker.worktree.branch, started_at: worker.startedAt ?? isoSeconds(now()), simulated: item.simulated,
      episode_key: worker.episodeKey, profile: worker.profile, ...workerProcess(deps.sessionRoot, worker.sessionId), terminal: worker.place.terminal,
    });
    // Null: the item has moved on (its issue closed while its worker's launch waited to be settled); the row alone is written.
    if (active) transition(store, item.id, "active", { reason: active.reason, details: { session: worker.sessionId, name: worker.name, ...active.details } });
    return recorded;
  });
}

/** Fails the item with its private reason and, unless a session of it may still run, says once on its issue that none could be started. */
async function failStart(deps: DispatchDeps, item: WorkItem, attempt: number, why: string, options: { tellIssue: boolean }): Promise<StartedWorker> {
  // The reason as transition() stored it: redacted, so what dispatch prints is what the row keeps.
  const reason = transition(deps.store, item.id, "failed", { reason: why }).reason ?? why;
  if (options.tellIssue) await tellIssue(deps, item, "failed", failureComment({ host: deps.host, item: item.id }));
  return { result: "failed", attempt, session: null, reason };
}

/** Stops a just-launched session no row records, by its own record (pid plus start time), between an audit intent and outcome. */
async function stopUnrecorded(deps: DispatchDeps, item: WorkItem, sessionId: string, name: string): Promise<{ ok: boolean; line: string }> {
  try {
    const record = readRecord(deps.sessionRoot, sessionId);
    if (!record) return { ok: false, line: "its session record cannot be found, so it may still run" };
    const result = await auditEffect(
      deps.store,
      { kind: "session.stop", repo: item.repo, item: item.id, sessionId, body: { session: name, why: "not recorded" } },
      () => stopSession(deps.sessionRoot, record),
      (outcome) => ({ result: outcome }),
    );
    if (result === "left-running") return { ok: false, line: "its command was stopped, but processes it started still run (or cannot be checked)" };
    return { ok: true, line: result === "stopped" ? "that session was stopped" : "that session had already ended" };
  } catch (error) {
    return { ok: false, line: `stopping that session failed (${errorText(error)}), so it may still run` };
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * What the launcher starts for an item: its session's name and id, tags (the launcher adds
 * `ra_item`), worktree, argv, prompt file, and the non-secret variables a worker needs
 * (the repository, its base branch, its episode key, where GitHub is, the token's file for
 * robot-army's own demo worker only, and the folder of robot-army's launcher, which its holder
 * puts first on its PATH).
 */
export function workerSpec(
  deps: Pick<DispatchDeps, "store" | "config" | "stateDir">,
  item: WorkItem,
  launch: { name: string; sessionId?: string; episodeKey: string; cwd: string; argv: string[]; promptFile?: string },
): LaunchSpec {
  const { [ITEM_TAG]: _item, ...tags } = workerTags(deps.store, item.id);
  const github = deps.config.github;
  return {
    item: item.id, name: launch.name, cwd: launch.cwd, argv: launch.argv, tags,
    ...(launch.sessionId ? { sessionId: launch.sessionId } : {}),
    ...(launch.promptFile ? { stdinFile: launch.promptFile } : {}),
    env: {
      RA_REPO: item.repo, RA_BASE_BRANCH: baseBranchOf(deps.store, deps.config, item.repo), RA_EPISODE_KEY: launch.episodeKey,
      [PATH_FIRST_VARIABLE]: workerBinDir(deps.stateDir),
      // robot-army's own token reaches only its own demo worker, which opens its pull request with it. An agent pushes
      // and opens pull requests with the owner's git and gh credentials, as the owner would: a worker that reads an
      // issue someone else can write is never handed the token robot-army polls and comments with.
      RA_GITHUB_API: github.api_base, ...(github.token_file && deps.config.worker.profile === "demo" ? { RA_GITHUB_TOKEN_FILE: github.token_file } : {}),
    },
  };
}

/** Comments on the item's issue; one that fails to post is in the audit log (by commentOnIssue) and otherwise ignored. */
export async function tellIssue(deps: Pick<DispatchDeps, "store" | "effects">, item: WorkItem, purpose: string, body: string): Promise<void> {
  try {
    await commentOnIssue(deps.store, deps.effects, { repo: item.repo, issue: item.issue, item: item.id, body, purpose });
  } catch {
    // Recorded as the comment's failed outcome; the session goes on and nothing retries it.
  }
}

/** The worker's pid and start time from its managed session's record, when it is on record. */
function workerProcess(sessionRoot: string, sessionId: string): { pid: number | null; pid_started_at: string | null } {
  const record = readRecord(sessionRoot, sessionId);
  return { pid: record?.childPid ?? null, pid_started_at: record?.childStartedAt ?? null };
}
