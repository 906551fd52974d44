/**
 * `robot-army episode start|status|idle|busy|needs-info|end|hook`: the episodes a worker declares
 * in the repository it works in. The supervisor measures idleness from them, and learns from
 * `needs-info` that a worker waits for its owner; a closed episode becomes a record under
 * `.ai/repo/sessions/`. `hook` is what an agent's own hooks run.
 */
import { JSON_OPTION, asJson, asLines, helpText, integerOption, parse, runMain, runSubcommand, stringOption, writeStderr, writeStdout } from "../lib/cli.ts";
import type { CommandDef, FamilyDef, ParsedArgs, Write } from "../lib/cli.ts";
import { CALLER_PID } from "../lib/caller.ts";
import { now } from "../lib/clock.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { describeEpisode, viewEpisodes } from "../lib/episodes/describe.ts";
import { openJournal, resolveKey, shown } from "../lib/episodes/journal.ts";
import { readLedger } from "../lib/episodes/ledger.ts";
import { endEpisode, setStatus, startEpisode } from "../lib/episodes/lifecycle.ts";
import { findOpen, listOpen } from "../lib/episodes/open-episodes.ts";
import { applyHook, claudeHookEvent, codexHookEvent, statusLine } from "../lib/episodes/hook.ts";
import type { HookAgent } from "../lib/episodes/hook.ts";
import { readRecord, sessionRoot } from "../lib/sessions/records.ts";

const KEY_OPTION = { type: "string", value: "K", description: "The episode's key (default: $RA_EPISODE_KEY)" } as const;

const start: CommandDef = {
  name: "episode start",
  summary: "Open an episode in this repository",
  usage: "episode start [--key K] [--client-pid PID] [--json]",
  description:
    "Writes .ai/local/state/sessions-open/<K>.yaml with a new episode id, the key, this host, the client's pid\n" +
    "and process start time, the branch, the start commit and status busy, and logs episode.start in the\n" +
    "ledger. The client is the agent process the episode belongs to: by default the process that ran this\n" +
    "command. From an agent's hook, pass the agent: --client-pid $PPID. A key that is already open is\n" +
    "refused (exit 3).",
  options: {
    key: KEY_OPTION,
    "client-pid": { type: "string", value: "PID", description: "The agent process this episode belongs to (default: the parent process)" },
    json: JSON_OPTION,
  },
  examples: ["RA_EPISODE_KEY=issue-42 robot-army episode start", "robot-army episode start --key w1 --client-pid $PPID"],
};

const status: CommandDef = {
  name: "episode status",
  summary: "Show the open episode this process belongs to, or all of them",
  usage: "episode status [--key K | --all] [--json]",
  description: "Shows status, when it last changed, the last sign of life and whether the client still runs.",
  options: { key: KEY_OPTION, all: { type: "boolean", description: "Show every open episode" }, json: JSON_OPTION },
};

const statusChange = (which: "idle" | "busy"): CommandDef => ({
  name: `episode ${which}`,
  summary: which === "idle" ? "Mark the episode idle (waiting at its prompt)" : "Mark the episode busy (working)",
  usage: `episode ${which} [--key K]`,
  description: `Sets the status to ${which} and records when, which also counts as a sign of life.` + (which === "idle"
    ? "\nAn episode that needs info stays so: idle does not answer its question."
    : "\nBusy also answers a needs-info: the worker is at work again, and the supervisor makes its item active."),
  options: { key: KEY_OPTION },
});

const needsInfo: CommandDef = {
  name: "episode needs-info",
  summary: "Say the worker waits for its owner, and what it asks",
  usage: "episode needs-info [--key K] --reason TEXT",
  description:
    "Sets the status to needs_info with the question (needs_info_reason) and when, and logs\n" +
    "episode.needs_info with it in the ledger. The daemon's next pass moves the worker's item to needs_info\n" +
    "(\"worker asks: <reason>\"), which status lists under \"needs you\". The reason is redacted, its control\n" +
    "characters escaped, and cut at 500 characters. Going busy again (episode busy, a prompt submitted, a\n" +
    "tool about to run) answers it and the item is active again; going idle does not.",
  options: {
    key: KEY_OPTION,
    reason: { type: "string", value: "TEXT", description: "What the worker asks its owner" },
  },
  examples: ['robot-army episode needs-info --key item-3 --reason "which database should the cache use?"'],
};

const end: CommandDef = {
  name: "episode end",
  summary: "Close the episode into a record under .ai/repo/sessions/",
  usage: "episode end [--key K] [--outcome O] [--json]",
  description:
    "Writes .ai/repo/sessions/<started>--<id>.md: front matter with the id, key, start and end times, the\n" +
    "outcome, the commits between the start commit and HEAD and the files they changed; then logs episode.end\n" +
    "in the ledger and removes the open file.",
  options: {
    key: KEY_OPTION,
    outcome: { type: "string", value: "O", description: "How the work ended, e.g. done, blocked, handed-off (default: done)" },
    json: JSON_OPTION,
  },
};

