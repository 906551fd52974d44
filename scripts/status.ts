/**
 * `robot-army status`: whether the daemon runs, how many work items are in each state, the
 * dispatch queue as dispatch takes it (lib/dispatch/queue.ts decides for both) with the pause,
 * the items the owner held and the items whose repository is not trusted here shown apart,
 * what held dispatch back at the last tick, what needs the owner (items whose workers wait for
 * an answer, failed, interrupted and awaiting review), and the GitHub rate limit as last seen.
 * Simulated items (made below the `live` effect level) are left out, and counted, unless
 * `--include-simulated`.
 *
 * A read never creates anything: with no database yet there is nothing to show.
 */
import type { CommandDef, ParsedArgs, Write } from "../lib/cli.ts";
import { JSON_OPTION, asJson, asLines, helpText, parse, runMain, stringOption, writeStdout } from "../lib/cli.ts";
import type { RateLimitState } from "../lib/boundaries/github-types.ts";
import { rateLimitTight, reserveLeft } from "../lib/boundaries/rate-budget.ts";
import { now, parseTimestamp } from "../lib/clock.ts";
import { formatAge } from "../lib/duration.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { daemonLines } from "../lib/daemon/daemon-status.ts";
import { reasonText } from "../lib/dispatch/controls.ts";
import { printable, quoted } from "../lib/printable.ts";
import { redact } from "../lib/redact.ts";
import { QUICK_EXIT_LINES_SHOWN, filterStatus, statusReport } from "../lib/reports/status.ts";
import { NEED_LABELS } from "../lib/reports/needs-you.ts";
import { describeQuickExit } from "../lib/work-items/quick-exit.ts";
import type { QuickExit } from "../lib/work-items/quick-exit.ts";
import type { FilteredItem, ItemJson, StatusFilter, StatusReport } from "../lib/reports/status.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { getItem, WORK_ITEM_STATES } from "../lib/work-items/queries.ts";
import type { WorkItemState } from "../lib/work-items/queries.ts";
import { UsageError } from "../lib/errors.ts";
import { nearestName } from "../lib/nearest-name.ts";
import { openSessions } from "../lib/work-items/sessions.ts";
import { describeActivity, workerActivity } from "../lib/work-items/idleness.ts";
import type { Activity } from "../lib/work-items/idleness.ts";

export const command: CommandDef = {
  name: "status",
  summary: "Work items by state, the dispatch queue and the GitHub rate limit",
  usage: "status [--include-simulated] [--config FILE] [--json]",
  description: `\
Says whether a daemon runs for this state dir (its lock's pid, checked with its start
time) and when it last ticked, counts work items by state and (once there are any) their
pull requests, open, merged and closed unmerged, then every open worker with what its
registry says it is doing: busy, idle or asking you, since when, or unknown with why
(never taken for idle), and lists the queue: the
ready items dispatch may take, in the order it takes them (the repository's priority from
the config, higher first, then the oldest item first), with positions. Apart from it, each
with why and the command that lets it go: the pause, while set (nothing is dispatched);
the ready items held by you ("robot-army hold", by item or repository); the untrusted
ones, whose repository may not receive work on this machine (not in the config, not
onboarded, or needing reapproval); and those held for you, whose label someone else added
or whose body someone else edited ("robot-army approve <id>" once you have read it).
Under "needs you", everything that waits for you, as the dashboard's first page and your
notifications have it, each with why, since when and the commands that help in the order to
try them: the items whose worker asked you something (its question; "robot-army attach
<id>" answers it), the failed ones ("robot-army retry <id>" once it is mended), the
interrupted ones, with how their worker ended ("robot-army resume <id>" or "restart"), those
awaiting your review (the pull request's address), every open anomaly ("robot-army
anomalies --acknowledge <n>"), the pause, and the held, untrusted and held-for-you items.
A worker that ended by itself within 10 seconds of its start is shown with its last output
lines. Then why the last tick dispatched nothing when it withheld dispatch (paused,
capacity not observable, worker program missing), the rate limit GitHub last reported, and
how many anomalies are open ("robot-army anomalies").

Items made below the live effect level are simulated and left out unless
--include-simulated; the output says how many were left out.

--state (one state, or several separated by commas) and --repo narrow everything to those
items: the counts, the queue, what needs you and the anomalies of that repository, and
list each matching item with its state and why.
`,
  options: {
    state: { type: "string", value: "S[,S...]", description: "Only items in these states (discovered, ready, dispatching, active, awaiting_review, interrupted, needs_info, failed, done, abandoned), each listed" },
    repo: { type: "string", value: "owner/name", description: "Only items of this repository, each listed" },
    "include-simulated": { type: "boolean", description: "Include items made below the live effect level" },
    config: CONFIG_OPTION,
    json: JSON_OPTION,
  },
  examples: ["robot-army status", "robot-army status --state failed,interrupted", "robot-army status --repo octo-org/widgets --json", "robot-army status --include-simulated --json"],
};

