/**
 * What a worker does with its episodes: start one, mark it idle, busy or needing its
 * owner, end it into a record. Each step leaves a ledger event stamped with the episode's id.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { changedFiles, commitsBetween, currentBranch, headCommit } from "../boundaries/git.ts";
import type { CommitSummary } from "../boundaries/git.ts";
import { isoSeconds } from "../clock.ts";
import { PreconditionError, UsageError } from "../errors.ts";
import { printable } from "../printable.ts";
import { redact } from "../redact.ts";
import { identify } from "../processes.ts";
import { shown } from "./journal.ts";
import type { Journal } from "./journal.ts";
import { appendEvent } from "./ledger.ts";
import { createOpen, findOpen, removeOpen, rewriteOpen } from "./open-episodes.ts";
import type { Episode, EpisodeStatus, NeedsInfoBy } from "./open-episodes.ts";
import { writeRecord } from "./records.ts";
import { refuseJournalLinks } from "./_journal-file.ts";

/** Opens an episode under `key`; refused when that key is already open. */
export async function startEpisode(journal: Journal, options: { key: string; clientPid: number; now: Date }): Promise<Episode> {
  refuseJournalLinks(journal);
  const at = isoSeconds(options.now);
  const episode: Episode = {
    schema: 1,
    id: randomUUID(),
    key: options.key,
    host: hostname(),
    client: identify(options.clientPid),
    started_at: at,
    branch: (await currentBranch(journal.root)) ?? null,
    start_head: (await headCommit(journal.root)) ?? null,
    status: "busy",
    status_changed_at: at,
  };
  if (!(await createOpen(journal, episode))) {
    const open = await findOpen(journal, options.key);
    const which = open?.episode ? `episode ${open.episode.id}, started ${open.episode.started_at}` : shown(journal, open?.file ?? "");
    throw new PreconditionError(
      `Episode key "${options.key}" is already open (${which}); end it with "robot-army episode end --key ${options.key}" or, if its worker is gone, close it with "robot-army recover episodes"`,
    );
  }
  await appendEvent(journal, {
    at, episode: episode.id, key: episode.key, kind: "episode.start",
    data: { branch: episode.branch, head: episode.start_head, client_pid: episode.client.pid },
  });
  return episode;
}

/** The readable open episode with this key; a missing or unreadable one is a precondition error. */
export async function requireOpen(journal: Journal, key: string): Promise<Episode> {
  const entry = await findOpen(journal, key);
  if (!entry) throw new PreconditionError(`No open episode with key "${key}"; "robot-army episode status --all" lists the open ones`);
  if (!entry.episode) throw new PreconditionError(`Open episode "${shown(journal, entry.file)}" ${entry.problem}`);
  return entry.episode;
}

/** The longest question a worker's `needs_info` keeps, in characters once escaped; the rest is cut, marked `…`. */
export const NEEDS_INFO_REASON_MAX = 500;

/**
 * A worker's question as the journal keeps it and the owner reads it: outside text, so a
 * secret in it is redacted, its control characters escaped (it is printed to terminals) and
 * its length capped, in that order (a cap first could cut a secret and hide it from the redactor).
 * @example needsInfoReason("  which database?\n") // "which database?"
 */
export function needsInfoReason(text: string): string {
  const shown = printable(redact(text.trim()));
  return shown.length <= NEEDS_INFO_REASON_MAX ? shown : shown.slice(0, NEEDS_INFO_REASON_MAX - 1) + "…";
}

/** What setting a status did: the episode as it now is, and whether it changed. */
export interface StatusChange {
  episode: Episode;
  changed: boolean;
}

/** What a status change is asked to do. */
export interface StatusRequest {
  key: string;
  status: EpisodeStatus;
  /** For `needs_info`: what the worker asks. */
  reason?: string;
  /** For `needs_info`: who says so (default the worker itself). */
  by?: NeedsInfoBy;
  /** For `idle`: the agent's turn ended (Claude Code's Stop), which a blocking prompt's answer comes before. */
  turnEnded?: boolean;
  now: Date;
}

/**
 * Marks an episode idle, busy, or `needs_info` with the worker's question (`reason`); a
 * change counts as a sign of life. Busy answers a `needs_info` (the owner answered: the
 * worker is at work again) and drops its question. Idle does not (a worker that asked and
 * ended its turn still waits for the answer), so the episode stays `needs_info`, unchanged;
 * except the end of a turn after an agent's blocking prompt (`by: "prompt"`): the agent could
 * not have ended its turn before the prompt was answered. The same question asked again
 * changes nothing, so `status_changed_at` stays the moment it was asked.
 */
