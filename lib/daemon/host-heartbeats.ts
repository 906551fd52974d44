/**
 * Hosts are alive or not, by one heartbeat each: at `live`, every third of `[claims] lease`,
 * the daemon advances this host's heartbeat reference `refs/robot-army/hosts/<host>` in each
 * configured, onboarded repository (a new commit whose parent is the last, moved by
 * fast-forward only; audited `host.heartbeat`), and lists the other hosts' heartbeats there.
 * A host is judged by this machine's clock alone: `hosts_seen` keeps, for each host, the
 * commit its heartbeat stood at and when this store first saw it there, so a heartbeat still
 * at the same commit past the lease means its host is gone, whatever the host's own clock says.
 *
 * In the same pass every claim there is listed (one request): a claim of this host whose
 * reference another host moved, or deleted, is lost (fencing); one of another host's still
 * standing spares dispatch its own read of it. Its item's worker is left
 * alone (nothing is killed), nothing more is started for it here (its record now names the
 * holder), and the owner is told by the `claim_lost` anomaly. A heartbeat of this host that
 * another writer advanced means two robot-army daemons use this host's name: the owner is
 * told by `host_name_shared`.
 *
 * Requests per repository and interval: the hosts listed, a commit and a reference moved for
 * this host's heartbeat, the claims listed, and one commit read for each claim found moved.
 */
import { isoSeconds, now } from "../clock.ts";
import type { Config } from "../config.ts";
import type { Effects } from "../effects.ts";
import type { DaemonEvent } from "../events.ts";
import type { GitHubReader } from "../boundaries/github-types.ts";
import { rateLimitTight } from "../boundaries/rate-budget.ts";
import { raiseAnomaly } from "../store/anomalies.ts";
import { actionRecords, auditEffect } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import {
  CLAIM_NAMESPACE, HOST_NAME, confirmClaim, doubtClaim, heartbeatMessage, heldClaimsIn, leaseMs, markClaimLost, othersClaimsIn, readClaimMessage, readHeartbeatMessage,
} from "../work-items/issue-claims.ts";
import { getRepoRecord } from "../repos/records.ts";
import { issuesAtWork } from "../work-items/sessions.ts";

/** The namespace of heartbeats: one reference per host. */
export const HOSTS_NAMESPACE = "refs/robot-army/hosts";

/** A host's heartbeat reference. */
export function hostRef(host: string): string {
  return `${HOSTS_NAMESPACE}/${host}`;
}

/**
 * How often this host's heartbeat is advanced: a third of the lease, so two missed beats
 * still keep it alive; half of it while the rate limit is tight (lib/boundaries/rate-budget.ts),
 * which still moves it twice within every lease another host judges it by.
 */
export function heartbeatEveryMs(config: Config, tight = false): number {
  return Math.max(1000, Math.floor(leaseMs(config) / (tight ? 2 : 3)));
}

/** A host as its heartbeats show it to this store: when it last moved, where, and whether it is past the lease. */
export interface HostSeen {
  host: string;
  /** This machine (`daemon.host`, else its hostname). */
  this_host: boolean;
  /** The repositories where its heartbeat was listed. */
  repos: string[];
  /** When this store last saw its heartbeat move (its newest commit first seen), in any repository. */
  moved_at: string;
  /** Still since longer than the lease, by this machine's clock: taken for gone. */
  gone: boolean;
}

/** Every host whose heartbeat this store has listed, this host first, then by name. */
export function hostsSeen(store: Store, config: Config, host: string, at: Date = now()): HostSeen[] {
  const rows = store.statement("SELECT repo, host, first_seen_at, checked_at FROM hosts_seen ORDER BY host, repo").all() as Array<{ repo: string; host: string; first_seen_at: string; checked_at: string }>;
  const hosts = new Map<string, HostSeen & { checked_at: string }>();
  for (const row of rows) {
    const seen = hosts.get(row.host) ?? { host: row.host, this_host: row.host === host, repos: [], moved_at: row.first_seen_at, gone: false, checked_at: row.checked_at };
    seen.repos.push(row.repo);
    if (row.first_seen_at > seen.moved_at) [seen.moved_at, seen.checked_at] = [row.first_seen_at, row.checked_at];
    hosts.set(row.host, seen);
  }
  const lease = leaseMs(config);
  void at;
  // Gone as dispatch judges it: listed at the same commit by this machine for longer than the lease.
  return [...hosts.values()]
    .map(({ checked_at, ...seen }) => ({ ...seen, gone: !seen.this_host && Date.parse(checked_at) - Date.parse(seen.moved_at) > lease }))
    .sort((a, b) => Number(b.this_host) - Number(a.this_host) || a.host.localeCompare(b.host));
}