const hook: CommandDef = {
  name: "episode hook",
  summary: "Keep the episode from an agent's own hooks (Claude Code, Codex)",
  usage: "episode hook <claude|codex> --key K [--session ID] [PAYLOAD]",
  description:
    "Run by the hooks robot-army writes for a worker, not by hand. claude: reads the hook's JSON on stdin\n" +
    "(hook_event_name): SessionStart opens the episode, idle while the session waits at its prompt (a\n" +
    "new, resumed, forked or cleared one; one restarted by compaction mid-turn stays busy),\n" +
    "UserPromptSubmit and PreToolUse mark it busy, Stop and the idle_prompt Notification idle,\n" +
    "PermissionRequest needs_info (the tool and its command or file the reason), the permission_prompt,\n" +
    "elicitation_dialog and agent_needs_input Notifications needs_info (their message the reason, never\n" +
    "replacing a PermissionRequest's words; the next tool, a prompt, or Stop, which comes only once the\n" +
    "prompt is answered, ends it), SessionEnd ends it. With --session, an event counts when it comes\n" +
    "from the worker's managed session (RA_SESSION_ID, which survives --resume and --fork-session) or\n" +
    "names that session; another Claude Code in the worktree is ignored.\n" +
    "codex: reads the hook's JSON on stdin, with the same names: SessionStart (sent with the first prompt)\n" +
    "opens the episode, UserPromptSubmit, PreToolUse and PostToolUse mark it busy, PermissionRequest\n" +
    "needs_info (the command the reason), Stop and Interrupt (Esc) idle, SessionEnd ends it. A payload\n" +
    "given as the last argument is read instead of stdin. The journal is the worktree of the worker's managed session, else\n" +
    "$CLAUDE_PROJECT_DIR, else the cwd the agent reports, else here. It always exits 0, saying what it did\n" +
    "(or a problem) on stderr and nothing on stdout, which the agent reads: a failing hook must never stop the agent.",
  options: {
    key: KEY_OPTION,
    session: { type: "string", value: "ID", description: "The worker's session id: an event of any other session (Claude Code's session_id) is ignored" },
  },
  positionals: { min: 1, max: 2 },
  examples: ["echo '{\"hook_event_name\":\"Stop\"}' | robot-army episode hook claude --key item-3", "echo '{\"hook_event_name\":\"Interrupt\"}' | robot-army episode hook codex --key item-3"],
};

/** What every `episode` subcommand works with: the repository it runs in, and where its output and warnings go. */
export interface EpisodeDeps {
  cwd: string;
  write: Write;
  warn: Write;
}

/** What `episode start` was asked for. */
export interface StartOptions {
  key: string;
  clientPid: number;
  json: boolean;
}

/** What `episode status` was asked for: the key as given (checked against --all when it runs). */
export interface StatusOptions {
  key: string | undefined;
  all: boolean;
  json: boolean;
}

/** What `episode idle` and `episode busy` were asked for. */
export interface StatusChangeOptions {
  key: string;
  status: "idle" | "busy";
}

/** What `episode needs-info` was asked for. */
export interface NeedsInfoOptions {
  key: string;
  reason: string;
}

/** What `episode end` was asked for. */
export interface EndOptions {
  key: string;
  outcome: string;
  json: boolean;
}

/** The `episode` family. */
export const command: FamilyDef = {
  name: "episode",
  summary: "Open, inspect and close the work journal's episodes",
  description: "An episode is a stretch of work a worker declares in the repository it works in.",
  subcommands: {
    start: { command: start, run: (args) => runStart(startOptions(args), commandDeps()) },
    status: { command: status, run: (args) => runStatus(statusOptions(args), commandDeps()) },
    idle: { command: statusChange("idle"), run: (args) => runStatusChange(statusChangeOptions(args, "idle"), commandDeps()) },
    busy: { command: statusChange("busy"), run: (args) => runStatusChange(statusChangeOptions(args, "busy"), commandDeps()) },
    "needs-info": { command: needsInfo, run: (args) => runNeedsInfo(needsInfoOptions(args), commandDeps()) },
    end: { command: end, run: (args) => runEnd(endOptions(args), commandDeps()) },
    hook: { command: hook, run: (args) => runHook(args, hookDeps()) },
  },
};

/** Routes argv to the subcommand; `hook` never exits other than 0, whatever it was given (its help aside). */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name !== "hook" || rest.includes("--help") || rest.includes("-h")) return await runSubcommand(command, argv);
  const deps = hookDeps();
  try {
    return await runHook(parse(hook, rest), deps);
  } catch (error) {
    deps.warn(`robot-army: episode hook: ${error instanceof Error ? error.message : String(error)}\n`);
    return 0;
  }
}