/** What `status` was asked for. */
export interface StatusOptions {
  includeSimulated: boolean;
  json: boolean;
  /** `--state`/`--repo`: the items the report is narrowed to; null for all. */
  filter?: StatusFilter | null;
}

/** `--state S[,S...]` and `--repo owner/name`, checked: an unknown state, or a repository not written owner/name, is a usage error. */
export function statusFilter(args: ParsedArgs): StatusFilter | null {
  const state = stringOption(args, "state");
  const repo = stringOption(args, "repo");
  if (state === undefined && repo === undefined) return null;
  let states: WorkItemState[] | null = null;
  if (state !== undefined) {
    states = [];
    for (const name of state.split(",").map((s) => s.trim()).filter(Boolean)) {
      if (!(WORK_ITEM_STATES as readonly string[]).includes(name)) {
        const near = nearestName(name, [...WORK_ITEM_STATES]);
        throw new UsageError(`Unknown state "${name}"${near ? ` (did you mean ${near}?)` : ""}; the states are ${WORK_ITEM_STATES.join(", ")}`, helpText(command));
      }
      if (!states.includes(name as WorkItemState)) states.push(name as WorkItemState);
    }
    if (states.length === 0) throw new UsageError("--state names no state", helpText(command));
  }
  if (repo !== undefined && !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) throw new UsageError(`--repo must be written owner/name, got "${repo}"`, helpText(command));
  return { states, repo: repo ?? null };
}

/** What `status` reads: the config (priorities, the API whose rate limit to show) and the store, if there is one. */
export interface StatusDeps {
  config: Config;
  store: Store | undefined;
  stateDir: string;
  write: Write;
}

/** Parses argv, opens the store if there is one, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const config = await configFromArgs(args);
  return await withExistingStore(stateDirPath(), async (store) => {
    const opts = { includeSimulated: args.values["include-simulated"] === true, json: args.values.json === true, filter: statusFilter(args) };
    return await run(opts, { config, store, stateDir: stateDirPath(), write: writeStdout });
  });
}

/** Prints the status. */
export async function run(opts: StatusOptions, deps: StatusDeps): Promise<number> {
  const whole = statusReport(deps.store, deps.config, opts.includeSimulated, deps.stateDir);
  const report = opts.filter ? filterStatus(whole, deps.store, opts.filter, opts.includeSimulated) : whole;
  const workers = deps.store ? await workerLines(deps.store, deps.config, opts.includeSimulated) : [];
  const shown = { ...report, workers: opts.filter ? workers.filter((w) => inFilter(opts.filter!, w.repo, getItem(deps.store!, w.item)?.state)) : workers };
  // Rows written before the redactor existed may hold a secret: it is caught on the way out too.
  deps.write(redact(opts.json ? asJson(shown) : asLines(...formatStatus(shown))));
  return 0;
}

function inFilter(filter: StatusFilter, repo: string, state: WorkItemState | undefined): boolean {
  return (filter.repo === null || filter.repo === repo) && (filter.states === null || (state !== undefined && filter.states.includes(state)));
}

