/**
 * `robot-army show <id | owner/name#N>`: one work item: its issue as last read, its state
 * and reason, every state change from the audit log, its sessions, its pull requests (`none`
 * when GitHub answered there is none, `not checked` when it was not asked or could not be),
 * the latest cleanup decision (with the command restoring a deleted branch), and the episode records cleanup archived
 * (`records :`, each copy's path under the state dir). A failed item's reason is its `failure :` line;
 * an item whose worker waits for the owner (needs_info) has an `asks :` line with the question, when it was asked, and how to answer.
 *
 * A read never creates anything: with no database yet, no item exists.
 */
import { bundleKept } from "../lib/cleanup/cleanup.ts";
import type { CleanupRecord } from "../lib/cleanup/records.ts";
import type { ClaimRow } from "../lib/work-items/issue-claims.ts";
import type { CommandDef, ParsedArgs, Write } from "../lib/cli.ts";
import { JSON_OPTION, helpText, parse, runMain, withHelp, writeStdout } from "../lib/cli.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { printable, quoted } from "../lib/printable.ts";
import { redact } from "../lib/redact.ts";
import { feedbackState, findItem, itemReport, ownerQuestion } from "../lib/reports/item.ts";
import type { HistoryEntry, ItemRef, ItemReport } from "../lib/reports/item.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { noSuchItem } from "../lib/work-items/queries.ts";
import type { WorkItem } from "../lib/work-items/queries.ts";
import { describeQuickExit } from "../lib/work-items/quick-exit.ts";
import { decisionLines, decisionOf, DECIDING_STATES } from "../lib/reports/decision.ts";
import { activityOf, describeActivity, readRegistry } from "../lib/work-items/idleness.ts";
import type { Activity } from "../lib/work-items/idleness.ts";
import { readRecord, sessionRoot } from "../lib/sessions/records.ts";
import { now } from "../lib/clock.ts";
import { noRegistryLine, resumeCommand } from "../lib/worker-profiles.ts";
import { parseIssueRef } from "../lib/issue-ref.ts";
import { parseItemId } from "../lib/work-items/argument.ts";
import { SHORT_HASH } from "../lib/intake/issue-trust.ts";
import type { TrustSummary } from "../lib/intake/issue-trust.ts";
import type { PullRequestRow } from "../lib/intake/pull-requests.ts";


/** How much of a head commit's SHA is shown, as git's short form. */
const SHORT_SHA = 7;

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "show",
  summary: "One work item: its issue, state, history, sessions and pull requests",
  usage: "show <id | owner/name#N> [--include-simulated] [--config FILE] [--json]",
  description: `\
Shows a work item, named by its id (as status lists it) or by its issue, owner/name#N
(the issue's live item, else its latest one): the issue as last read (title, author,
labels), the item's state and the reason for it, every state change from the audit log
(time, from -> to, reason), its sessions, and its pull requests: each one's number, state
(open, merged and when, or closed unmerged), head commit and web address; "none" when
GitHub answered that the item's branches have none, "not checked" when it was never asked
(the daemon refreshes them each pass) or could not be. Then its cleanup state. A failed
item has a line "failure : <reason>"; an item whose worker waits for you (needs_info) a line
"asks : <question>, asked <time>; to answer: robot-army attach <id>". An unknown item is exit 3.

Items made below the live effect level are simulated and shown only with
--include-simulated.
`,
  options: {
    "include-simulated": { type: "boolean", description: "Show an item made below the live effect level" },
    config: CONFIG_OPTION,
    json: JSON_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army show 12", "robot-army show octo-org/widgets#7 --json"],
};

/** What `show` was asked for. */
export interface ShowOptions {
  ref: ItemRef;
  includeSimulated: boolean;
  json: boolean;
}

