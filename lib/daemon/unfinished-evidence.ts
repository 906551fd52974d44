/**
 * What became of an effect a crash cut short, read from the evidence its kind names
 * (lib/store/effect-kinds.ts): the issue's comments, the worktree's folder and git's list,
 * the managed session's record and the process table, a file's old and new paths. Each
 * reader answers one of three things: settled (what was found, and whether the effect took
 * place: never that it ran when it did not), not settled and the owner must look (what to
 * check), or not readable now (try again next pass). Nothing here retries the effect.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { GitHubError } from "../boundaries/github.ts";
import type { GitHubReader } from "../boundaries/github-types.ts";
import { existingWorktree } from "../boundaries/worktrees.ts";
import { branchExists, branchTip } from "../boundaries/branches.ts";
import type { Config } from "../config.ts";
import { commentMarker } from "../effects.ts";
import { listRecords, readRecord } from "../sessions/records.ts";
import type { SessionRecord } from "../sessions/records.ts";
import { DAMAGED_DIR, setAsideCopies } from "../sessions/spool.ts";
import { workerRuns } from "../sessions/state.ts";
import type { AuditRecord } from "../store/audit.ts";
import type { Finding } from "../store/findings.ts";
import { readClaim, readClaimMessage, readHeartbeatMessage } from "../work-items/issue-claims.ts";

/** What the readers work with. */
export interface EvidenceDeps {
  config: Config;
  sessionRoot: string;
  github: Pick<GitHubReader, "listComments" | "readRef" | "readCommitMessage" | "readCommit">;
}

/** A comment: found on its issue by the marker it ends with, or never posted (and the owner told the issue never heard it). */
export async function commentEvidence(deps: EvidenceDeps, intent: AuditRecord): Promise<Finding> {
  const issue = intent.body.issue;
  if (!intent.repo || typeof issue !== "number") return { settled: false, check: "its intent names no issue, so its comments cannot be read" };
  let comments;
  try {
    comments = await deps.github.listComments(intent.repo, issue);
  } catch (error) {
    // An issue GitHub says is gone (deleted, or moved elsewhere) will not answer later either: the owner is told.
    if (error instanceof GitHubError && (error.status === 404 || error.status === 410)) {
      return { settled: false, check: `GitHub answered ${error.status} for ${intent.repo}#${issue}, so whether its comment was posted cannot be read; look at the issue` };
    }
    return { settled: "later", why: `the comments of ${intent.repo}#${issue} cannot be read (${(error as Error).message})` };
  }
  const marker = commentMarker(intent.actionId!);
  const posted = comments.find((comment) => comment.body.includes(marker));
  if (posted) return { settled: true, ok: true, found: `posted (comment ${posted.id})`, facts: { comment_id: posted.id, url: posted.html_url } };
  return {
    settled: true, ok: false, found: "not posted",
    tellOwner: `its ${String(intent.body.purpose ?? "")} comment was never posted, so the issue was not told; tell it yourself if it should know`,
  };
}

/**
 * An issue's claim made or released: its reference read on GitHub. A claim was made when the
 * reference's commit carries the intent's action (its message says so); released when the
 * reference no longer points at the commit the release named.
 */
export async function claimEvidence(deps: EvidenceDeps, intent: AuditRecord): Promise<Finding> {
  const ref = intent.body.ref;
  if (!intent.repo || typeof ref !== "string") return { settled: false, check: "its intent names no repository and claim reference" };
  let current;
  try {
    current = await readClaim(deps.github, intent.repo, ref);
  } catch (error) {
    return { settled: "later", why: `${ref} in ${intent.repo} cannot be read (${(error as Error).message})` };
  }
  if (intent.kind === "host.heartbeat") {
    try {
      return await heartbeatEvidence(deps, intent, ref);
    } catch (error) {
      return { settled: "later", why: `${ref} in ${intent.repo} cannot be read (${(error as Error).message})` };
    }
  }
  if (intent.kind === "claim.create") {
    const words = current ? readClaimMessage(current.message) : {};
    if (current && words.action === intent.actionId) return { settled: true, ok: true, found: "made", facts: { created: true, sha: current.sha } };
    return { settled: true, ok: false, found: "not made", facts: { held_by: current ? words.host ?? null : null } };
  }
  if (current && current.sha === intent.body.sha) return { settled: true, ok: false, found: "not released", facts: { sha: current.sha } };
  return { settled: true, ok: true, found: "released", facts: { answer: current ? "another claim stands there now" : "gone" } };
}