/** What the step works with. */
export interface HeartbeatDeps {
  store: Store;
  config: Config;
  github: GitHubReader;
  effects: Effects;
  host: string;
  report: (event: DaemonEvent) => void;
}

/** What one pass did. */
export interface HeartbeatResult {
  /** Repositories whose heartbeat was advanced. */
  beats: number;
  /** Claims found lost (moved or deleted by someone else). */
  lost: number;
  /** Repositories GitHub could not be asked about this pass (tried again next pass). */
  failed: number;
}

/**
 * Advances this host's heartbeat and reads the others' and this host's claims, in each
 * onboarded repository where this store's last beat (its own row in `hosts_seen`) is older
 * than the interval (stretched while the rate limit is tight): one `run --once` after
 * another beats no more often than a daemon running on. Below `live` nothing.
 */
export async function heartbeatPass(deps: HeartbeatDeps): Promise<HeartbeatResult> {
  const result: HeartbeatResult = { beats: 0, lost: 0, failed: 0 };
  if (deps.effects.github.simulated) return result;
  const tight = rateLimitTight(deps.github.rateLimit(), now());
  const every = heartbeatEveryMs(deps.config, tight);
  const at = now().getTime();
  for (const repo of Object.keys(deps.config.repos)) {
    if (getRepoRecord(deps.store, repo) === undefined) continue;
    const last = deps.store.statement("SELECT first_seen_at FROM hosts_seen WHERE repo = ? AND host = ?").get(repo, deps.host) as { first_seen_at: string } | undefined;
    if (last && at - Date.parse(last.first_seen_at) < every) continue;
    try {
      await beat(deps, repo, result);
    } catch (error) {
      result.failed++;
      const why = error instanceof Error ? error.message : String(error);
      deps.report({ event: "heartbeat_failed", line: `heartbeat in ${repo} not advanced (${why}); tried again next pass`, repo });
    }
  }
  return result;
}

async function beat(deps: HeartbeatDeps, repo: string, result: HeartbeatResult): Promise<void> {
  const { store, github, host } = deps;
  const listed = await github.matchingRefs(repo, `${HOSTS_NAMESPACE}/`);
  const seen = new Map<string, string>();
  for (const { ref, sha } of listed) {
    const name = ref.slice(HOSTS_NAMESPACE.length + 1);
    if (HOST_NAME.test(name)) seen.set(name, sha);
  }
  const stamp = isoSeconds(now());
  const mine = store.statement("SELECT sha FROM hosts_seen WHERE repo = ? AND host = ?").get(repo, host) as { sha: string } | undefined;
  const current = seen.get(host) ?? null;
  if (mine && current !== null && current !== mine.sha && !(await madeHere(deps, repo, current))) {
    const { raised } = raiseAnomaly(store, {
      kind: "host_name_shared", actionId: `${repo} ${host}`, repo,
      detail: `the heartbeat of host ${host} in ${repo} was advanced by another writer: two robot-army daemons use this host's name; give each machine its own ([daemon] host)`,
    });
    if (raised) deps.report({ event: "host_name_shared", line: `anomaly: another robot-army advances this host's heartbeat (${host}) in ${repo}`, repo });
  }
  // Every other host as listed: a new commit restarts its clock here; one no longer listed is forgotten.
  store.transaction(() => {
    for (const [name, sha] of seen) {
      if (name === host) continue;
      store.statement(
        `INSERT INTO hosts_seen (repo, host, sha, first_seen_at, checked_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (repo, host) DO UPDATE SET first_seen_at = CASE WHEN sha = excluded.sha THEN first_seen_at ELSE excluded.first_seen_at END,
           sha = excluded.sha, checked_at = excluded.checked_at`,
      ).run(repo, name, sha, stamp, stamp);
    }
    for (const row of store.statement("SELECT host FROM hosts_seen WHERE repo = ? AND host != ?").all(repo, host) as Array<{ host: string }>) {
      if (!seen.has(row.host)) store.statement("DELETE FROM hosts_seen WHERE repo = ? AND host = ?").run(repo, row.host);
    }
  });
  const ref = hostRef(host);
  const written = await auditEffect(
    store,
    { kind: "host.heartbeat", repo, body: { ref, host, from: current } },
    async (action) => {
      const message = heartbeatMessage(host, { action, at: stamp, leaseMs: leaseMs(deps.config), working: issuesAtWork(store, repo) });
      if (current === null) {
        const made = await deps.effects.github.createClaim(repo, ref, message);
        return { moved: made.created, sha: made.sha };
      }
      return await deps.effects.github.advanceClaim(repo, ref, current, message);
    },
    (answer) => ({ moved: answer.moved, sha: answer.sha }),
  );
  if (!written.moved || !written.sha) throw new Error(`GitHub refused to move ${ref}: another writer moved it first`);
  store.statement(
    `INSERT INTO hosts_seen (repo, host, sha, first_seen_at, checked_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (repo, host) DO UPDATE SET sha = excluded.sha, first_seen_at = excluded.first_seen_at, checked_at = excluded.checked_at`,
  ).run(repo, host, written.sha, stamp, stamp);
  result.beats++;
  try {
    await fence(deps, repo, result);
  } catch (error) {
    result.failed++;
    const why = error instanceof Error ? error.message : String(error);
    deps.report({ event: "claims_unlisted", line: `claims in ${repo} could not be listed (${why}); asked again at the next heartbeat`, repo });
  }
}


