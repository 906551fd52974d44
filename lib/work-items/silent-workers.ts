/**
 * Workers whose agent has not reported starting. A Claude Code or Codex worker's first hook
 * (SessionStart) opens its episode; one that stops before any hook, at its folder-trust
 * question (Claude Code's "Is this a project you trust?", Codex's "Trust this folder?"), at
 * Codex's review of hooks it does not trust, or at a login, runs, holds its slot and works on
 * nothing, and its registry is simply empty, which is unknown, never idle (DESIGN rule 1).
 * Past `FIRST_HOOK_SECONDS` after its start such a worker is one the owner must look at: the
 * tick raises a `worker_silent` anomaly for it (listed under "needs you" by `status` and the
 * dashboard, told as an anomaly), retracted once its agent reports, resolved `gone` when its
 * session ends; `doctor` says the same. Its pane is read for a hint of why (the trust question,
 * a login), and only ever as a hint in the message: what the pane shows is never a status.
 *
 * Only profiles whose agent reports through hooks are looked at (claude, codex); a worker whose
 * registry robot-army cannot read at all (generic) says nothing here.
 */
import { now, parseTimestamp } from "../clock.ts";
import type { Config, WorkerProfile } from "../config.ts";
import type { DaemonEvent } from "../events.ts";
import { readRegistry } from "./idleness.ts";
import { journalAt } from "../episodes/journal.ts";
import { readLedger } from "../episodes/ledger.ts";
import { readRecord } from "../sessions/records.ts";
import { terminalLines } from "../sessions/terminal-output.ts";
import { listAnomalies, raiseAnomaly, resolveAnomaly, retractAnomaly } from "../store/anomalies.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "./queries.ts";
import { openSessions } from "./sessions.ts";
import type { StoredSession } from "./sessions.ts";

/** How long after its start a worker's agent may take to report before it is one the owner must look at. */
export const FIRST_HOOK_SECONDS = 90;

/** The profiles whose agent reports its start through hooks. */
const HOOK_PROFILES: ReadonlySet<WorkerProfile> = new Set(["claude", "codex"]);

/** What a pane may show of why an agent has not started, each with the words the owner reads. */
const PANE_HINTS: readonly { pattern: RegExp; hint: (repo: string) => string }[] = [
  { pattern: /Is this a project you (created or one you )?trust|Yes, I trust this folder/i, hint: (repo) => `its pane shows Claude Code's folder-trust question: attach and answer it, or record your yes for every worker of the repository with "robot-army trust ${repo}"` },
  { pattern: /\/login\b|Select login method|Invalid API key|Please run \/login|not logged in/i, hint: () => "its pane shows Claude Code asking for a login or an API key: attach and log in, or set the key in the daemon's environment" },
  { pattern: /Trust this folder\?|Trust and continue/, hint: (repo) => `its pane shows Codex's folder-trust question: attach and answer it, or record your yes for every worker of the repository with "robot-army trust ${repo}"` },
  // robot-army states the hash of each hook it gives Codex; a Codex that computes another asks the owner to review them.
  { pattern: /Hooks need review|hooks need review before they can run/, hint: () => "its pane shows Codex asking to review robot-army's hooks (a Codex that does not recognise their trust): attach and trust them, or report the Codex version to robot-army" },
  { pattern: /Sign in with ChatGPT|Provide your own API key/, hint: () => "its pane shows Codex asking for a login or an API key: attach and log in, or set the key in the daemon's environment" },
];

/** One worker that has not reported starting. */
export interface SilentWorker {
  item: number;
  repo: string;
  issue: number;
  session: string;
  name: string;
  started_at: string;
  /** Seconds since its start. */
  seconds: number;
  /** What its pane shows of why, when it shows something known; never a status. */
  hint: string | null;
}

/** The likely reasons, for the owner, when the pane gives no hint. */
export const LIKELY_REASONS = "the agent's folder-trust question (robot-army trust <repo> records your yes), a login, or an agent that cannot start";

