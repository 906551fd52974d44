/**
 * Open episodes: one YAML file per key under `.ai/local/state/sessions-open/`. A file that
 * cannot be read is still listed, with what is wrong, so that nothing open goes unseen; one
 * that is a symbolic link is listed so too, and its target never read.
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, sep } from "node:path";
import { createFileExclusive, writeFileAtomic } from "../atomic.ts";
import { describeProblem, validatorFor } from "../schema.ts";
import type { Journal } from "./journal.ts";
import { JournalLinkError, readJournalFile, readJournalFileIfPresent, refuseLinks } from "./_journal-file.ts";
import type { ProcessIdentity } from "../processes.ts";

/** An open episode as its file holds it. */
export interface Episode {
  schema: 1;
  id: string;
  key: string;
  host: string;
  client: ProcessIdentity;
  started_at: string;
  branch: string | null;
  start_head: string | null;
  status: EpisodeStatus;
  status_changed_at: string;
  /** What the worker asks its owner, while `status` is `needs_info` (absent otherwise). */
  needs_info_reason?: string;
  /**
   * Who said so, while `needs_info`: the worker itself (`episode needs-info`; only busy answers
   * it), or its agent's prompt that blocks it until answered (a permission, a question; the end
   * of its turn answers it too). Absent: the worker.
   */
  needs_info_by?: NeedsInfoBy;
  /** The agent's own session id (its transcript), when it is not the managed session's id robot-army started it with. */
  agent_session_id?: string;
}

/** Who said an episode needs info: the worker itself, or its agent's blocking prompt. */
export type NeedsInfoBy = "worker" | "prompt";

/** An open episode's status: `needs_info` while the worker waits for its owner's answer. */
export type EpisodeStatus = "busy" | "idle" | "needs_info";

/** One file in the open folder: the episode, or why it could not be read. */
export interface OpenEntry {
  key: string;
  file: string;
  episode?: Episode;
  problem?: string;
}

/** The file that holds the open episode with this key. */
export function openFile(journal: Journal, key: string): string {
  // A key is one name (lib/episodes/journal.ts resolveKey): appended to the folder, not joined, as it is asked for every worker every time.
  return key.includes(sep) ? join(journal.openDir, `${key}.yaml`) : `${journal.openDir}${sep}${key}.yaml`;
}

/** Every open episode, sorted by key. */
export async function listOpen(journal: Journal): Promise<OpenEntry[]> {
  refuseLinks(journal, journal.openDir);
  if (!existsSync(journal.openDir)) return [];
  const names = readdirSync(journal.openDir).filter((name) => name.endsWith(".yaml") && !name.startsWith(".")).sort();
  return Promise.all(names.map((name) => readEntry(journal, name.slice(0, -".yaml".length))));
}

/**
 * The open episode with this key, or undefined when none is open. A folder on the way that
 * is a symbolic link is refused (JournalLinkError), as `listOpen` refuses it; the file itself
 * a link is an entry saying so. One walk of the path: the daemon and the dashboard ask this
 * of every worker, every time.
 */
export async function findOpen(journal: Journal, key: string): Promise<OpenEntry | undefined> {
  const file = openFile(journal, key);
  let text: string | undefined;
  try {
    text = readJournalFileIfPresent(journal, file);
  } catch (error) {
    if (error instanceof JournalLinkError && error.link !== file) throw error;
    return unreadable(key, file, error);
  }
  return text === undefined ? undefined : parseEntry(key, file, text);
}

async function readEntry(journal: Journal, key: string): Promise<OpenEntry> {
  const file = openFile(journal, key);
  try {
    return await parseEntry(key, file, readJournalFile(journal, file));
  } catch (error) {
    return unreadable(key, file, error);
  }
}

/** What is wrong with an open file that could not be read. */
function unreadable(key: string, file: string, error: unknown): OpenEntry {
  if (error instanceof JournalLinkError) return { key, file, problem: "is a symbolic link, never followed out of the journal: remove it" };
  return { key, file, problem: `cannot be read: ${(error as Error).message.split("\n")[0]}` };
}

/**
 * The last text read from each open file and what it parsed to. The daemon and the dashboard
 * read every worker's file again and again and it rarely changes: the same text is not parsed
 * again (parsing was most of a dashboard page's time). Keyed by the text itself, so a file
 * changed in any way is parsed afresh; each caller gets its own copy to change. Bounded: the
 * oldest read falls out past `PARSED_KEPT` files.
 */
const parsed = new Map<string, { text: string; entry: OpenEntry }>();
const PARSED_KEPT = 1_000;

async function parseEntry(key: string, file: string, text: string): Promise<OpenEntry> {
  const known = parsed.get(file);
  // The file is named for its key, so the same file and the same text is the same answer.
  if (known && known.text === text) return copyOf(known.entry);
  const entry = await parseText(key, file, text);
  parsed.delete(file);
  parsed.set(file, { text, entry });
  if (parsed.size > PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
  return copyOf(entry);
}

function copyOf(entry: OpenEntry): OpenEntry {
  return entry.episode ? { ...entry, episode: structuredClone(entry.episode) } : { ...entry };
}

/** yaml, loaded on first need (most commands never read an episode) and once. */
let yaml: Promise<typeof import("yaml")> | undefined;

async function parseText(key: string, file: string, text: string): Promise<OpenEntry> {
  let value: unknown;
  try {
    const { parse } = await (yaml ??= import("yaml"));
    // logLevel "error": yaml would print its warnings, each with lines of the file, on stderr.
    value = parse(text, { logLevel: "error" });
  } catch (error) {
    return unreadable(key, file, error);
  }
  const problems = (await validatorFor("episode"))(value);
  if (problems.length) return { key, file, problem: problems.map(describeProblem).join("; ") };
  // Ending or recovering it acts on the file its key names: a file whose key is another's would have that one removed.
  const episode = value as Episode;
  if (episode.key !== key) return { key, file, problem: `names key "${episode.key}", not the "${key}" its file is named for` };
  return { key, file, episode };
}

async function serialise(episode: Episode): Promise<string> {
  const problems = (await validatorFor("episode"))(episode);
  if (problems.length) throw new TypeError(`Episode "${episode.key}" is not valid: ${problems.map(describeProblem).join("; ")}`);
  const { stringify } = await (yaml ??= import("yaml"));
  return "# An open robot-army episode. Closed by `robot-army episode end` or `robot-army recover episodes`.\n" + stringify(episode);
}

/** Creates the open file; false when an episode with that key is already open. */
export async function createOpen(journal: Journal, episode: Episode): Promise<boolean> {
  refuseLinks(journal, openFile(journal, episode.key));
  return createFileExclusive(openFile(journal, episode.key), await serialise(episode));
}

/** Replaces the open file of an episode (status changes). */
export async function rewriteOpen(journal: Journal, episode: Episode): Promise<void> {
  refuseLinks(journal, journal.openDir);
  writeFileAtomic(openFile(journal, episode.key), await serialise(episode));
}

/** Removes the open file once the episode's record is written. */
export function removeOpen(journal: Journal, key: string): void {
  rmSync(openFile(journal, key), { force: true });
}
