/**
 * Recovery of episodes nobody closed. Every open episode is assessed from evidence: its
 * last sign of life (the latest of its start, its last status change and its newest ledger
 * line) and whether its client process still runs. Only an episode proven stranded is
 * closed; anything that cannot be measured is skipped and counted, never closed.
 */
import { hostname } from "node:os";
import { isoSeconds, parseTimestamp } from "../clock.ts";
import { formatAge } from "../duration.ts";
import { liveness as checkLiveness } from "../processes.ts";
import type { Liveness, ProcessIdentity } from "../processes.ts";
import { shown } from "./journal.ts";
import type { Journal } from "./journal.ts";
import { appendEvent, newestEventByEpisode, readLedger } from "./ledger.ts";
import type { LedgerContents } from "./ledger.ts";
import { findOpen, removeOpen } from "./open-episodes.ts";
import type { Episode, OpenEntry } from "./open-episodes.ts";
import { writeRecord } from "./records.ts";
import { refuseJournalLinks } from "./_journal-file.ts";

/** When an episode was last seen alive, or why that cannot be said. */
export type LastSeen = { at: Date } | { problem: string };

/** The latest of an episode's start, its last status change and its newest ledger line. */
export function lastSignOfLife(episode: Episode, newestEvents: Map<string, Date | "unreadable">): LastSeen {
  const started = parseTimestamp(episode.started_at);
  if (!started) return { problem: `started_at "${episode.started_at}" is not a timestamp` };
  const changed = parseTimestamp(episode.status_changed_at);
  if (!changed) return { problem: `status_changed_at "${episode.status_changed_at}" is not a timestamp` };
  const ledger = newestEvents.get(episode.id);
  if (ledger === "unreadable") return { problem: "a ledger line of this episode cannot be read" };
  const times = [started, changed, ...(ledger ? [ledger] : [])];
  return { at: new Date(Math.max(...times.map((t) => t.getTime()))) };
}

/** What recovery concluded about one open episode. */
export type Verdict =
  | { kind: "stranded"; evidence: string }
  | { kind: "live"; reason: string }
  | { kind: "skipped"; reason: string };

/** One open episode, measured and judged. */
export interface Assessment {
  entry: OpenEntry;
  lastSeen: LastSeen | undefined;
  /** The client's state on this host; undefined for another host or an unreadable file. */
  client: Liveness | undefined;
  verdict: Verdict;
}

/** What recovery needs to know besides the journal. */
export interface AssessOptions {
  now: Date;
  thresholdMs: number;
  /** The key of the episode this process is inside ($RA_EPISODE_KEY), if any. */
  ownKey: string | undefined;
  host?: string;
  liveness?: (identity: ProcessIdentity) => Liveness;
}

/** Judges every open episode; pure apart from the liveness check it is given. */
export function assessEpisodes(entries: OpenEntry[], ledger: LedgerContents, options: AssessOptions): Assessment[] {
  const newest = newestEventByEpisode(ledger);
  const host = options.host ?? hostname();
  const liveness = options.liveness ?? checkLiveness;
  return entries.map((entry) => {
    const episode = entry.episode;
    if (!episode) return { entry, lastSeen: undefined, client: undefined, verdict: { kind: "skipped", reason: `the file ${entry.problem}` } };
    const lastSeen = lastSignOfLife(episode, newest);
    const here = episode.host === host;
    const client = here ? liveness(episode.client) : undefined;
    return { entry, lastSeen, client, verdict: judge(episode, lastSeen, here, client, options) };
  });
}

function judge(episode: Episode, lastSeen: LastSeen, here: boolean, client: Liveness | undefined, options: AssessOptions): Verdict {
  if ("problem" in lastSeen) return { kind: "skipped", reason: `last sign of life cannot be read as a timestamp (${lastSeen.problem})` };
  if (options.ownKey === episode.key) return { kind: "live", reason: "this process is inside it" };
  const age = options.now.getTime() - lastSeen.at.getTime();
  if (age < options.thresholdMs) return { kind: "live", reason: `seen ${formatAge(age)} ago` };
  if (client === "running") return { kind: "live", reason: "client still running" };
  if (client === "unknown") return { kind: "skipped", reason: `client pid ${episode.client.pid} cannot be checked on this host` };
  const silent = `silent for ${formatAge(age)}, longer than ${formatAge(options.thresholdMs)}`;
  return {
    kind: "stranded",
    evidence: here
      ? `${silent}; client pid ${episode.client.pid} on this host (${episode.host}) is not running`
      : `${silent}; client on another host (${episode.host}), so age alone decides`,
  };
}

/** What closing one stranded episode produced. */
export interface Recovered {
  episode: Episode;
  recordFile: string;
}

/**
 * Closes a stranded episode into a record that says recovery wrote it and on what
 * evidence, logs `session.recovered` for the recovered episode, removes the open file.
 * Refuses (returns undefined) when the episode showed a sign of life since it was
 * assessed: its open file changed or the ledger has a newer line of it.
 */
export async function recoverEpisode(journal: Journal, assessment: Assessment, options: { now: Date; thresholdMs: number }): Promise<Recovered | undefined> {
  refuseJournalLinks(journal);
  const episode = assessment.entry.episode;
  if (!episode || assessment.verdict.kind !== "stranded" || !assessment.lastSeen || !("at" in assessment.lastSeen)) return undefined;
  const current = await findOpen(journal, episode.key);
  if (current?.episode?.id !== episode.id || current.episode.status_changed_at !== episode.status_changed_at) return undefined;
  const seenNow = lastSignOfLife(current.episode, newestEventByEpisode(await readLedger(journal)));
  if (!("at" in seenNow) || seenNow.at.getTime() !== assessment.lastSeen.at.getTime()) return undefined;
  const at = isoSeconds(options.now);
  const lastSeen = isoSeconds(assessment.lastSeen.at);
  const { file: recordFile, sha256 } = await writeRecord(journal, {
    schema: 1, id: episode.id, key: episode.key, host: episode.host, branch: episode.branch,
    started_at: episode.started_at, ended_at: at, outcome: "interrupted",
    start_head: episode.start_head, end_head: null, commits: [], changed_files: [], written_by: "recover episodes",
  }, [
    `# Episode ${episode.key} (recovered)`,
    "",
    `This record was written by \`robot-army recover episodes\` at ${at}, not by the worker: the episode was never ended.`,
    "",
    "Evidence:",
    `- last sign of life ${lastSeen}`,
    `- ${assessment.verdict.evidence}`,
    "",
    "It claims no commits and no changed files: what the worker did, if anything, is in git, not in this record.",
  ].join("\n"));
  await appendEvent(journal, {
    at, episode: episode.id, key: episode.key, kind: "session.recovered",
    data: { by: "recover episodes", record: shown(journal, recordFile), sha256, last_seen: lastSeen, evidence: assessment.verdict.evidence },
  });
  removeOpen(journal, episode.key);
  return { episode, recordFile };
}