/**
 * A heartbeat advanced: later beats may have moved it on since, so its reference is walked
 * back, parent by parent, to the commit the intent moved it from (at most a few commits):
 * made when a commit on the way names the intent's action.
 */
async function heartbeatEvidence(deps: EvidenceDeps, intent: AuditRecord, ref: string): Promise<Finding> {
  const from = typeof intent.body.from === "string" ? intent.body.from : null;
  let sha = await deps.github.readRef(intent.repo!, ref);
  for (let step = 0; sha !== null && sha !== from && step < HEARTBEAT_WALK; step++) {
    const commit = await deps.github.readCommit(intent.repo!, sha);
    if (readHeartbeatMessage(commit.message).action === intent.actionId) return { settled: true, ok: true, found: "made", facts: { moved: true, sha } };
    sha = commit.parents[0] ?? null;
  }
  return { settled: true, ok: false, found: "not made" };
}

/** How many commits back a cut heartbeat is looked for: more beats than a restart makes before the sweep reads it. */
const HEARTBEAT_WALK = 8;

/** A worktree made or removed: whether its folder exists and git lists it on its branch. */
export async function worktreeEvidence(deps: EvidenceDeps, intent: AuditRecord): Promise<Finding> {
  const { path, branch } = intent.body;
  const repoPath = intent.repo ? deps.config.repos[intent.repo]?.path : undefined;
  if (typeof path !== "string" || typeof branch !== "string") return { settled: false, check: "its intent names no worktree path and branch" };
  if (!repoPath) return { settled: false, check: `repository ${intent.repo ?? "(none)"} is not in the config, so git's list of its worktrees cannot be read; look at "${path}"` };
  let listed;
  try {
    listed = await existingWorktree({ repoPath, path, branch });
  } catch (error) {
    return { settled: false, check: `git's list of worktrees in "${repoPath}" cannot be read (${(error as Error).message}); look at "${path}"` };
  }
  const folder = existsSync(path);
  if (folder && !listed) return { settled: false, check: `"${path}" exists but git does not list it as a worktree on branch ${branch}: look at it with "git worktree list" in "${repoPath}"` };
  const facts = { path, branch, branch_exists: await branchExists(repoPath, branch).catch(() => null) };
  if (intent.kind === "worktree.create") {
    return listed ? { settled: true, ok: true, found: "made", facts: { ...facts, head: listed.head } } : { settled: true, ok: false, found: "not made", facts };
  }
  return listed ? { settled: true, ok: false, found: "not removed", facts } : { settled: true, ok: true, found: "removed", facts };
}

/** A branch deletion: whether the clone still has the branch, at the tip its intent proved or elsewhere. */
export async function branchEvidence(deps: EvidenceDeps, intent: AuditRecord): Promise<Finding> {
  const { branch, tip } = intent.body;
  const repoPath = intent.repo ? deps.config.repos[intent.repo]?.path : undefined;
  if (typeof branch !== "string" || typeof tip !== "string") return { settled: false, check: "its intent names no branch and tip" };
  if (!repoPath) return { settled: false, check: `repository ${intent.repo ?? "(none)"} is not in the config, so its branch ${branch} cannot be looked at` };
  let now: string | undefined;
  try {
    now = await branchTip(repoPath, branch);
  } catch (error) {
    return { settled: false, check: `git cannot read branch ${branch} in "${repoPath}" (${(error as Error).message})` };
  }
  const facts = { branch, tip, now: now ?? null };
  if (now === undefined) return { settled: true, ok: true, found: "deleted", facts };
  return { settled: true, ok: false, found: now === tip ? "not deleted" : `not deleted (it moved to ${now.slice(0, 12)})`, facts };
}

/** A bundle written or removed: whether its file is at the path its intent names. */
export function bundleEvidence(intent: AuditRecord): Finding {
  const file = intent.body.file;
  if (typeof file !== "string") return { settled: false, check: "its intent names no bundle file" };
  const there = existsSync(file);
  const facts = { file };
  if (intent.kind === "bundle.remove") return there ? { settled: true, ok: false, found: "not removed", facts } : { settled: true, ok: true, found: "removed", facts };
  // A bundle is renamed into place whole, so a file at its path is the whole bundle.
  return there ? { settled: true, ok: true, found: "written", facts } : { settled: true, ok: false, found: "not written", facts };
}

