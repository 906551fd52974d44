/**
 * `robot-army ledger append|tail`: the episode's append-only log in
 * `.ai/local/state/ledger.jsonl`, one JSON event per line stamped with the episode id.
 */
import { JSON_OPTION, asJson, asLines, integerOption, runMain, runSubcommand, stringOption, writeStdout } from "../lib/cli.ts";
import type { CommandDef, FamilyDef, ParsedArgs, Write } from "../lib/cli.ts";
import { isoSeconds, now } from "../lib/clock.ts";
import { UsageError } from "../lib/errors.ts";
import { openJournal, resolveKey } from "../lib/episodes/journal.ts";
import { appendEvent, jsonDepth, MAX_LEDGER_DEPTH, readLedger } from "../lib/episodes/ledger.ts";
import type { LedgerEvent } from "../lib/episodes/ledger.ts";
import { requireOpen } from "../lib/episodes/lifecycle.ts";

const append: CommandDef = {
  name: "ledger append",
  summary: "Append an event to the open episode's ledger",
  usage: "ledger append <kind> [--data JSON] [--key K]",
  description:
    "Appends one line to .ai/local/state/ledger.jsonl, stamped with the time and the id of the open episode\n" +
    "the key names. <kind> is a dotted lower-case name such as note, test.failed or pr.opened.",
  options: {
    data: { type: "string", value: "JSON", description: "Details, as a JSON object (default: {})" },
    key: { type: "string", value: "K", description: "The episode's key (default: $RA_EPISODE_KEY)" },
  },
  positionals: { min: 1, max: 1 },
  examples: ['robot-army ledger append note --data \'{"text":"tests pass"}\''],
};

const tail: CommandDef = {
  name: "ledger tail",
  summary: "Show the newest ledger events",
  usage: "ledger tail [-n N] [--json]",
  options: {
    lines: { type: "string", short: "n", value: "N", description: "How many events (default: 10)" },
    json: JSON_OPTION,
  },
};

/** What the `ledger` subcommands work with: the repository they run in, and where output goes. */
export interface LedgerDeps {
  cwd: string;
  write: Write;
}

/** What `ledger append` was asked for. */
export interface AppendOptions {
  kind: string;
  data: Record<string, unknown>;
  key: string;
}

/** The `ledger` family. */
export const command: FamilyDef = {
  name: "ledger",
  summary: "Append to and read the episode ledger",
  subcommands: {
    append: { command: append, run: (args) => runAppend(appendOptions(args), commandDeps()) },
    tail: { command: tail, run: (args) => runTail(tailOptions(args), commandDeps()) },
  },
};

/** Routes argv to the subcommand. */
export function main(argv: string[]): Promise<number> {
  return runSubcommand(command, argv);
}

function commandDeps(): LedgerDeps {
  return { cwd: process.cwd(), write: writeStdout };
}

const KIND = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*$/;

/** `ledger append`'s options: a dotted kind, a JSON object of data, and the key (else $RA_EPISODE_KEY). */
export function appendOptions(args: ParsedArgs): AppendOptions {
  const kind = args.positionals[0];
  if (!KIND.test(kind)) throw new UsageError(`Event kind "${kind}" must be dotted lower-case words such as note or test.failed`);
  const data = parseData(stringOption(args, "data"));
  const key = resolveKey(stringOption(args, "key"));
  if (!key) throw new UsageError("No episode key: pass --key K or set RA_EPISODE_KEY");
  return { kind, data, key };
}

/** Appends the event to the open episode's ledger and says so. */
export async function runAppend(opts: AppendOptions, deps: LedgerDeps): Promise<number> {
  const { kind, data, key } = opts;
  const journal = await openJournal(deps.cwd, { forWrite: true });
  const episode = await requireOpen(journal, key);
  const event: LedgerEvent = { at: isoSeconds(now()), episode: episode.id, key, kind, data };
  await appendEvent(journal, event);
  deps.write(asLines(`${event.at}  ${kind}  appended to episode ${episode.id} (key ${key})`));
  return 0;
}

function parseData(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new UsageError(`--data "${raw}" is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`--data "${raw}" must be a JSON object such as {"text":"..."}`);
  }
  // The event's line nests one deeper than its data.
  if (jsonDepth(raw) >= MAX_LEDGER_DEPTH) throw new UsageError(`--data nests deeper than ${MAX_LEDGER_DEPTH - 1} levels; a ledger line may nest at most ${MAX_LEDGER_DEPTH}`);
  return value as Record<string, unknown>;
}

/** One event as a line: time, kind, key, data. */
export function describeEvent(event: LedgerEvent): string {
  const data = Object.keys(event.data).length ? `  ${JSON.stringify(event.data)}` : "";
  return `${event.at}  ${event.kind}  ${event.key}${data}`;
}

/** `ledger tail`'s options: how many events. */
export function tailOptions(args: ParsedArgs): { count: number; json: boolean } {
  return { count: integerOption(args, "lines", 1) ?? 10, json: args.values.json === true };
}

/** Shows the newest events, and how many lines could not be read. */
export async function runTail(opts: { count: number; json: boolean }, deps: LedgerDeps): Promise<number> {
  const journal = await openJournal(deps.cwd);
  const ledger = await readLedger(journal);
  const events = ledger.events.slice(-opts.count);
  if (opts.json) {
    deps.write(asJson(events));
    return 0;
  }
  deps.write(asLines(...(events.length === 0 ? ["the ledger is empty"] : events.map(describeEvent))));
  if (ledger.unreadable.length) {
    deps.write(asLines(`${ledger.unreadable.length} unreadable line(s) skipped: line ${ledger.unreadable.map((u) => u.line).join(", ")}`));
  }
  return 0;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