/** What `show` reads. */
export interface ShowDeps {
  config: Config;
  store: Store | undefined;
  /** Where the workers' session records are (default: the session root of this environment). */
  sessionRoot?: string;
  /** The state dir, where a worktree with no session on record would be (default: this environment's). */
  stateDir?: string;
  write: Write;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const opts = showOptions(args);
  const config = await configFromArgs(args);
  return await withExistingStore(stateDirPath(), async (store) => {
    return await run(opts, { config, store, write: writeStdout });
  });
}

/** Reads the arguments: a whole number, or `owner/name#N`. */
export function showOptions(args: ParsedArgs): ShowOptions {
  const given = args.positionals[0];
  const byIssue = parseIssueRef(given);
  let ref: ItemRef;
  if (/^[-+]?\d+\w*$/.test(given)) ref = { id: withHelp(command, () => parseItemId(given)) };
  else if (byIssue) ref = byIssue;
  else throw new UsageError(`A work item is an id such as 12 or an issue such as owner/name#7, got "${given}"`, helpText(command));
  return { ref, includeSimulated: args.values["include-simulated"] === true, json: args.values.json === true };
}

/** Prints the item; an unknown one (or a simulated one not asked for) is a PreconditionError. */
export async function run(opts: ShowOptions, deps: ShowDeps): Promise<number> {
  const item = deps.store ? findItem(deps.store, opts.ref, opts.includeSimulated) : undefined;
  const named = "id" in opts.ref ? `${opts.ref.id}` : `for ${opts.ref.repo}#${opts.ref.issue}`;
  if (!item) throw noSuchItem(named);
  if (item.simulated && !opts.includeSimulated) {
    throw new PreconditionError(`Work item ${item.id} is simulated (made below the live effect level); --include-simulated shows it`);
  }
  const report = itemReport(deps.store!, deps.config, item);
  const workers = await liveWorkers(report.sessions, deps.config, deps.sessionRoot ?? sessionRoot());
  // An interrupted or failed item waits for the owner's choice: what it would be decided by.
  const decision = DECIDING_STATES.has(item.state) ? await decisionOf(deps.store!, deps.config, report, deps.stateDir ?? stateDirPath()) : null;
  // Rows written before the redactor existed may hold a secret: it is caught on the way out too.
  const write = (text: string) => deps.write(redact(text));
  if (opts.json) {
    write(JSON.stringify({ ...report, workers: Object.fromEntries(workers), decision }, null, 2) + "\n");
  } else {
    const { url, history, sessions, trust, pull_requests: pulls, cleanup, archived_records: archived, claim } = report;
    const lines = formatItem(item, url, history, sessions, trust, pulls, cleanup ?? undefined, archived, workers, claim, report.feedback);
    const latest = sessions.at(-1);
    // As the profile it was started with brings it back (the config's for rows from before that was recorded).
    const resume = latest ? resumeCommand({ ...deps.config.worker, profile: latest.profile ?? deps.config.worker.profile }, latest.id) : null;
    if (resume) lines.push(`resume  : ${resume}  (in ${latest!.worktree})`);
    if (decision) lines.push("decide  : what it ended with and holds", ...decisionLines(decision));
    const unobservable = noRegistryLine(deps.config.worker.profile);
    if (unobservable !== null) lines.push(`registry: ${unobservable}`);
    write(lines.map((line) => line + "\n").join(""));
  }
  return 0;
}

/** What an open session's worker is doing, and what robot-army gave it, as `show` tells it. */
export interface LiveWorker {
  activity: Activity;
  /** The agent's own session id, when it is not robot-army's (a resume or fork by the agent). */
  agent_session: string | null;
  /** The names of the variables robot-army set in its environment (never their values), from its session's record. */
  variables: string[];
}

