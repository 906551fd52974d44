/**
 * `robot-army continuity`: what a new worker in this repository needs first: the open
 * episodes with their last sign of life, the latest closed records, and the ledger tail.
 */
import { JSON_OPTION, asJson, asLines, integerOption, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { CommandDef, Write } from "../lib/cli.ts";
import { now } from "../lib/clock.ts";
import { describeEpisode, viewEpisodes } from "../lib/episodes/describe.ts";
import { openJournal, shown } from "../lib/episodes/journal.ts";
import { readLedger } from "../lib/episodes/ledger.ts";
import { listOpen } from "../lib/episodes/open-episodes.ts";
import { latestRecords } from "../lib/episodes/records.ts";
import { describeEvent } from "./ledger.ts";

/** The `continuity` command. */
export const command: CommandDef = {
  name: "continuity",
  summary: "What a new worker needs first: open episodes, records, ledger",
  usage: "continuity [--records N] [--events N] [--json]",
  description: "Reads the work journal of the repository it runs in and writes nothing.",
  options: {
    records: { type: "string", value: "N", description: "How many of the latest records (default: 5)" },
    events: { type: "string", value: "N", description: "How many ledger events (default: 10)" },
    json: JSON_OPTION,
  },
};

/** What `continuity` was asked for: how many records and ledger events. */
export interface ContinuityOptions {
  records: number;
  events: number;
  json: boolean;
}

/** Parses argv and runs it in the repository it was started in. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const opts = { records: integerOption(args, "records", 0) ?? 5, events: integerOption(args, "events", 0) ?? 10, json: args.values.json === true };
  return await run(opts, { cwd: process.cwd(), write: writeStdout });
}

/** Reads the journal and prints the open episodes, the latest records and the ledger tail. */
export async function run(opts: ContinuityOptions, deps: { cwd: string; write: Write }): Promise<number> {
  const journal = await openJournal(deps.cwd);
  const ledger = await readLedger(journal);
  const open = viewEpisodes(journal, await listOpen(journal), ledger, now());
  const records = (await latestRecords(journal, opts.records)).map((entry) => ({
    file: shown(journal, entry.file),
    key: entry.record?.key ?? null,
    outcome: entry.record?.outcome ?? null,
    ended_at: entry.record?.ended_at ?? null,
    written_by: entry.record?.written_by ?? null,
    commits: entry.record?.written_by === "recover episodes" ? null : entry.record?.commits?.length ?? null,
    problem: entry.problem ?? null,
  }));
  const events = opts.events ? ledger.events.slice(-opts.events) : [];
  if (opts.json) {
    deps.write(asJson({ open, records, ledger: events, unreadable_ledger_lines: ledger.unreadable.length }));
    return 0;
  }
  deps.write(asLines(
    `Open episodes (${open.length})`,
    ...(open.length ? open.flatMap((view) => describeEpisode(view).map((line) => `  ${line}`)) : ["  none"]),
    "", `Latest records (${records.length})`,
    ...(records.length
      ? records.map((r) => r.problem
        ? `  ${r.file}  unreadable: ${r.problem}`
        : `  ${r.ended_at}  ${r.key}  ${r.outcome}  ${commitsShown(r)}  by ${r.written_by}  ${r.file}`)
      : ["  none"]),
    "", `Ledger (last ${events.length})`,
    ...(events.length ? events.map((e) => `  ${describeEvent(e)}`) : ["  empty"]),
    ...(ledger.unreadable.length ? [`  ${ledger.unreadable.length} unreadable line(s) skipped`] : []),
  ));
  return 0;
}

/** Recovery claims no commits, so its records say "commits not listed" rather than "0 commit(s)". */
function commitsShown(record: { written_by: string | null; commits: number | null }): string {
  if (record.written_by === "recover episodes" || record.commits === null) return "commits not listed";
  return `${record.commits} commit(s)`;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