/** One open worker session, as `status` shows it: its item and what its registry says it is doing. */
export interface WorkerLine {
  item: number;
  repo: string;
  issue: number;
  session: string;
  name: string;
  host: string;
  activity: Activity;
}

/** Every open worker session with its activity (busy, idle or asking since when; unknown with why), oldest first. */
async function workerLines(store: Store, config: Config, includeSimulated: boolean): Promise<WorkerLine[]> {
  const at = now();
  const lines: WorkerLine[] = [];
  for (const session of openSessions(store)) {
    const item = getItem(store, session.item);
    if (!item || (item.simulated && !includeSimulated)) continue;
    lines.push({
      item: item.id, repo: item.repo, issue: item.issue, session: session.id, name: session.name, host: session.host,
      activity: await workerActivity(session, session.profile ?? config.worker.profile, at),
    });
  }
  return lines;
}

/** The report as lines of text (with the open workers' activity, when given). */
export function formatStatus(report: StatusReport & { workers?: WorkerLine[]; filter?: StatusFilter; items?: FilteredItem[] }): string[] {
  const lines: string[] = daemonLines(report.daemon);
  const present = WORK_ITEM_STATES.filter((state) => report.counts[state] > 0);
  const narrowed = report.filter ? describeFilter(report.filter) : "";
  lines.push(report.total === 0 ? `work items${narrowed}: none` : `work items${narrowed}: ${report.total}`);
  const width = Math.max(0, ...present.map((state) => state.length)) + 2;
  for (const state of present) lines.push(`  ${state.padEnd(width)}${report.counts[state]}`);
  for (const item of report.items ?? []) lines.push(`  ${itemLine(item)}  ${item.state}${item.reason ? `: ${printable(item.reason)}` : ""}`);
  if (report.workers?.length) lines.push(`workers: ${report.workers.length}`);
  for (const w of report.workers ?? []) lines.push(`  ${w.repo}#${w.issue}  item ${w.item}  ${w.name} on ${w.host}: ${describeActivity(w.activity)}`);
  if (report.needs_you.length) lines.push(`needs you: ${report.needs_you.length}`);
  for (const n of report.needs_you) {
    const help = [...(n.review ? [`review ${printable(n.review.url)}`] : []), ...n.commands].join("; ");
    const about = n.item ? `${n.item.repo}#${n.item.issue}  item ${n.item.id}  ` : "";
    const label = n.anomaly !== null ? `anomaly ${n.anomaly}` : NEED_LABELS[n.kind];
    lines.push(`  ${about}${label}: ${printable(n.what)}${help ? `  (${help})` : ""}`);
    if (n.quick_exit && n.item) lines.push(...quickExitLines(n.item.id, n.quick_exit));
  }
  const pulls = report.pull_requests;
  if (pulls.open + pulls.merged + pulls.closed) {
    const counted = [[pulls.open, "open"], [pulls.merged, "merged"], [pulls.closed, "closed unmerged"]].filter(([n]) => n).map(([n, what]) => `${n} ${what}`);
    lines.push(`pull requests: ${counted.join(", ")}`);
  }
  // The pause governs the whole queue, so it is said before it.
  if (report.paused) lines.push(`paused: since ${report.paused.since}${reasonText(report.paused.reason)}; nothing is dispatched until "robot-army unpause"`);
  lines.push(report.queue.length === 0 ? "queue: empty" : `queue: ${report.queue.length} ready, in dispatch order`);
  for (const q of report.queue) lines.push(`  ${q.position}. ${itemLine(q)}  priority ${q.priority}`);
  if (report.held.length) lines.push(`held by you: ${report.held.length} ready, not dispatched until unheld`);
  for (const h of report.held) lines.push(`  ${itemLine(h)}  ${h.hold.on === "repository" ? "repository " : ""}held${reasonText(h.hold.reason)}; "${h.unhold}"`);
  const untrusted = report.untrusted.length;
  if (untrusted) lines.push(`untrusted: ${untrusted} ready, not dispatched until ${untrusted === 1 ? "its repository is" : "their repositories are"} trusted on this machine`);
  for (const u of report.untrusted) lines.push(`  ${itemLine(u)}  ${u.repo} ${u.reason}; ${u.remedy}`);
  const forOwner = report.held_for_owner.length;
  if (forOwner) lines.push(`held for you: ${forOwner} ready, not dispatched: ${forOwner === 1 ? "its issue's words may not be" : "their issues' words may not be"} yours`);
  for (const h of report.held_for_owner) lines.push(`  ${itemLine(h)}  ${h.reason}`);
  if (report.blocked.length) lines.push(`blocked: ${report.blocked.length} ready, waiting for other issues to close`);
  for (const b of report.blocked) lines.push(`  ${itemLine(b)}  ${printable(b.reason)}`);
  const elsewhere = report.claimed_elsewhere.length;
  if (elsewhere) lines.push(`claimed elsewhere: ${elsewhere} ready, not dispatched here while another host holds ${elsewhere === 1 ? "its issue" : "their issues"} on GitHub`);
  for (const c of report.claimed_elsewhere) lines.push(`  ${itemLine(c)}  ${printable(c.reason)}`);
  if (report.hosts.length) {
    const at = now().getTime();
    const described = report.hosts.map((h) => {
      const age = formatAge(Math.max(0, at - Date.parse(h.moved_at)));
      return `${printable(h.host)}${h.this_host ? " (this host)" : ""} ${h.gone ? `still for ${age}: past the lease, taken for gone` : `beat ${age} ago`}`;
    });
    lines.push(`hosts: ${described.join("; ")}`);
  }
  lines.push(rateLimitLine(report.rate_limit));
  const open = report.anomalies.length;
  // Each open anomaly is also under "needs you", with its words and what acknowledges it.
  lines.push(open === 0 ? "anomalies: none" : `${open} anomal${open === 1 ? "y needs" : "ies need"} you: robot-army anomalies`);
  const hidden = report.simulated_hidden;
  if (hidden) lines.push(`${hidden} simulated item${hidden === 1 ? "" : "s"} hidden; --include-simulated shows them`);
  return lines;
}