/** The open sessions' workers: their activity from the registry, the agent's own session id, the variables set. */
async function liveWorkers(sessions: ItemReport["sessions"], config: Config, root: string): Promise<Map<string, LiveWorker>> {
  const at = now();
  const workers = new Map<string, LiveWorker>();
  for (const session of sessions.filter((s) => s.ended_at === null)) {
    const profile = session.profile ?? config.worker.profile;
    const registry = await readRegistry(session, profile);
    let variables: string[] = [];
    try {
      const record = readRecord(root, session.id);
      if (record) variables = [...Object.keys(record.env), "RA_SESSION_ID", "RA_SESSION_NAME"].sort();
    } catch {
      // A record being rewritten: the names are left out this time.
    }
    workers.set(session.id, {
      activity: activityOf(registry, at),
      agent_session: registry.known ? registry.agentSession : null,
      variables,
    });
  }
  return workers;
}

/** Who holds the item's issue on GitHub, as last seen: this host (or did, until released), or another. */
function describeClaim(claim: ClaimRow): string {
  // The commit's id differs at every claim (its message names an action): the reference alone is shown.
  const where = claim.ref;
  if (!claim.mine) return `held by ${printable(claim.host ?? "a claim that names no host")} on GitHub (${where}), seen ${claim.seen_at}; nothing starts here while it stands`;
  if (claim.released_at) return `released on GitHub at ${claim.released_at} (was ${where})`;
  return `held by this host on GitHub (${where}), since ${claim.seen_at}`;
}