/** The workers of this host whose agent, a hook-reporting one, has not reported starting within FIRST_HOOK_SECONDS. */
export async function silentWorkers(deps: { store: Store; config: Pick<Config, "worker">; host: string; sessionRoot: string }, at: Date = now()): Promise<SilentWorker[]> {
  const found: SilentWorker[] = [];
  for (const row of openSessions(deps.store)) {
    if (row.host !== deps.host) continue;
    const profile = row.profile ?? deps.config.worker.profile;
    if (!HOOK_PROFILES.has(profile)) continue;
    const started = parseTimestamp(row.started_at);
    if (!started) continue;
    const seconds = Math.floor((at.getTime() - started.getTime()) / 1000);
    if (seconds < FIRST_HOOK_SECONDS) continue;
    if (await hasReported(row, profile)) continue;
    const item = getItem(deps.store, row.item);
    if (!item) continue;
    found.push({
      item: item.id, repo: item.repo, issue: item.issue, session: row.id, name: row.name, started_at: row.started_at, seconds,
      hint: await paneHint(deps.sessionRoot, row, item.repo),
    });
  }
  return found;
}

/** The one line the owner reads of a silent worker: since when, why it may be, and what helps. */
export function describeSilent(worker: SilentWorker): string {
  const why = worker.hint ?? `likely ${LIKELY_REASONS.replace("<repo>", worker.repo)}`;
  return `worker ${worker.name} of item ${worker.item} (${worker.repo}#${worker.issue}) is waiting before its first hook: ` +
    `its agent has not reported starting since ${worker.started_at}; ${why}; "robot-army attach ${worker.item}" to look`;
}

/** What one pass did. */
export interface SilentResult {
  raised: number;
  retracted: number;
  events: DaemonEvent[];
}

/**
 * The tick's step: a `worker_silent` anomaly for each silent worker (once per session), and
 * the open ones closed whose worker has reported since (retracted) or whose session ended (gone).
 */
export async function reportSilentWorkers(deps: { store: Store; config: Pick<Config, "worker">; host: string; sessionRoot: string }): Promise<SilentResult> {
  const result: SilentResult = { raised: 0, retracted: 0, events: [] };
  const silent = await silentWorkers(deps);
  for (const worker of silent) {
    const detail = describeSilent(worker);
    const { anomaly, raised } = raiseAnomaly(deps.store, { kind: "worker_silent", actionId: worker.session, repo: worker.repo, item: worker.item, detail });
    if (!raised) continue;
    result.raised++;
    result.events.push({ event: "worker_silent", line: `anomaly ${anomaly.id}: ${detail}`, anomaly: anomaly.id, item: worker.item, session: worker.session });
  }
  const stillSilent = new Set(silent.map((worker) => worker.session));
  const open = new Map(openSessions(deps.store).map((row) => [row.id, row]));
  for (const anomaly of listAnomalies(deps.store, { open: true, kind: "worker_silent" })) {
    if (anomaly.action_id === null || stillSilent.has(anomaly.action_id)) continue;
    const row = open.get(anomaly.action_id);
    // Another host's worker is that host's to look at.
    if (row && row.host !== deps.host) continue;
    if (row) retractAnomaly(deps.store, anomaly.id);
    else resolveAnomaly(deps.store, anomaly.id, "gone");
    result.retracted++;
    result.events.push({
      event: "worker_silent_ended", line: `anomaly ${anomaly.id} ${row ? "retracted: the worker's agent has reported starting" : "resolved: the worker's session has ended"}`,
      anomaly: anomaly.id, item: anomaly.item,
    });
  }
  return result;
}

/** Whether the worker's agent has reported: its episode is open, or the ledger has any line of its key (opened, then ended). */
async function hasReported(row: StoredSession, profile: WorkerProfile): Promise<boolean> {
  const registry = await readRegistry(row, profile);
  if (registry.known) return true;
  try {
    const ledger = await readLedger(journalAt(row.worktree));
    return ledger.events.some((event) => event.key === row.episode_key);
  } catch {
    // A journal that cannot be read says nothing of a start: not silent, not started; asked again next pass.
    return true;
  }
}

/** A hint from the worker's pane, when its session recorded one and it shows something known. */
async function paneHint(sessionRoot: string, row: StoredSession, repo: string): Promise<string | null> {
  try {
    const terminal = readRecord(sessionRoot, row.id)?.terminal;
    if (!terminal) return null;
    const read = await terminalLines(terminal, 60);
    if ("unreadable" in read) return null;
    const text = read.lines.join("\n");
    return PANE_HINTS.find(({ pattern }) => pattern.test(text))?.hint(repo) ?? null;
  } catch {
    return null;
  }
}