export async function setStatus(journal: Journal, options: StatusRequest): Promise<StatusChange> {
  refuseJournalLinks(journal);
  const episode = await requireOpen(journal, options.key);
  const reason = options.status === "needs_info" ? needsInfoReason(options.reason ?? "") : undefined;
  if (options.status === "needs_info" && !reason) throw new UsageError("A worker's needs_info says what it asks: the reason is empty");
  const promptAnswered = options.turnEnded === true && episode.needs_info_by === "prompt";
  if (options.status === "idle" && episode.status === "needs_info" && !promptAnswered) return { episode, changed: false };
  if (options.status === "needs_info" && episode.status === "needs_info" && reason === episode.needs_info_reason) return { episode, changed: false };
  const at = isoSeconds(options.now);
  const { needs_info_reason: _reason, needs_info_by: _by, ...rest } = episode;
  const asked = reason ? { needs_info_reason: reason, ...(options.by === "prompt" ? { needs_info_by: "prompt" as const } : {}) } : {};
  const updated: Episode = { ...rest, status: options.status, status_changed_at: at, ...asked };
  // Recovery may have closed it since it was read: never bring a closed episode back.
  if ((await findOpen(journal, options.key))?.episode?.id !== episode.id) {
    throw new PreconditionError(`Episode "${options.key}" (${episode.id}) was closed while its status was being set`);
  }
  await rewriteOpen(journal, updated);
  const data = reason ? { reason, ...(options.by === "prompt" ? { by: "prompt" } : {}) } : {};
  await appendEvent(journal, { at, episode: episode.id, key: episode.key, kind: `episode.${options.status}`, data });
  return { episode: updated, changed: true };
}

/** What ending an episode produced. */
export interface EndResult {
  episode: Episode;
  recordFile: string;
  commits: CommitSummary[] | null;
  changedFiles: string[] | null;
}

/** Ends an episode: writes its record (commits and files changed since it started), logs it, removes the open file. */
export async function endEpisode(journal: Journal, options: { key: string; outcome: string; now: Date }): Promise<EndResult> {
  refuseJournalLinks(journal);
  const episode = await requireOpen(journal, options.key);
  const at = isoSeconds(options.now);
  const endHead = (await headCommit(journal.root)) ?? null;
  let commits: CommitSummary[] | null = [];
  let files: string[] | null = [];
  let unlisted: string | undefined;
  if (endHead) {
    try {
      commits = await commitsBetween(journal.root, episode.start_head ?? undefined, endHead);
      files = await changedFiles(journal.root, episode.start_head ?? undefined, endHead);
    } catch (error) {
      // The start commit may be gone (history rewritten and pruned): say so rather than claim none.
      commits = null;
      files = null;
      unlisted = (error as Error).message;
    }
  }
  const { file: recordFile, sha256 } = await writeRecord(journal, {
    schema: 1, id: episode.id, key: episode.key, host: episode.host, branch: episode.branch,
    started_at: episode.started_at, ended_at: at, outcome: options.outcome,
    start_head: episode.start_head, end_head: endHead,
    commits, changed_files: files, written_by: "episode end",
  }, endBody(episode, { at, outcome: options.outcome, commits, files, unlisted }));
  await appendEvent(journal, {
    at, episode: episode.id, key: episode.key, kind: "episode.end",
    // The record's hash beside its name: the proof cleanup reads that an uncommitted record is this one, as written.
    data: { outcome: options.outcome, record: shown(journal, recordFile), sha256, commits: commits?.length ?? null },
  });
  removeOpen(journal, episode.key);
  return { episode, recordFile, commits, changedFiles: files };
}

function endBody(
  episode: Episode,
  end: { at: string; outcome: string; commits: CommitSummary[] | null; files: string[] | null; unlisted?: string },
): string {
  const lines = [
    `# Episode ${episode.key}`,
    "",
    `Opened ${episode.started_at} on ${episode.host}${episode.branch ? `, branch ${episode.branch}` : ""}; ` +
    `closed ${end.at} by \`robot-army episode end\` with outcome ${end.outcome}.`,
    "",
  ];
  if (end.commits === null || end.files === null) {
    lines.push(`The commits since the start could not be listed: ${end.unlisted}`);
    return lines.join("\n");
  }
  lines.push(`## Commits (${end.commits.length})`, "", ...(end.commits.length ? end.commits.map((c) => `- ${c.sha} ${c.subject}`) : ["none"]), "");
  lines.push(`## Changed files (${end.files.length})`, "", ...(end.files.length ? end.files.map((f) => `- ${f}`) : ["none"]));
  return lines.join("\n");
}