/** The item as lines of text, `key : value`; the sections (history, sessions, ...) follow the issue's fields. */
export function formatItem(
  item: WorkItem, url: string | null, history: HistoryEntry[], sessions: ItemReport["sessions"] = [], trust: TrustSummary | null = null,
  pulls: PullRequestRow[] | "not checked" = "not checked", cleanup: CleanupRecord | undefined = undefined,
  archived: ItemReport["archived_records"] = [],
  workers: ReadonlyMap<string, LiveWorker> = new Map(),
  claim: ClaimRow | null = null,
  feedback: ItemReport["feedback"] = [],
): string[] {
  const field = (key: string, value: string) => `${key.padEnd(7)} : ${value}`;
  const issueState = `${item.issue_state}${item.issue_updated_at ? `, updated ${item.issue_updated_at}` : ""}`;
  const lines = [
    field("item", `${item.id}${item.simulated ? " (simulated)" : ""}`),
    field("issue", `${item.repo}#${item.issue} ${quoted(item.title)} (${issueState})`),
    field("author", item.author),
  ];
  if (url) lines.push(field("url", url));
  lines.push(
    field("labels", item.labels.length ? item.labels.join(", ") : "none"),
    // A failed item's reason has a line of its own, below.
    field("state", `${item.state}${item.reason && item.state !== "failed" ? ` (${item.reason})` : ""}, since ${item.updated_at}`),
  );
  if (item.state === "failed") lines.push(field("failure", item.reason ?? "no reason was recorded"));
  const asks = ownerQuestion(item);
  if (asks) lines.push(field("asks", `${printable(asks.question)}, asked ${asks.asked_at}; to answer: ${asks.answer}`));
  // Whose words the issue holds: held for the owner (with what approves the words it holds), or changed by others and approved.
  const changedBy = trust ? [...new Set([...trust.renamed_by, ...trust.edited_by])] : [];
  if (trust?.held) lines.push(field("trust", `held for you: ${trust.held}${trust.approve ? `; title and body sha256 ${trust.sha256.slice(0, SHORT_HASH)}: "${trust.approve}"` : ""}`));
  else if (trust?.approved_at && changedBy.length) lines.push(field("trust", `changed by ${printable(changedBy.join(", "))}; you approved the title and body as they read at ${trust.approved_at}`));
  if (claim) lines.push(field("claim", describeClaim(claim)));
  lines.push(field("history", history.length ? `${history.length} state change${history.length === 1 ? "" : "s"}` : "none recorded"));
  for (const h of history) {
    lines.push(`  ${h.at}  ${h.from ?? "(new)"} -> ${h.to}${h.reason ? `  ${h.reason}` : ""}${h.simulated ? "  (simulated)" : ""}`);
  }
  lines.push(field("sessions", sessions.length ? `${sessions.length}` : "none"));
  for (const s of sessions) {
    const end = s.ended_at ? `ended ${s.ended_at} (${s.end_reason})` : "open";
    const marker = s.marker && s.launcher !== "process" ? ` (marked ${s.marker})` : "";
    lines.push(`  attempt ${s.attempt}  ${s.name}  ${s.id}  on ${s.host} via ${s.launcher}${marker}, started ${s.started_at}, ${end}`);
    lines.push(`    branch ${s.branch}  worktree ${s.worktree}`);
    const worker = workers.get(s.id);
    if (worker) {
      lines.push(`    activity: ${describeActivity(worker.activity)}`);
      // Claude Code names its transcript itself after a resume by hand or a fork: that is the id "claude --resume" needs.
      if (worker.agent_session) lines.push(`    agent session: ${worker.agent_session} (the agent's own transcript id; robot-army's is ${s.id})`);
      if (worker.variables.length) lines.push(`    variables robot-army set: ${worker.variables.join(", ")}`);
    }
    // A worker that ended by itself within seconds of its start is shown with what it printed last.
    if (s.quick_exit) lines.push(`    quick exit: ${describeQuickExit(s.quick_exit)}`, ...s.quick_exit.last_lines.map((line) => `      | ${printable(line)}`));
  }
  // "none" only when GitHub answered so; "not checked" when it was never asked, or could not be.
  lines.push(field("pull requests", pulls === "not checked" ? "not checked" : pulls.length ? `${pulls.length}` : "none"));
  for (const p of pulls === "not checked" ? [] : pulls) {
    const state = p.merged_at ? `merged ${p.merged_at}` : p.state === "open" ? "open" : "closed unmerged";
    lines.push(`  #${p.number}  ${state}  head ${p.head_sha.slice(0, SHORT_SHA)} (${p.head_branch})  ${p.html_url}`);
  }
  // What the owner and the reviewers they list said since its worker started, and how it reached the worker.
  if (feedback.length) lines.push(field("feedback", `${feedback.length} (${feedback.filter((f) => f.delivered_at === null && f.delivery_action === null).length} waiting)`));
  for (const f of feedback) {
    lines.push(`  ${f.created_at}  @${printable(f.author)} ${printable(f.what)}: ${feedbackState(f)}`);
    const words = f.body.replace(/\s+/g, " ").trim();
    if (words) lines.push(`    | ${printable(words.length > 200 ? `${words.slice(0, 199)}…` : words)}`);
    lines.push(`    ${printable(f.url)}`);
  }
  // The latest decision about the item's disk; the path and branch stay after a removal.
  if (!cleanup) lines.push(field("cleanup", "not decided"));
  else {
    lines.push(field("cleanup", `${cleanup.state}${cleanup.simulated ? " (simulated)" : ""}, ${cleanup.at} by ${cleanup.by === "pass" ? "the daemon's pass" : `robot-army ${cleanup.by}`}`));
    lines.push(`  ${cleanup.reason}`);
    lines.push(`  worktree ${cleanup.worktree_path} (${cleanup.worktree})  branch ${cleanup.branch} (${cleanup.branch_outcome.replace("_", " ")})`);
    if (cleanup.branch_outcome === "deleted" && cleanup.restore) {
      lines.push(bundleKept(cleanup) ? `  restore the branch: ${cleanup.restore}` : `  its bundle ${cleanup.bundle} was removed after cleanup.keep_bundles`);
    }
  }
  // The records robot-army wrote that were left uncommitted: archived before their worktree went.
  if (archived.length) lines.push(field("records", `${archived.length} archived`));
  for (const r of archived) lines.push(`  ${r.archive}${r.kept ? "" : " (no longer on disk)"}  from ${r.file}, ${r.at}`);
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
