/**
 * `robot-army continuity`: what a new worker in this repository needs first: the open
 * episodes with their last sign of life, the latest closed records, and the ledger tail.
 */
import { JSON_OPTION, integerOption, parse, print, printJson, runMain } from "../lib/cli.ts";
import type { CommandDef } from "../lib/cli.ts";
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

export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const recordCount = integerOption(args, "records", 0) ?? 5;
  const eventCount = integerOption(args, "events", 0) ?? 10;
  const journal = await openJournal(process.cwd());
  const ledger = await readLedger(journal);
  const open = viewEpisodes(journal, await listOpen(journal), ledger, now());
  const records = (await latestRecords(journal, recordCount)).map((entry) => ({
    file: shown(journal, entry.file),
    key: entry.record?.key ?? null,
    outcome: entry.record?.outcome ?? null,
    ended_at: entry.record?.ended_at ?? null,
    written_by: entry.record?.written_by ?? null,
    commits: entry.record?.written_by === "recover episodes" ? null : entry.record?.commits?.length ?? null,
    problem: entry.problem ?? null,
  }));
  const events = eventCount ? ledger.events.slice(-eventCount) : [];
  if (args.values.json) {
    printJson({ open, records, ledger: events, unreadable_ledger_lines: ledger.unreadable.length });
    return 0;
  }
  print(`Open episodes (${open.length})`);
  print(...(open.length ? open.flatMap((view) => describeEpisode(view).map((line) => `  ${line}`)) : ["  none"]));
  print("", `Latest records (${records.length})`);
  print(...(records.length
    ? records.map((r) => r.problem
      ? `  ${r.file}  unreadable: ${r.problem}`
      : `  ${r.ended_at}  ${r.key}  ${r.outcome}  ${commitsShown(r)}  by ${r.written_by}  ${r.file}`)
    : ["  none"]));
  print("", `Ledger (last ${events.length})`);
  print(...(events.length ? events.map((e) => `  ${describeEvent(e)}`) : ["  empty"]));
  if (ledger.unreadable.length) print(`  ${ledger.unreadable.length} unreadable line(s) skipped`);
  return 0;
}

/** Recovery claims no commits, so its records say "commits not listed" rather than "0 commit(s)". */
function commitsShown(record: { written_by: string | null; commits: number | null }): string {
  if (record.written_by === "recover episodes" || record.commits === null) return "commits not listed";
  return `${record.commits} commit(s)`;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
