/** How open episodes are shown to people, the same way in every command that lists them. */
import { hostname } from "node:os";
import { isoSeconds } from "../clock.ts";
import { formatAge } from "../duration.ts";
import { printable } from "../printable.ts";
import { liveness } from "../processes.ts";
import type { Liveness } from "../processes.ts";
import { shown } from "./journal.ts";
import type { Journal } from "./journal.ts";
import { newestEventByEpisode } from "./ledger.ts";
import type { LedgerContents } from "./ledger.ts";
import type { OpenEntry } from "./open-episodes.ts";
import { lastSignOfLife } from "./recovery.ts";
import type { LastSeen } from "./recovery.ts";

/** An open episode with what is known of its life, ready to print or to emit as JSON. */
export interface EpisodeView {
  key: string;
  file: string;
  id: string | null;
  status: string | null;
  status_changed_at: string | null;
  /** What the worker asks its owner, while its status is `needs_info`. */
  needs_info_reason: string | null;
  started_at: string | null;
  branch: string | null;
  host: string | null;
  client_pid: number | null;
  /** running / exited / unknown on this host; `other-host` when it ran elsewhere. */
  client: Liveness | "other-host" | null;
  last_seen: string | null;
  last_seen_age: string | null;
  problem: string | null;
}

/** Measures open episodes: last sign of life and, on this host, whether the client runs. */
export function viewEpisodes(journal: Journal, entries: OpenEntry[], ledger: LedgerContents, now: Date): EpisodeView[] {
  const newest = newestEventByEpisode(ledger);
  return entries.map((entry) => {
    const episode = entry.episode;
    const seen: LastSeen | undefined = episode ? lastSignOfLife(episode, newest) : undefined;
    return {
      key: entry.key,
      file: shown(journal, entry.file),
      id: episode?.id ?? null,
      status: episode?.status ?? null,
      status_changed_at: episode?.status_changed_at ?? null,
      needs_info_reason: episode?.needs_info_reason ?? null,
      started_at: episode?.started_at ?? null,
      branch: episode?.branch ?? null,
      host: episode?.host ?? null,
      client_pid: episode?.client.pid ?? null,
      client: episode ? (episode.host === hostname() ? liveness(episode.client) : "other-host") : null,
      last_seen: seen && "at" in seen ? isoSeconds(seen.at) : null,
      last_seen_age: seen && "at" in seen ? formatAge(now.getTime() - seen.at.getTime()) : null,
      problem: entry.problem ?? (seen && "problem" in seen ? seen.problem : null),
    };
  });
}

/** The lines that show one open episode. */
export function describeEpisode(view: EpisodeView): string[] {
  if (!view.id) return [`${view.key}  unreadable  ${view.file}`, `  problem    ${view.problem}`];
  const client = view.client === "other-host" ? `pid ${view.client_pid} on ${view.host}` : `pid ${view.client_pid}, ${view.client}`;
  return [
    `${view.key}  ${view.status}  episode ${view.id}`,
    `  started    ${view.started_at} on ${view.host}${view.branch ? `, branch ${view.branch}` : ""}`,
    `  status     ${view.status} since ${view.status_changed_at}`,
    ...(view.needs_info_reason === null ? [] : [`  asks       ${printable(view.needs_info_reason)}`]),
    view.last_seen ? `  last seen  ${view.last_seen} (${view.last_seen_age} ago)` : `  last seen  unreadable: ${view.problem}`,
    `  client     ${client}`,
  ];
}
