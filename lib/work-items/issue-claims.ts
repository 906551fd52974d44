/**
 * An issue's claim on GitHub: before a worker starts for an item at `live` (a dispatch, a
 * resume, a restart), robot-army creates the git reference `refs/robot-army/claims/<issue>`
 * in the issue's repository, at a commit (the empty tree, no parent) whose message names the
 * host, the item and the claim's audit action. GitHub refuses to create a reference that
 * exists, so of two hosts claiming one issue exactly one wins; the other shows the item
 * `claimed by <host>` and starts nothing. Every later start of the item here (a resume, a
 * restart, a dispatch after a retry) moves the claim on: a new commit whose parent is the
 * one this store made, the reference moved by fast-forward only, which GitHub refuses once
 * anyone else moved it. A claim is also this store's when its commit carries the action of
 * a claim this store began and a crash cut short. A done or abandoned item's claim is
 * released: the reference deleted, once it is still this store's.
 *
 * A copy of the state taken before the claim was made cannot prove it its own, so it waits.
 * One taken after holds the same record as the store it was copied from: until one of the two
 * starts the item again (moving the claim on), the claim does not tell them apart.
 *
 * Below `live` claims are simulated like every other GitHub write: audited with
 * `simulated: true`, nothing asked or written, no row kept.
 *
 * @example
 * const claim = await takeClaim(deps, item, "dispatch");
 * if (!claim.held) return wait(claim.reason);
 */
import { isoSeconds, now } from "../clock.ts";
import { PreconditionError } from "../errors.ts";
import { printable } from "../printable.ts";
import type { GitHubReader } from "../boundaries/github-types.ts";
import type { Config } from "../config.ts";
import { parseDuration } from "../duration.ts";
import type { Effects } from "../effects.ts";
import { actionRecords, auditEffect } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import type { WorkItem } from "./queries.ts";
import { sessionsOf } from "./sessions.ts";

/** The namespace of claims: refs that `git fetch`'s default refspec never brings into a clone. */
export const CLAIM_NAMESPACE = "refs/robot-army/claims";

/** The reference that claims an issue. */
export function claimRef(issue: number): string {
  return `${CLAIM_NAMESPACE}/${issue}`;
}

/** Why a claim is taken, as its commit's message and audit record say. */
export type ClaimPurpose = "dispatch" | "resume" | "restart" | "takeover";

/** What a claim's commit message says: identifiers only (DESIGN rule 4), one `key: value` a line. */
export interface ClaimWords {
  host: string;
  item: number;
  action: string;
  purpose: string;
  at: string;
  /** The worker session the start that made or moved it is for (absent in claims written before it was named). */
  session?: string;
}

/** The commit message of a claim. */
export function claimMessage(repo: string, issue: number, words: ClaimWords): string {
  const session = words.session === undefined ? "" : `session: ${words.session}\n`;
  return `robot-army claim ${repo}#${issue}\n\nhost: ${words.host}\nitem: ${words.item}\n${session}action: ${words.action}\npurpose: ${words.purpose}\nat: ${words.at}\n`;
}