/** A session effect: what the managed session's record and the process table say of the session now. */
export function sessionEvidence(deps: EvidenceDeps, intent: AuditRecord): Finding {
  let record: SessionRecord | undefined;
  try {
    record = sessionOf(deps.sessionRoot, intent);
  } catch (error) {
    return { settled: false, check: (error as Error).message };
  }
  const name = String(intent.body.session ?? intent.body.name ?? intent.sessionId ?? "");
  const state = record ? stateOf(deps.sessionRoot, record) : "no record";
  const facts = { session: name, session_id: record?.id ?? intent.sessionId ?? null, state };
  const peek = `look at it with "robot-army session ls" and "robot-army session peek ${name}"`;
  if (state === "unknown") return { settled: false, check: `whether session ${name} runs cannot be checked: ${peek}` };
  switch (intent.kind) {
    case "session.launch":
      if (state === "no record") return { settled: true, ok: false, found: "not launched (no session record)", facts };
      return { settled: true, ok: true, found: `launched (${state} now)`, facts };
    case "session.respawn": {
      // gc's intent names the generation that ended; a respawn writes the next one.
      const from = intent.body.generation;
      if (!record || typeof from !== "number") return { settled: false, check: `session ${name}'s generations cannot be compared: ${peek}` };
      return record.generation > from
        ? { settled: true, ok: true, found: `respawned (generation ${record.generation}, ${state} now)`, facts }
        : { settled: true, ok: false, found: `not respawned (still generation ${record.generation})`, facts };
    }
    case "session.start": {
      // A holder writes its pid into the record as it starts; the kind's settleAfterSeconds gave it time to.
      const generation = intent.body.generation;
      if (!record) return { settled: true, ok: false, found: "not started (no session record)", facts };
      if (typeof generation === "number" && record.generation > generation) return { settled: true, ok: true, found: `started (a later generation, ${record.generation}, is on record)`, facts };
      if (record.holderPid === null) return { settled: true, ok: false, found: "not started (no holder wrote its pid)", facts };
      return { settled: true, ok: true, found: `started (${state} now)`, facts };
    }
    case "session.stop":
    case "session.retire":
    case "session.kill":
    case "session.cancel":
      if (state === "no record") return { settled: false, check: `session ${name} has no record left, so whether it was stopped cannot be told: ${peek}` };
      return state === "running" ? { settled: true, ok: false, found: "still running", facts } : { settled: true, ok: true, found: `stopped (${state})`, facts };
    case "session.remove":
    case "session.remove-orphan":
      return state === "no record" ? { settled: true, ok: true, found: "removed", facts } : { settled: true, ok: false, found: "not removed", facts };
    case "session.abandon":
      if (record?.ended === "abandoned") return { settled: true, ok: true, found: "marked abandoned", facts };
      return { settled: false, check: `session ${name} is not marked abandoned on record: ${peek}` };
    default:
      return { settled: false, check: `nothing on record tells what became of it: ${peek}` };
  }
}

/** A spool file set aside: whether it is at its old path or in `damaged/` beside it. */
export function fileEvidence(intent: AuditRecord): Finding {
  const path = intent.body.path;
  if (typeof path !== "string") return { settled: false, check: "its intent names no file" };
  const dir = join(dirname(path), DAMAGED_DIR);
  const moved = setAsideCopies(path);
  const there = existsSync(path);
  if (there) return { settled: true, ok: false, found: "not set aside (the next drain sets it aside)", facts: { path } };
  if (moved.length) return { settled: true, ok: true, found: `set aside in ${dir}`, facts: { path, moved_to: moved.at(-1) } };
  return { settled: false, check: `"${path}" is neither where it was nor in "${dir}": look for it` };
}

/** The session an intent is about: by its id when it names one, else the newest record of its name (of its item, for a worker). */
function sessionOf(root: string, intent: AuditRecord): SessionRecord | undefined {
  const id = intent.sessionId ?? (typeof intent.body.session_id === "string" ? intent.body.session_id : undefined);
  if (id) return readRecord(root, id);
  const name = intent.body.session ?? intent.body.name;
  if (typeof name !== "string") return undefined;
  return listRecords(root)
    .filter((record) => record.name === name && (intent.item === null || record.tags.ra_item === undefined || record.tags.ra_item === String(intent.item)))
    .at(-1);
}

function stateOf(root: string, record: SessionRecord): "running" | "exited" | "gone" | "unknown" {
  const runs = workerRuns(root, record);
  if (runs === "unknown") return "unknown";
  if (runs) return "running";
  return record.exitedAt ? "exited" : "gone";
}