/** ` (state failed or interrupted, repository octo-org/widgets)`: what the report was narrowed to. */
function describeFilter(filter: StatusFilter): string {
  const parts = [
    ...(filter.states ? [`state ${filter.states.join(" or ")}`] : []),
    ...(filter.repo ? [`repository ${filter.repo}`] : []),
  ];
  return ` (${parts.join(", ")})`;
}

/** A quick exit under its item: how it ended and its last few lines, with where to read them all. */
function quickExitLines(item: number, quick: QuickExit): string[] {
  const shown = quick.last_lines.slice(-QUICK_EXIT_LINES_SHOWN);
  const more = quick.last_lines.length > shown.length ? ` (the last ${shown.length} here; "robot-army show ${item}" has all ${quick.last_lines.length})` : "";
  return [`    ${describeQuickExit(quick)}${more}`, ...shown.map((line) => `      | ${printable(line)}`)];
}

function itemLine(entry: ItemJson): string {
  return `${entry.repo}#${entry.issue}  item ${entry.id}  ${quoted(entry.title)}${entry.simulated ? "  (simulated)" : ""}`;
}

function rateLimitLine(rate: RateLimitState | null): string {
  if (!rate) return "rate limit: not yet seen";
  // A deferral that has run out is history, not state.
  const until = rate.deferredUntil ? parseTimestamp(rate.deferredUntil) : undefined;
  const deferred = until && until > now() ? `; calls deferred until ${rate.deferredUntil}${reserveLeft(rate) ? ", but claims and heartbeats" : ""}`
    : rateLimitTight(rate, now()) ? "; under a quarter left: pull requests and heartbeats slowed" : "";
  return `rate limit: ${rate.remaining} of ${rate.limit} left, resets at ${rate.reset}${deferred}`;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