/** Whether the item is finished here (done or abandoned). */
function finished(store: Store, item: number): boolean {
  const row = store.statement("SELECT state FROM work_items WHERE id = ?").get(item) as { state: string } | undefined;
  return row?.state === "done" || row?.state === "abandoned";
}

/** Whether `action` is one of this store's claim.create actions for the item. */
function ownClaimAction(store: Store, item: number, action: string): boolean {
  return actionRecords(store, action).some((record) => record.phase === "intent" && record.kind === "claim.create" && record.item === item);
}

/** Whether this store wrote the heartbeat commit `sha` (a crash came between moving it and keeping it on record): its message names a host.heartbeat action of this store's. */
async function madeHere(deps: HeartbeatDeps, repo: string, sha: string): Promise<boolean> {
  const action = readHeartbeatMessage(await deps.github.readCommitMessage(repo, sha)).action;
  return action !== undefined && actionRecords(deps.store, action).some((record) => record.phase === "intent" && record.kind === "host.heartbeat");
}

/**
 * Every claim in `repo` as GitHub lists them, in one request, when this store knows of any:
 * one of this host's another host moved, or someone deleted, is lost; one another host held,
 * still at its commit, is confirmed (dispatch asks nothing about it for a lease), and one
 * moved or gone is marked to be read again by the next pass that needs it.
 */
async function fence(deps: HeartbeatDeps, repo: string, result: HeartbeatResult): Promise<void> {
  const held = heldClaimsIn(deps.store, repo);
  const others = othersClaimsIn(deps.store, repo);
  if (!held.length && !others.length) return;
  const listed = new Map((await deps.github.matchingRefs(repo, `${CLAIM_NAMESPACE}/`)).map(({ ref, sha }) => [ref, sha]));
  deps.store.transaction(() => {
    for (const claim of others) (listed.get(claim.ref) === claim.sha ? confirmClaim : doubtClaim)(deps.store, claim);
  });
  for (const claim of held) {
    const sha = listed.get(claim.ref) ?? null;
    if (sha === claim.sha) continue;
    // Deleted while its item finished: this store's own release, cut short before it was kept on record.
    if (sha === null && finished(deps.store, claim.item)) {
      markClaimLost(deps.store, claim, null, null);
      continue;
    }
    const words = sha === null ? {} : readClaimMessage(await deps.github.readCommitMessage(repo, sha));
    // Moved on by this store itself (a start cut short by a crash before the new commit was kept on record).
    if (sha !== null && words.action !== undefined && ownClaimAction(deps.store, claim.item, words.action)) continue;
    const holder = words.host ?? null;
    markClaimLost(deps.store, claim, sha, holder);
    result.lost++;
    const who = sha === null ? "its reference was deleted by someone else" : `it is now held by ${holder ?? "a claim that names no host robot-army can read"}`;
    const { raised } = raiseAnomaly(deps.store, {
      kind: "claim_lost", actionId: `${claim.ref} ${claim.sha}`, repo, item: claim.item,
      detail: `the claim on ${repo}#${claim.issue} (item ${claim.item}) was lost: ${who}; its worker here, if any, is left running, and nothing more is started for it here`,
    });
    if (raised) deps.report({ event: "claim_lost", line: `anomaly: claim on ${repo}#${claim.issue} (item ${claim.item}) lost: ${who}`, item: claim.item, repo });
  }
}