/** A host's name as `daemon.host` allows it (schema/config.schema.json); any other is not taken from a claim. */
export const HOST_NAME = /^(?=.{1,64}$)(?!.*\.lock$)[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

/** What a claim's commit message says, each key that reads as expected; nothing for a message that is not a claim. */
export function readClaimMessage(message: string): Partial<ClaimWords> {
  if (!message.startsWith("robot-army claim ")) return {};
  const words: Partial<ClaimWords> = {};
  for (const line of message.split("\n")) {
    const match = /^(host|item|session|action|purpose|at): (\S+)$/.exec(line);
    if (!match) continue;
    const [, key, value] = match;
    // Written by whoever can push to the repository: taken only as the shapes robot-army writes.
    if (key === "item") {
      if (/^[1-9][0-9]{0,15}$/.test(value)) words.item = Number(value);
    } else if (key === "host") {
      if (HOST_NAME.test(value)) words.host = value;
    } else if (/^[A-Za-z0-9:._-]{1,64}$/.test(value)) words[key as "session" | "action" | "purpose" | "at"] = value;
  }
  return words;
}

/** An item's claim as this store last saw it on GitHub. */
export interface ClaimRow {
  item: number;
  repo: string;
  issue: number;
  ref: string;
  sha: string;
  /** The host its message names; null when it names none. */
  host: string | null;
  /** Made by this store. */
  mine: boolean;
  action_id: string | null;
  seen_at: string;
  released_at: string | null;
  /** When GitHub last showed it at `sha` (read alone, or listed with the repository's claims); null once a listing found it moved or gone. */
  checked_at: string | null;
}

/** The item's claim on record; undefined when it has none. */
export function claimOf(store: Store, item: number): ClaimRow | undefined {
  const row = store.statement("SELECT * FROM issue_claims WHERE item = ?").get(item) as Record<string, unknown> | undefined;
  return row && toRow(row);
}

/** The message of `host`'s heartbeat at the commit this machine last listed it at (one request); null when never listed. */
async function lastHeartbeat(deps: Pick<ClaimDeps, "store" | "github">, repo: string, host: string): Promise<HeartbeatWords | null> {
  const row = deps.store.statement("SELECT sha FROM hosts_seen WHERE repo = ? AND host = ?").get(repo, host) as { sha: string } | undefined;
  return row ? readHeartbeatMessage(await deps.github.readCommitMessage(repo, row.sha)) : null;
}

/** A gone host's claim this host may take over: the commit it stands at and the host it names. */
export interface Takeover {
  from: string;
  host: string;
}

/** Where an item another host held when last asked stands now: still held (why it waits), free to take over, or neither. */
export type ElsewhereAnswer = { waits: string } | { takeover: Takeover } | null;

/**
 * For an item another host held when last asked: where its claim's reference stands. GitHub
 * is asked nothing while the claim was shown unchanged less than a lease ago (the heartbeat
 * lists every claim of the repository in one request, every third of the lease, and marks
 * one moved or gone to be read again); otherwise one read of the reference. Still there, the
 * item waits, unless the host is gone (its heartbeat, as this machine saw it, has stood
 * still past the lease, and this machine listed it lately) and no branch of the issue is on
 * GitHub (`branchOnGitHub`, asked only then): the claim may then be taken over. A branch
 * there is work the gone host may have left: the owner decides. Null when the reference
 * moved or went (the gate and `takeClaim` then ask the rest), or when the item was not
 * claimed elsewhere.
 */
export async function stillClaimedElsewhere(
  deps: Pick<ClaimDeps, "store" | "github" | "host"> & { config: Config },
  item: WorkItem,
  branchOnGitHub: () => Promise<string | null> = async () => null,
): Promise<ElsewhereAnswer> {
  const known = claimOf(deps.store, item.id);
  if (!known || known.mine || known.released_at !== null) return null;
  // Shown less than a lease ago; a time ahead of this clock (stepped back since) is not taken for fresh.
  const age = known.checked_at === null ? Infinity : now().getTime() - Date.parse(known.checked_at);
  const fresh = age >= 0 && age < leaseMs(deps.config);
  if (!fresh) {
    const sha = await deps.github.readRef(item.repo, known.ref);
    if (sha !== known.sha) return null;
    confirmClaim(deps.store, known);
  }
  const held = describeHeld(item, known.host, known.host === deps.host);
  if (known.host === null || known.host === deps.host) return { waits: held };
  const holder = known.host;
  // Gone by this machine's lease first, which asks nothing: a host alive by it is alive by any longer lease its heartbeat names.
  if (goneSince(deps.store, deps.config, item.repo, holder, known.seen_at) === null) return { waits: held };
  const beat = await lastHeartbeat(deps, item.repo, holder);
  const gone = beat === null ? null : goneSince(deps.store, deps.config, item.repo, holder, known.seen_at, beat.leaseMs);
  if (gone === null || beat === null) return { waits: held };
  const interrupted = (what: string) => ({ waits: `interrupted on ${printable(holder)}: its heartbeat stopped at ${gone}, and ${what}; resume that work by hand, or "robot-army unclaim ${item.id}" to start afresh here` });
  // A worker on record there when it last beat may run on (a daemon stopped, a machine cut off): never taken over.
  if (beat.working.includes(item.issue)) return interrupted(`its last heartbeat names a worker of this issue there`);
  const branch = await branchOnGitHub();
  if (branch !== null) return interrupted(`the branch ${printable(branch)} is on GitHub with what it pushed`);
  return { takeover: { from: known.sha, host: holder } };
}

/**
 * When `host`'s heartbeat in `repo` last moved, as this machine saw it, when this machine has
 * since listed it at that same commit for longer than the lease (the host's own lease, as
 * its heartbeat names it, when that is the longer) and has seen `claimSeenAt` (when it first
 * saw the claim in question) more than a lease ago: a host that claimed after its last beat
 * was alive then. Null otherwise, or when this machine never saw its heartbeat. Measured on
 * this machine's clock alone; a clock moved forward here shortens it.
 */
export function goneSince(store: Store, config: Config, repo: string, host: string, claimSeenAt: string, theirLeaseMs = 0, at: Date = now()): string | null {
  const row = store.statement("SELECT first_seen_at, checked_at FROM hosts_seen WHERE repo = ? AND host = ?").get(repo, host) as { first_seen_at: string; checked_at: string } | undefined;
  if (!row) return null;
  const lease = Math.max(leaseMs(config), theirLeaseMs);
  const stood = Date.parse(row.checked_at) - Date.parse(row.first_seen_at);
  return stood > lease && at.getTime() - Date.parse(claimSeenAt) > lease ? row.first_seen_at : null;
}

/** What a host's heartbeat commit says: its lease and the issues its workers were on when it beat. */
export interface HeartbeatWords {
  leaseMs: number;
  /** Issues of the repository with a worker on record at that host (an open session, or an item at work). */
  working: number[];
}

/** The heartbeat message a host writes: identifiers and figures only. */
export function heartbeatMessage(host: string, words: { action: string; at: string; leaseMs: number; working: readonly number[] }): string {
  return `robot-army heartbeat ${host}\n\nhost: ${host}\naction: ${words.action}\nat: ${words.at}\nlease_ms: ${words.leaseMs}\nworking: ${words.working.join(",") || "-"}\n`;
}

/** What a heartbeat message says, in the shapes robot-army writes; an unreadable part reads as the safest value. */
export function readHeartbeatMessage(message: string): HeartbeatWords & { action?: string } {
  const lease = /^lease_ms: ([0-9]{1,12})$/m.exec(message)?.[1];
  const working = /^working: ([0-9,]{1,100000}|-)$/m.exec(message)?.[1];
  const action = /^action: ([A-Za-z0-9:._-]{1,64})$/m.exec(message)?.[1];
  return {
    leaseMs: lease === undefined ? 0 : Number(lease),
    working: working === undefined || working === "-" ? [] : working.split(",").filter(Boolean).map(Number),
    ...(action ? { action } : {}),
  };
}

/** The lease in milliseconds (`[claims] lease`): how long a host's heartbeat may stand still before it is gone. */
export function leaseMs(config: Config): number {
  return parseDuration(config.claims.lease, "claims.lease");
}

/** The claims this store holds in `repo` and has not released. */
export function heldClaimsIn(store: Store, repo: string): ClaimRow[] {
  return (store.statement("SELECT * FROM issue_claims WHERE mine = 1 AND released_at IS NULL AND repo = ? ORDER BY item").all(repo) as Array<Record<string, unknown>>).map(toRow);
}

/**
 * A claim this store held, found moved by someone else (`sha`, held by `holder`) or deleted
 * (`sha` null): recorded as another's, so nothing more starts for its item here until it is
 * released; a deleted one as released, so the next start claims anew.
 */
export function markClaimLost(store: Store, claim: ClaimRow, sha: string | null, holder: string | null): void {
  if (sha === null) {
    store.statement("UPDATE issue_claims SET released_at = ? WHERE item = ? AND sha = ?").run(isoSeconds(now()), claim.item, claim.sha);
    return;
  }
  store.statement("UPDATE issue_claims SET sha = ?, host = ?, mine = 0, action_id = NULL, seen_at = ? WHERE item = ? AND sha = ?")
    .run(sha, holder, isoSeconds(now()), claim.item, claim.sha);
}

/** Keeps on record that GitHub showed the claim at its commit now. */
export function confirmClaim(store: Store, claim: ClaimRow): void {
  store.statement("UPDATE issue_claims SET checked_at = ? WHERE item = ? AND sha = ?").run(isoSeconds(now()), claim.item, claim.sha);
}

/** Keeps on record that a listing found the claim moved or gone: the next pass that needs it reads it again. */
export function doubtClaim(store: Store, claim: ClaimRow): void {
  store.statement("UPDATE issue_claims SET checked_at = NULL WHERE item = ? AND sha = ?").run(claim.item, claim.sha);
}

/** The claims other hosts held when this store last asked, in `repo`, not released. */
export function othersClaimsIn(store: Store, repo: string): ClaimRow[] {
  return (store.statement("SELECT * FROM issue_claims WHERE mine = 0 AND released_at IS NULL AND repo = ? ORDER BY item").all(repo) as Array<Record<string, unknown>>).map(toRow);
}

/** What `takeClaim` needs. */
export interface ClaimDeps {
  store: Store;
  github: GitHubReader;
  effects: Effects;
  /** This host's name (`daemon.host`, else the hostname). */
  host: string;
}

/** Whether a worker may start for the item as far as its claim goes, and why not. */
export type ClaimAnswer = { held: true } | { held: false; reason: string };

/**
 * Holds the item's claim before a worker starts for it (its commit naming `session`, the
 * session the start is for): the one this store holds, moved on, when the reference still
 * points at it, else a new one. Any other claim (another host's, or one
 * this store released) keeps the worker from starting: the answer says who holds it.
 * GitHub that cannot be asked throws: a start never goes ahead on a claim not proven.
 */
export async function takeClaim(deps: ClaimDeps, item: WorkItem, purpose: ClaimPurpose, start: { session?: string; takeover?: Takeover } = {}): Promise<ClaimAnswer> {
  const { store, effects } = deps;
  const { session, takeover } = start;
  const ref = claimRef(item.issue);
  if (effects.github.simulated) {
    await auditEffect(store, { kind: "claim.create", repo: item.repo, item: item.id, simulated: true, body: { issue: item.issue, ref, host: deps.host, purpose } }, () => effects.github.createClaim(item.repo, ref, ""));
    return { held: true };
  }
  // A claim on record, this host's or another's, asked again by its reference alone (one request): unchanged, another's
  // still stands and this host's is moved on; moved, its new commit is read; gone, a new claim is made.
  const known = claimOf(store, item.id);
  if (known && known.released_at === null) {
    const sha = await deps.github.readRef(item.repo, ref);
    if (sha !== null && sha !== known.sha) return judge(deps, item, { sha, message: await deps.github.readCommitMessage(item.repo, sha) });
    // Another host's claim is moved on from only to take it over, from the very commit judged gone.
    const taking = !known.mine && takeover !== undefined && takeover.from === known.sha;
    if (sha === known.sha && !known.mine && !taking) return { held: false, reason: describeHeld(item, known.host, known.host === deps.host) };
    if (sha === known.sha) {
      const moved = await auditEffect(
        store,
        { kind: "claim.create", repo: item.repo, item: item.id, body: { issue: item.issue, ref, host: deps.host, purpose: taking ? "takeover" : purpose, from: known.sha, ...(taking ? { replaces: takeover!.host } : {}) } },
        async (action) => {
          const answer = await effects.github.advanceClaim(item.repo, ref, known.sha, claimMessage(item.repo, item.issue, { host: deps.host, item: item.id, session, action, purpose: taking ? "takeover" : purpose, at: isoSeconds(now()) }));
          // Kept before the outcome: a crash after it leaves the claim on record, never held by nobody.
          if (answer.moved && answer.sha) record(store, item, { ref, sha: answer.sha, host: deps.host, mine: true, action_id: action });
          return answer;
        },
        (answer) => ({ moved: answer.moved, sha: answer.sha }),
      );
      if (moved.moved) return { held: true };
      // Refused: someone moved it, or deleted it, between the read and the move.
      const current = await readClaim(deps.github, item.repo, ref);
      if (current) return judge(deps, item, current);
    }
    // Gone from GitHub (released by hand, say): a new claim.
  }
  const made = await auditEffect(
    store,
    { kind: "claim.create", repo: item.repo, item: item.id, body: { issue: item.issue, ref, host: deps.host, purpose } },
    async (action) => {
      const answer = await effects.github.createClaim(item.repo, ref, claimMessage(item.repo, item.issue, { host: deps.host, item: item.id, session, action, purpose, at: isoSeconds(now()) }));
      // Kept before the outcome: a crash after it leaves the claim on record, never held by nobody.
      if (answer.created && answer.sha) record(store, item, { ref, sha: answer.sha, host: deps.host, mine: true, action_id: action });
      return answer;
    },
    (result) => ({ created: result.created, sha: result.sha }),
  );
  if (made.created) return { held: true };
  const current = await readClaim(deps.github, item.repo, ref);
  if (!current) throw new Error(`GitHub refused to create ${ref} in ${item.repo} and holds no such reference`);
  return judge(deps, item, current);
}

/** A claim as GitHub holds it: the commit its reference points at, and that commit's message. */
export interface ClaimOnGitHub {
  sha: string;
  message: string;
}

/** The claim `ref` names on GitHub (two requests), or null when there is no such reference. */
export async function readClaim(github: Pick<GitHubReader, "readRef" | "readCommitMessage">, repo: string, ref: string): Promise<ClaimOnGitHub | null> {
  const sha = await github.readRef(repo, ref);
  return sha === null ? null : { sha, message: await github.readCommitMessage(repo, sha) };
}

/**
 * A claim found on GitHub that this store did not just make: its own after all when its
 * message carries the action of a claim.create this store wrote for the item (a crash cut it
 * short before its outcome), else held by whoever its message names.
 */
function judge(deps: ClaimDeps, item: WorkItem, current: ClaimOnGitHub): ClaimAnswer {
  const words = readClaimMessage(current.message);
  const ref = claimRef(item.issue);
  const ours = words.action !== undefined && words.item === item.id && madeHere(deps.store, item.id, words.action, current.sha);
  if (ours) {
    record(deps.store, item, { ref, sha: current.sha, host: words.host ?? null, mine: true, action_id: words.action! });
    return { held: true };
  }
  record(deps.store, item, { ref, sha: current.sha, host: words.host ?? null, mine: false, action_id: null });
  return { held: false, reason: describeHeld(item, words.host ?? null, words.host === deps.host) };
}

/**
 * Whether this store made the claim `action` names, now at `sha`: its claim.create intent is
 * here, and its outcome is either missing (a crash cut it short) or names that very commit.
 */
function madeHere(store: Store, item: number, action: string, sha: string): boolean {
  const records = actionRecords(store, action).filter((record) => record.kind === "claim.create" && record.item === item);
  const outcome = records.find((record) => record.phase === "outcome");
  return records.some((record) => record.phase === "intent") && (outcome === undefined || outcome.body.sha === sha);
}

/** Why an item claimed elsewhere does not start. */
export function describeHeld(item: Pick<WorkItem, "id" | "repo" | "issue">, host: string | null, sameName: boolean): string {
  const shown = host === null ? null : printable(host);
  const who = shown === null ? "someone else (its claim names no host robot-army can read)" : sameName ? `${shown} (this host's name, but not this state: another robot-army, or an earlier copy of this one)` : shown;
  return `claimed by ${who} on GitHub (${claimRef(item.issue)} in ${item.repo}); it starts here once that claim is released ("robot-army unclaim ${item.id}" when its holder no longer works on it)`;
}

/**
 * The claim a crash cut short before its outcome, found made by the unfinished-effect sweep
 * (lib/daemon/unfinished.ts): kept on record as this store's unless a row of it is there
 * already, so a finished item's claim is released even when no start came after the crash.
 */
export function rememberSettledClaim(store: Store, intent: { item: number | null; repo: string | null; actionId: string | null; body: Record<string, unknown> }, sha: string): void {
  const { item, repo, actionId, body } = intent;
  if (item === null || repo === null || actionId === null || typeof body.issue !== "number" || typeof body.ref !== "string") return;
  if (claimOf(store, item)?.action_id === actionId) return;
  record(store, { id: item, repo, issue: body.issue }, { ref: body.ref, sha, host: typeof body.host === "string" ? body.host : null, mine: true, action_id: actionId });
}

function record(store: Store, item: Pick<WorkItem, "id" | "repo" | "issue">, claim: { ref: string; sha: string; host: string | null; mine: boolean; action_id: string | null }): void {
  store.statement(
    `INSERT INTO issue_claims (item, repo, issue, ref, sha, host, mine, action_id, seen_at, released_at, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
     ON CONFLICT (item) DO UPDATE SET repo = excluded.repo, issue = excluded.issue, ref = excluded.ref, sha = excluded.sha, host = excluded.host,
       mine = excluded.mine, action_id = excluded.action_id, seen_at = excluded.seen_at, released_at = NULL, checked_at = excluded.checked_at`,
  ).run(item.id, item.repo, item.issue, claim.ref, claim.sha, claim.host, claim.mine ? 1 : 0, claim.action_id, isoSeconds(now()), isoSeconds(now()));
}

/** What the release step did. */
export interface ReleasedClaim {
  item: number;
  repo: string;
  issue: number;
  /** `released`: the reference deleted; `not ours`: someone else's claim stands there now, left alone; `gone`: nothing was there; `failed`: GitHub could not be asked or refused (tried again next pass). */
  result: "released" | "not ours" | "gone" | "failed";
  why?: string;
}

/**
 * Releases the claims this store holds for items that are done or abandoned: each reference
 * deleted once GitHub shows it still at this store's commit (audited `claim.release`); one
 * that points elsewhere now is someone else's and is left. One request per held claim of a
 * finished item, two when it is released; nothing when there is none.
 */
export async function releaseClaims(deps: Omit<ClaimDeps, "host">): Promise<ReleasedClaim[]> {
  if (deps.effects.github.simulated) return [];
  // CROSS JOIN keeps SQLite to the held claims' partial index: the finished items, however many, are not walked.
  const rows = deps.store.statement(
    `SELECT c.* FROM issue_claims AS c CROSS JOIN work_items AS w ON w.id = c.item
     WHERE c.mine = 1 AND c.released_at IS NULL AND w.state IN ('done', 'abandoned') ORDER BY c.item`,
  ).all().map((row) => toRow(row as Record<string, unknown>));
  const released: ReleasedClaim[] = [];
  for (const claim of rows) {
    // One claim GitHub will not release (an archived repository, an outage) holds back none of the others.
    let result: ReleasedClaim["result"];
    try {
      result = await releaseOne(deps, claim);
    } catch (error) {
      released.push({ item: claim.item, repo: claim.repo, issue: claim.issue, result: "failed", why: error instanceof Error ? error.message : String(error) });
      continue;
    }
    deps.store.statement("UPDATE issue_claims SET released_at = ? WHERE item = ? AND sha = ?").run(isoSeconds(now()), claim.item, claim.sha);
    released.push({ item: claim.item, repo: claim.repo, issue: claim.issue, result });
  }
  return released;
}

async function releaseOne(deps: Omit<ClaimDeps, "host">, claim: ClaimRow): Promise<Exclude<ReleasedClaim["result"], "failed">> {
  const sha = await deps.github.readRef(claim.repo, claim.ref);
  if (sha !== claim.sha) return sha ? "not ours" : "gone";
  const deleted = await auditEffect(
    deps.store,
    { kind: "claim.release", repo: claim.repo, item: claim.item, body: { issue: claim.issue, ref: claim.ref, sha: claim.sha } },
    () => deps.effects.github.deleteClaim(claim.repo, claim.ref),
    (answer) => ({ answer }),
  );
  return deleted === "deleted" ? "released" : "gone";
}

/** The claim that stands on GitHub for an item's issue, and what this store knows of it: what `unclaim` shows before it asks. */
export interface StandingClaim {
  ref: string;
  sha: string;
  words: Partial<ClaimWords>;
  /** This store's own claim, still held. */
  mine: boolean;
}

/** The claim on GitHub for the item's issue now (two requests), or null when none stands. */
export async function standingClaim(deps: Pick<ClaimDeps, "store" | "github">, item: WorkItem): Promise<StandingClaim | null> {
  const ref = claimRef(item.issue);
  const current = await readClaim(deps.github, item.repo, ref);
  if (!current) return null;
  const known = claimOf(deps.store, item.id);
  return { ref, sha: current.sha, words: readClaimMessage(current.message), mine: known?.mine === true && known.released_at === null && known.sha === current.sha };
}

/** The states in which an item's worker may be at work here. */
const AT_WORK = ["dispatching", "active", "needs_info", "awaiting_review"];

/**
 * Why the owner may not release this claim: it is this host's and the item's worker may be
 * at work here (its state, or a session row still open), when releasing it would let another
 * host start the same issue; null when it may be released.
 */
export function unclaimRefusal(store: Store, item: WorkItem, claim: StandingClaim): string | null {
  if (!claim.mine) return null;
  const open = sessionsOf(store, item.id).find((session) => session.ended_at === null);
  if (!AT_WORK.includes(item.state) && !open) return null;
  return `Work item ${item.id} is ${item.state}${open ? ` with its session ${open.name} open` : ""} under this claim: releasing it would let another host start ${item.repo}#${item.issue} too; cancel or abandon it first`;
}

/**
 * Releases a claim the owner has judged abandoned (another host's that no longer works, or
 * one an earlier copy of this state made): the reference deleted (`claim.release`, `by:
 * "owner"`), once it still points at the commit the owner was shown; the item's claim on
 * record is marked released, so it is queued here again. GitHub's delete is not a
 * compare-and-swap: a claim moved between the read and the delete is deleted too, which
 * only a host holding it after a takeover could do in that moment.
 */
export async function unclaim(deps: Omit<ClaimDeps, "host">, item: WorkItem, shown: StandingClaim): Promise<"released" | "moved" | "gone" | "simulated"> {
  const refusal = unclaimRefusal(deps.store, item, shown);
  if (refusal) throw new PreconditionError(refusal);
  if (deps.effects.github.simulated) {
    await auditEffect(deps.store, { kind: "claim.release", repo: item.repo, item: item.id, simulated: true, body: { issue: item.issue, ref: shown.ref, sha: shown.sha, by: "owner" } }, () => deps.effects.github.deleteClaim(item.repo, shown.ref));
    return "simulated";
  }
  const sha = await deps.github.readRef(item.repo, shown.ref);
  if (sha === null) return "gone";
  if (sha !== shown.sha) return "moved";
  const answer = await auditEffect(
    deps.store,
    { kind: "claim.release", repo: item.repo, item: item.id, body: { issue: item.issue, ref: shown.ref, sha: shown.sha, by: "owner", holder: shown.words.host ?? null } },
    () => deps.effects.github.deleteClaim(item.repo, shown.ref),
    (result) => ({ answer: result }),
  );
  deps.store.statement("UPDATE issue_claims SET released_at = ? WHERE item = ? AND released_at IS NULL").run(isoSeconds(now()), item.id);
  return answer === "deleted" ? "released" : "gone";
}

function toRow(row: Record<string, unknown>): ClaimRow {
  return {
    item: Number(row.item), repo: String(row.repo), issue: Number(row.issue), ref: String(row.ref), sha: String(row.sha),
    host: row.host === null ? null : String(row.host), mine: row.mine === 1, action_id: row.action_id === null ? null : String(row.action_id),
    seen_at: String(row.seen_at), released_at: row.released_at === null ? null : String(row.released_at),
    checked_at: row.checked_at === null || row.checked_at === undefined ? null : String(row.checked_at),
  };
}
