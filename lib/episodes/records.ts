/**
 * Records: a closed episode becomes `.ai/repo/sessions/<started>--<id>.md`, a Markdown file
 * whose front matter says what the stretch of work was and who wrote the record.
 */
import { sha256Hex } from "../sha256.ts";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic.ts";
import type { CommitSummary } from "../boundaries/git.ts";
import type { Journal } from "./journal.ts";
import { JournalLinkError, readJournalFile, refuseLinks } from "./_journal-file.ts";

/** The front matter of a record. */
export interface EpisodeRecord {
  schema: 1;
  id: string;
  key: string;
  host: string;
  branch: string | null;
  started_at: string;
  ended_at: string;
  outcome: string;
  start_head: string | null;
  end_head: string | null;
  /** null when they could not be listed (never "none" on a guess). */
  commits: CommitSummary[] | null;
  changed_files: string[] | null;
  /** `episode end`, or `recover episodes` when recovery closed it. */
  written_by: string;
}

/** Where the record of an episode goes: named by its start time (file-name safe) and id. */
export function recordFile(journal: Journal, episode: { started_at: string; id: string }): string {
  const started = episode.started_at.replace(/:/g, "-").replace(/[^0-9A-Za-z.+-]/g, "_");
  return join(journal.recordsDir, `${started}--${episode.id}.md`);
}

/** A record as written: its path, and the SHA-256 of its bytes (hex), which the ledger keeps beside the record's name. */
export interface WrittenRecord {
  file: string;
  sha256: string;
}

/**
 * Writes a record with its front matter and a body; returns its path and the hash of what was
 * written. The caller notes both in the ledger (`.ai/local/`, never committed): that note is
 * how cleanup proves an uncommitted record is robot-army's own, as written (lib/cleanup/own-records.ts).
 */
export async function writeRecord(journal: Journal, record: EpisodeRecord, body: string): Promise<WrittenRecord> {
  const { stringify } = await import("yaml");
  const file = recordFile(journal, record);
  const text = `---\n${stringify(record)}---\n\n${body.trimEnd()}\n`;
  refuseLinks(journal, journal.recordsDir);
  writeFileAtomic(file, text);
  return { file, sha256: sha256Hex(text) };
}

/** A record found on disk. */
export interface RecordEntry {
  file: string;
  record?: EpisodeRecord;
  problem?: string;
}

/** The newest records first (file names sort by start time), at most `limit`. */
export async function latestRecords(journal: Journal, limit: number): Promise<RecordEntry[]> {
  refuseLinks(journal, journal.recordsDir);
  if (!existsSync(journal.recordsDir)) return [];
  const { parse } = await import("yaml");
  const names = readdirSync(journal.recordsDir).filter((name) => name.endsWith(".md")).sort().reverse().slice(0, limit);
  return names.map((name) => {
    const file = join(journal.recordsDir, name);
    try {
      // Read inside the try: a record that is a folder or unreadable is one problem among the records, not the end of the listing.
      const match = /^---\n([\s\S]*?)\n---\n/.exec(readJournalFile(journal, file));
      if (!match) throw new Error("no front matter");
      const record: unknown = parse(match[1], { logLevel: "error" }); // no warning printed with lines of the file
      const problem = frontMatterProblem(record);
      if (problem) throw new Error(`its front matter is not a record: ${problem}`);
      return { file, record: record as EpisodeRecord };
    } catch (error) {
      if (error instanceof JournalLinkError) return { file, problem: "is a symbolic link, never followed out of the journal: remove it" };
      // Node and Deno word this one differently; the owner gets one wording.
      if ((error as NodeJS.ErrnoException).code === "EISDIR") return { file, problem: "is a folder, not a record: move it out of the journal" };
      return { file, problem: (error as Error).message.split("\n")[0] };
    }
  });
}

/** What makes parsed front matter no record (a list, a number, a field of the wrong type), or undefined when it is one. */
function frontMatterProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a table";
  const record = value as Record<string, unknown>;
  for (const field of ["id", "key", "started_at", "ended_at", "outcome", "written_by"]) {
    if (typeof record[field] !== "string") return `"${field}" is not a string`;
  }
  if (record.commits !== null && !Array.isArray(record.commits)) return `"commits" is not a list or null`;
  if (record.changed_files !== null && !Array.isArray(record.changed_files)) return `"changed_files" is not a list or null`;
  return undefined;
}
