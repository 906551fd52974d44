/**
 * `robot-army log`: reads the audit log, oldest first, one line per record or JSON, and
 * with `--follow` keeps printing new records until interrupted.
 *
 * A read never creates anything: with no database yet there is nothing recorded, which
 * is not an error. This command is on the start-up path people feel, so it imports only
 * the store (no ajv, yaml, smol-toml or octokit, unless --config names a file to check).
 */
import type { CommandDef, ParsedArgs, Write } from "../lib/cli.ts";
import { asJson, integerOption, onStdoutGone, parse, runMain, stdoutIsTerminal, stringOption, withHelp, writeStdout } from "../lib/cli.ts";
import { now } from "../lib/clock.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";
import { sinceTime } from "../lib/duration.ts";
import { printable } from "../lib/printable.ts";
import { redact } from "../lib/redact.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { queryAudit } from "../lib/store/audit.ts";
import type { AuditQuery, AuditRecord } from "../lib/store/audit.ts";
import { openExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { storeError } from "../lib/store/store-file.ts";
import { describeQuiet, foldQuietPasses } from "../lib/reports/quiet-passes.ts";

export const command: CommandDef = {
  name: "log",
  summary: "Read the audit log",
  usage: "log [--since DURATION|ISO] [--kind K] [--exclude-kind K[,K...]] [--item N] [--limit N] [--include-simulated] [--follow] [--json] [--config FILE]",
  description: `\
Prints the audit log, oldest first: one line per record,
  <at>  <phase>  <kind>  <subjects>  <action id>  <body>
where phase is intent (an outward effect is about to happen), outcome (it happened, or
failed) or fact, and an intent and its outcome share one action id. Records made below
the live effect level are simulated: hidden unless --include-simulated, then marked
"(simulated)". The daemon's passes that changed nothing (its reconcile.pass records with
every count of a change at zero), two or more in a row, read as one line; --json has every
record. The log is read from the state dir ($RA_STATE_DIR, else
$XDG_STATE_HOME/robot-army, else ~/.local/state/robot-army); --config is taken as every
command takes it, and the file it names must load.
`,
  options: {
    since: { type: "string", value: "DURATION|ISO", description: "Only records from this long ago (12h, 30m) or since this ISO time" },
    kind: { type: "string", value: "K", description: "Only records of this kind, or kinds under it (state, state.work_item)" },
    "exclude-kind": { type: "string", value: "K[,K...]", description: "Leave out records of these kinds, or kinds under them (reconcile.pass)" },
    item: { type: "string", value: "N", description: "Only records about work item N" },
    limit: { type: "string", value: "N", description: "Only the newest N records" },
    "include-simulated": { type: "boolean", description: "Show records made below the live effect level too" },
    follow: { type: "boolean", short: "f", description: "Keep printing new records until interrupted" },
    json: { type: "boolean", description: "Print a JSON array (with --follow, one JSON object per line)" },
    config: CONFIG_OPTION,
  },
  examples: [
    "robot-army log --since 2h",
    "robot-army log --kind state. --item 12",
    "robot-army log --exclude-kind reconcile.pass --limit 50",
    "robot-army log --follow --json",
  ],
};

/** What `log` was asked for. */
export interface LogOptions {
  filter: Omit<AuditQuery, "afterId">;
  follow: boolean;
  json: boolean;
}

/** What `log` reads from and writes to. */
export interface LogDeps {
  stateDir: string;
  write: Write;
  /** Ends `--follow`. */
  signal?: AbortSignal;
  /** How often `--follow` looks for new records. */
  pollMs?: number;
}

/** Parses argv, ends --follow on a signal or a closed pipe, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const opts = logOptions(args, now());
  checkConfigOption(args);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  if (opts.follow) {
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  }
  // A closed pipe (`log -f | head`) ends following too.
  const stopListening = opts.follow ? onStdoutGone(onSignal) : () => {};
  try {
    return await run(opts, { stateDir: stateDirPath(), write: writeStdout, signal: stop.signal });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    stopListening();
  }
}

/** Turns parsed arguments into options; `since` durations count back from `at`. */
export function logOptions(args: ParsedArgs, at: Date): LogOptions {
  return withHelp(command, () => {
    const since = stringOption(args, "since");
    return {
      filter: {
        since: since === undefined ? undefined : sinceTime(since, at),
        kind: stringOption(args, "kind"),
        excludeKinds: stringOption(args, "exclude-kind")?.split(",").map((k) => k.trim()).filter(Boolean),
        item: integerOption(args, "item", 1),
        limit: integerOption(args, "limit", 1),
        ...(args.values["include-simulated"] ? {} : { simulated: false }),
      },
      follow: args.values.follow === true,
      json: args.values.json === true,
    };
  });
}

/** Prints the matching records, then with `follow` new ones every `pollMs` until `signal` aborts. */
export async function run(opts: LogOptions, deps: LogDeps): Promise<number> {
  // Records written before the redactor existed may hold a secret: it is caught on the way out too.
  const out: Write = (text) => deps.write(redact(text));
  let store = await openExistingStore(deps.stateDir);
  try {
    const records = store ? queryAudit(store, opts.filter) : [];
    if (!opts.follow) {
      out(opts.json ? asJson(records) : formatFolded(records) || "no audit records\n");
      const hidden = store && !opts.json && opts.filter.simulated === false
        ? queryAudit(store, { ...opts.filter, limit: undefined, simulated: true }).length : 0;
      if (hidden) out(`${hidden} simulated record(s) hidden; --include-simulated shows them\n`);
      return 0;
    }
    const write = (batch: AuditRecord[]) => {
      if (batch.length) out(opts.json ? batch.map((r) => JSON.stringify(r) + "\n").join("") : formatLines(batch));
    };
    write(records);
    let lastId = records.at(-1)?.id ?? 0;
    const { limit: _all, ...filter } = opts.filter;
    while (!deps.signal?.aborted) {
      await sleep(deps.pollMs ?? 500, deps.signal);
      if (deps.signal?.aborted) break;
      // The database may appear while we wait: something recorded its first record.
      store ??= await openExistingStore(deps.stateDir);
      if (!store) continue;
      const fresh = queryAudit(store, { ...filter, afterId: lastId });
      write(fresh);
      lastId = fresh.at(-1)?.id ?? lastId;
    }
    return 0;
  } catch (error) {
    throw store ? storeError(store.path, error) : error;
  } finally {
    (store as Store | undefined)?.close();
  }
}

/** One line per record: `<at>  <phase>  <kind>  <subjects>  <action id>  <body>`. */
export function formatLine(record: AuditRecord, shorten = false): string {
  const phase = record.simulated ? `${record.phase} (simulated)` : record.phase;
  const columns = [record.at, phase, record.kind, subjects(record), record.actionId ?? "-"];
  const body = bodySummary(record.body, shorten);
  if (body) columns.push(body);
  // Outside text in a record (a title, a reason) is printed with its control characters escaped.
  return printable(columns.join("  "));
}

function formatLines(records: AuditRecord[]): string {
  const shorten = stdoutIsTerminal();
  return records.map((record) => formatLine(record, shorten) + "\n").join("");
}

/** The lines, each run of passes that changed nothing as one line: from its first record's time to its last's. */
export function formatFolded(records: AuditRecord[]): string {
  const shorten = stdoutIsTerminal();
  return foldQuietPasses(records).map((entry) => {
    if ("record" in entry) return formatLine(entry.record, shorten) + "\n";
    const [first, last] = [entry.quiet[0], entry.quiet.at(-1)!];
    return `${first.at}  ${first.phase}  reconcile.pass  -  -  ${describeQuiet(entry.quiet)}, to ${last.at}\n`;
  }).join("");
}

function subjects(record: AuditRecord): string {
  const parts: string[] = [];
  if (record.repo !== null || record.item !== null) parts.push(`${record.repo ?? ""}${record.item !== null ? `#${record.item}` : ""}`);
  if (record.sessionId !== null) parts.push(`session=${record.sessionId}`);
  if (record.episodeId !== null) parts.push(`episode=${record.episodeId}`);
  return parts.join(" ") || "-";
}

const BODY_WIDTH = 120;

/**
 * `from=ready to=dispatching`: top-level keys, values JSON unless a plain word. Shortened
 * only on a terminal: piped output stays whole for the tools that read it.
 */
function bodySummary(body: Record<string, unknown>, shorten: boolean): string {
  const text = Object.entries(body)
    .map(([key, value]) => `${key}=${key === "writer" ? writerWord(value) : typeof value === "string" && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)}`)
    .join(" ");
  return shorten && text.length > BODY_WIDTH ? text.slice(0, BODY_WIDTH - 1) + "…" : text;
}

/** An intent's writer as a line shows it: its pid (`--json` has its start time too). */
function writerWord(value: unknown): string {
  const pid = (value as { pid?: unknown } | null)?.pid;
  return typeof pid === "number" ? `pid:${pid}` : JSON.stringify(value);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