/** What `episode hook` reads besides its argv: its stdin, its environment, and where it runs. */
export interface HookDeps extends EpisodeDeps {
  stdin: () => Promise<string>;
  env: Record<string, string | undefined>;
}

function hookDeps(): HookDeps {
  return { ...commandDeps(), env: process.env, stdin: readStdin };
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Maps the agent's event to the episode and applies it; a problem is one line on stderr and
 * exit 0, never a failure the agent would act on.
 */
export async function runHook(args: ReturnType<typeof parse>, deps: HookDeps): Promise<number> {
  try {
    const [agent, payload] = args.positionals;
    if (agent !== "claude" && agent !== "codex") throw new UsageError(`episode hook takes claude or codex, got "${agent}"`);
    const key = resolveKey(stringOption(args, "key"), deps.env);
    if (!key) throw new UsageError("No episode key: pass --key K or set RA_EPISODE_KEY");
    // Both agents' hooks give their event on stdin; a payload argument is read instead where one is passed.
    const text = payload ?? await deps.stdin();
    const event = hookEventOf(agent, text);
    const worker = stringOption(args, "session");
    // The worker is known by its managed session (RA_SESSION_ID, which its holder set and every process it
    // starts inherits, whatever ids the agent gives its own sessions across --resume and --fork-session), or,
    // outside it, by the agent's session id being the worker's (the owner resuming its conversation by hand).
    const ours = worker === undefined || deps.env.RA_SESSION_ID === worker || event.sessionId === undefined || event.sessionId === worker;
    if (!ours) {
      // Another Claude Code in the same worktree (the owner's own, a fork by hand): not the worker's episode.
      deps.warn(asLines(`${agent} ${event.event}: ignored: session ${event.sessionId} is not the worker's (${worker})`));
      return 0;
    }
    const session = managedSession(deps.env);
    const cwd = session?.cwd ?? (agent === "claude" ? deps.env.CLAUDE_PROJECT_DIR : undefined) ?? event.cwd ?? deps.cwd;
    const journal = await openJournal(cwd, { forWrite: event.action !== "none" });
    const agentSession = worker !== undefined && event.sessionId !== undefined && event.sessionId !== worker ? event.sessionId : undefined;
    const line = await applyHook(journal, {
      key, action: event.action, reason: event.reason, turnEnded: event.turnEnded, atPrompt: event.atPrompt, vague: event.vague, agentSession, prompt: event.prompt,
      clientPid: session?.childPid ?? CALLER_PID, now: now(),
    });
    // On stderr: an agent reads a hook's stdout (both add a SessionStart's to the model's context, and Codex wants JSON of its Stop).
    deps.warn(asLines(`${agent} ${event.event}: ${line}`));
  } catch (error) {
    deps.warn(`robot-army: episode hook: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  return 0;
}

function hookEventOf(agent: HookAgent, text: string) {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    throw new UsageError(`the ${agent === "claude" ? "Claude Code" : "Codex"} hook input is not JSON`);
  }
  return agent === "claude" ? claudeHookEvent(input) : codexHookEvent(input);
}

/** The managed session the agent runs in (its holder set RA_SESSION_ID): its worktree and the agent's pid. */
function managedSession(env: Record<string, string | undefined>): { cwd: string; childPid: number | null } | undefined {
  if (!env.RA_SESSION_ID) return undefined;
  try {
    const record = readRecord(sessionRoot(env), env.RA_SESSION_ID);
    return record ? { cwd: record.cwd, childPid: record.childPid } : undefined;
  } catch {
    // A record being rewritten, or gone: the agent's own words say where it works.
    return undefined;
  }
}

function commandDeps(): EpisodeDeps {
  return { cwd: process.cwd(), write: writeStdout, warn: writeStderr };
}

function requireKey(args: ParsedArgs, def: CommandDef): string {
  const key = resolveKey(stringOption(args, "key"));
  if (!key) throw new UsageError("No episode key: pass --key K or set RA_EPISODE_KEY", helpText(def));
  return key;
}

/** The largest pid there can be: a pid is a signed 32-bit number (Linux allows at most 2^22). */
const MAX_PID = 2 ** 31 - 1;

/** `episode start`'s options: the key (else $RA_EPISODE_KEY) and the client's pid (else the caller's). */
export function startOptions(args: ParsedArgs): StartOptions {
  const key = requireKey(args, start);
  return { key, clientPid: integerOption(args, "client-pid", 2, MAX_PID) ?? CALLER_PID, json: args.values.json === true };
}

/** Opens the episode and says so; warns when its client is not running here. */
export async function runStart(opts: StartOptions, deps: EpisodeDeps): Promise<number> {
  const journal = await openJournal(deps.cwd, { forWrite: true });
  const episode = await startEpisode(journal, { key: opts.key, clientPid: opts.clientPid, now: now() });
  if (opts.json) {
    deps.write(asJson(episode));
  } else {
    deps.write(asLines(`started episode ${episode.id} (key ${opts.key}, ${episode.status})`));
    if (!episode.client.started_at) {
      deps.warn(`robot-army: warning: client pid ${opts.clientPid} is not running here, so recovery will not count it as alive\n`);
    }
  }
  return 0;
}

/** `episode status`'s options, as given. */
export function statusOptions(args: ParsedArgs): StatusOptions {
  return { key: stringOption(args, "key"), all: args.values.all === true, json: args.values.json === true };
}

/** Shows the open episode the key names, or every open one. */
export async function runStatus(opts: StatusOptions, deps: EpisodeDeps): Promise<number> {
  const journal = await openJournal(deps.cwd);
  if (opts.all && opts.key) throw new UsageError("--all and --key cannot be used together", helpText(status));
  let entries;
  if (opts.all) {
    entries = await listOpen(journal);
  } else {
    const key = resolveKey(opts.key);
    if (!key) throw new UsageError("No episode key: pass --key K or set RA_EPISODE_KEY", helpText(status));
    const entry = await findOpen(journal, key);
    if (!entry) throw new PreconditionError(`No open episode with key "${key}"; "robot-army episode status --all" lists the open ones`);
    entries = [entry];
  }
  const views = viewEpisodes(journal, entries, await readLedger(journal), now());
  if (opts.json) {
    deps.write(asJson(views));
  } else if (views.length === 0) {
    deps.write(asLines("no open episodes"));
  } else {
    deps.write(asLines(...views.flatMap((view, index) => [...(index ? [""] : []), ...describeEpisode(view)])));
  }
  return 0;
}

/** `episode idle`'s or `episode busy`'s options. */
export function statusChangeOptions(args: ParsedArgs, which: "idle" | "busy"): StatusChangeOptions {
  return { key: requireKey(args, statusChange(which)), status: which };
}

/** Sets the episode's status and says since when (or, idle while it needs info, that it still does). */
export async function runStatusChange(opts: StatusChangeOptions, deps: EpisodeDeps): Promise<number> {
  const journal = await openJournal(deps.cwd, { forWrite: true });
  const { episode, changed } = await setStatus(journal, { key: opts.key, status: opts.status, now: now() });
  deps.write(asLines(statusLine(episode, changed)));
  return 0;
}

/** `episode needs-info`'s options: the key and a reason that says something. */
export function needsInfoOptions(args: ParsedArgs): NeedsInfoOptions {
  const key = requireKey(args, needsInfo);
  const reason = stringOption(args, "reason");
  if (reason === undefined || !reason.trim()) throw new UsageError("episode needs-info says what the worker asks: pass --reason TEXT", helpText(needsInfo));
  return { key, reason };
}

/** Marks the episode `needs_info` with the worker's question and says so. */
export async function runNeedsInfo(opts: NeedsInfoOptions, deps: EpisodeDeps): Promise<number> {
  const journal = await openJournal(deps.cwd, { forWrite: true });
  const { episode, changed } = await setStatus(journal, { key: opts.key, status: "needs_info", reason: opts.reason, now: now() });
  deps.write(asLines(statusLine(episode, changed)));
  return 0;
}

/** `episode end`'s options: the key and an outcome that is one lower-case word. */
export function endOptions(args: ParsedArgs): EndOptions {
  const key = requireKey(args, end);
  const outcome = stringOption(args, "outcome") ?? "done";
  if (!/^[a-z][a-z0-9_-]{0,63}$/.test(outcome)) {
    throw new UsageError(`--outcome "${outcome}" must be a lower-case word such as done, blocked or handed-off`);
  }
  return { key, outcome, json: args.values.json === true };
}

/** Closes the episode into its record and says where it went. */
export async function runEnd(opts: EndOptions, deps: EpisodeDeps): Promise<number> {
  const { key, outcome } = opts;
  const journal = await openJournal(deps.cwd, { forWrite: true });
  const result = await endEpisode(journal, { key, outcome, now: now() });
  const record = shown(journal, result.recordFile);
  if (opts.json) {
    deps.write(asJson({ id: result.episode.id, key, outcome, record, commits: result.commits, changed_files: result.changedFiles }));
  } else {
    const commits = result.commits === null ? "commits could not be listed" : `${result.commits.length} commit(s), ${result.changedFiles!.length} changed file(s)`;
    deps.write(asLines(`ended episode ${result.episode.id} (key ${key}, outcome ${outcome}): ${commits}`, `record: ${record}`));
  }
  return 0;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
