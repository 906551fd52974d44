/**
 * `robot-army anomalies [--acknowledge N]`: the conditions the owner should see (an effect a
 * crash cut short that no evidence settles, a spool file set aside as damaged, a worker
 * left running under a done item), the open ones only unless `--all`, which adds the
 * acknowledged and resolved ones with their resolution; `--acknowledge N` (or the older
 * `ack N`) acknowledges one (audited `anomaly.acknowledged`).
 *
 * A read never creates anything: with no database yet there is nothing to show.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { redact } from "../lib/redact.ts";
import { JSON_OPTION, asJson, asLines, parse, runMain, stringOption, withHelp, writeStdout } from "../lib/cli.ts";
import { now } from "../lib/clock.ts";
import { sinceTime } from "../lib/duration.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";
import { UsageError } from "../lib/errors.ts";
import { printable } from "../lib/printable.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { anomalyItemText, listAnomalies } from "../lib/store/anomalies.ts";
import { acknowledgeSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import type { Anomaly } from "../lib/store/anomalies.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "anomalies",
  summary: "List what needs you (effects cut short, damaged files, orphaned workers), or acknowledge one",
  usage: "anomalies [--all] [--since DURATION|ISO] [--acknowledge N] [--json] [--config FILE]",
  description: `\
Lists the open anomalies, oldest first: each with its id, kind, the work item it is about,
when it was raised and what to check. effect_unfinished is an effect a crash cut short that
no evidence settles (or a comment found never posted); spool_damaged is an exit record set
aside in spool/damaged/; orphan_session is a worker still running under a done item that is
not kept, or one a retirement could not stop.

Each is raised once while it is in force. Some resolve themselves: the pass retracts one
whose condition no longer holds (the item was kept, the worker retired) and resolves one as
gone when its worker died; the rest stay open until "anomalies --acknowledge N" once you
have looked (written to the audit log as anomaly.acknowledged; "anomalies ack N" does the
same). --all lists acknowledged and resolved ones too, with their resolution. --since 24h
(or an ISO time) lists only those raised since then.
`,
  options: {
    all: { type: "boolean", description: "Include acknowledged and resolved anomalies" },
    since: { type: "string", value: "DURATION|ISO", description: "Only anomalies raised this long ago (24h, 30m) or since this ISO time" },
    acknowledge: { type: "string", value: "N", description: "Acknowledge anomaly N" },
    json: JSON_OPTION,
    config: CONFIG_OPTION,
  },
  positionals: { max: 2 },
  examples: ["robot-army anomalies", "robot-army anomalies --all --json", "robot-army anomalies --acknowledge 3"],
};

/** What the command was asked: to list (all, or only the open ones), or to acknowledge one. */
export type AnomaliesOptions = { json: boolean } & ({ list: { all: boolean; since?: string } } | { ack: number });

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  const opts = withHelp(command, () => {
    const read = readOptions(args.positionals, stringOption(args, "acknowledge"), args.values.all === true, args.values.json === true);
    const since = stringOption(args, "since");
    if (since === undefined) return read;
    if (!("list" in read)) throw new UsageError("--since narrows the list; it does not go with acknowledging one");
    return { ...read, list: { ...read.list, since: sinceTime(since, now()) } };
  });
  return await withExistingStore(stateDirPath(), async (store) => run(opts, { store, write: writeStdout }));
}

/** Lists the anomalies, or acknowledges one. */
export function run(opts: AnomaliesOptions, deps: { store: Store | undefined; write: Write }): number {
  const { store } = deps;
  // Anomalies raised before their detail was redacted may hold a secret: it is caught on the way out too.
  const out: Write = (text) => deps.write(redact(text));
  if ("ack" in opts) {
    const { said, anomaly } = acknowledgeSaid(store, opts.ack);
    out(opts.json ? asJson({ anomaly }) : asLines(...said.lines));
    return 0;
  }
  const since = opts.list.since;
  const anomalies = (store ? listAnomalies(store, opts.list.all ? {} : { open: true }) : []).filter((a) => since === undefined || a.raised_at >= since);
  out(opts.json ? asJson({ anomalies }) : asLines(...formatAnomalies(anomalies, opts.list.all)));
  return 0;
}

/** The anomalies as lines: one per anomaly with what to check, then how to acknowledge. */
export function formatAnomalies(anomalies: Anomaly[], all: boolean): string[] {
  if (anomalies.length === 0) return [all ? "no anomalies" : "no open anomalies"];
  const lines = anomalies.map((a) => `${a.id}  ${a.kind}${anomalyItemText(a)}  raised ${a.raised_at}  ${stateOf(a)}\n    ${printable(a.detail)}`);
  if (anomalies.some(isOpen)) lines.push("", 'Once you have looked: "robot-army anomalies --acknowledge <id>"');
  return lines;
}

/** Where an anomaly stands: open, acknowledged, resolved by the pass (and when), or both. */
function stateOf(anomaly: Anomaly): string {
  const states: string[] = [];
  if (anomaly.acknowledged_at) states.push(`acknowledged ${anomaly.acknowledged_at}`);
  if (anomaly.resolved_at) states.push(`${anomaly.resolution} ${anomaly.resolved_at}`);
  return states.length ? states.join(", ") : "open";
}

function isOpen(anomaly: Anomaly): boolean {
  return anomaly.acknowledged_at === null && anomaly.resolved_at === null;
}

function readOptions(positionals: string[], acknowledge: string | undefined, all: boolean, json: boolean): AnomaliesOptions {
  if (positionals.length === 0) return acknowledge === undefined ? { json, list: { all } } : { json, ack: anomalyId(acknowledge) };
  const [verb, id] = positionals;
  if (verb !== "ack") throw new UsageError(`Unknown argument "${verb}" for "anomalies": acknowledge one with "--acknowledge <id>"`);
  if (acknowledge !== undefined) throw new UsageError(`"ack ${id ?? ""}" and "--acknowledge ${acknowledge}" both name an anomaly to acknowledge: give one`);
  return { json, ack: anomalyId(id) };
}

function anomalyId(id: string | undefined): number {
  if (!/^[1-9]\d*$/.test(id ?? "") || !Number.isSafeInteger(Number(id))) throw new UsageError(`An anomaly id is a positive whole number such as 3, got "${id ?? ""}"`);
  return Number(id);
}


if (import.meta.main) await runMain(main, process.argv.slice(2));
