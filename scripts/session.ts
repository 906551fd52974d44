/**
 * `robot-army session run|ls|peek|tag|kill|rm|gc`: managed sessions. Every worker runs
 * inside one, so its exit is recorded even while the daemon is down, and finished
 * sessions do not pile up.
 */
import { readFileSync } from "node:fs";
import { JSON_OPTION, asJson, asLines, helpText, integerOption, printVerbatim, runMain, runSubcommand, stdoutIsTerminal, stringOption, writeStderr, writeStdout } from "../lib/cli.ts";
import type { CommandDef, FamilyDef, ParsedArgs, Write } from "../lib/cli.ts";
import { now } from "../lib/clock.ts";
import { formatAge, MAX_TIMER_MS } from "../lib/duration.ts";
import { PreconditionError, RobotArmyError, UsageError } from "../lib/errors.ts";
import { commandText } from "../lib/shell-words.ts";
import { collectGarbage, describeGc } from "../lib/sessions/gc.ts";
import type { GcEffect } from "../lib/sessions/gc.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { auditEffect } from "../lib/store/audit.ts";
import { withStore } from "../lib/store/open.ts";
import { exitCodeOf, holdSession, update } from "../lib/sessions/holder.ts";
import type { OutputMode } from "../lib/sessions/holder.ts";
import { appendSessionEvent, ensureSessionRoot, isKept, listRecords, readRecord, unreadableRecords, removeSessionFiles, resolveRef, sessionFiles, sessionRoot } from "../lib/sessions/records.ts";
import type { SessionRecord } from "../lib/sessions/records.ts";
import { withLock } from "../lib/sessions/lock.ts";
import { takeLaunchEnv, withTerminal } from "../lib/sessions/launch-env.ts";
import { createSession, startDetached } from "../lib/sessions/start.ts";
import { sessionState, workerRuns } from "../lib/sessions/state.ts";
import { describeLeftRunning, describeStopLeft, stopSession } from "../lib/sessions/stop.ts";
import { terminalLines } from "../lib/sessions/terminal-output.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";

const run: CommandDef = {
  name: "session run",
  summary: "Run a command as a managed session",
  usage: "session run [-d] [--name N] [--id UUID] [--tag k=v]... [--ephemeral | --permanent] [--cwd DIR] [--env K=V]... -- CMD [ARGS...]",
  description:
    "A small holder process runs CMD and records <root>/<id>.json, <id>.events.jsonl and the output log in\n" +
    "the session root ($RA_SESSION_ROOT, else <state dir>/sessions). In the foreground the output passes\n" +
    "through and the exit code is CMD's; with -d it returns once CMD is confirmed started.\n\n" +
    "When CMD ends by itself its files are removed, unless the session is permanent or tagged keep (any\n" +
    "value but false, 0, no, off; read at exit, so it can be added while running). A killed session is\n" +
    "kept for gc to sweep, unless --ephemeral. A session tagged ra_item=<id> writes its exit to the exit\n" +
    "spool (<state dir>/spool/) before anything is removed.",
  options: {
    detach: { type: "boolean", short: "d", description: "Start it in the background and print its name and id" },
    name: { type: "string", value: "N", description: "A unique name (default: the command's name and a short id)" },
    id: { type: "string", value: "UUID", description: "The session's id, chosen before the start (a UUID no session on record has; default: a new one)" },
    tag: { type: "string", value: "k=v", multiple: true, description: "A tag, e.g. keep=true or ra_item=42 (repeatable)" },
    ephemeral: { type: "boolean", description: "Remove its files at any exit, killed included (keep still wins)" },
    permanent: { type: "boolean", description: "Keep it at exit; gc starts it again" },
    cwd: { type: "string", value: "DIR", description: "The directory CMD runs in (default: here)" },
    env: { type: "string", value: "K=V", multiple: true, description: "An environment variable for CMD (repeatable)" },
    "launch-env": {
      type: "string", value: "FILE",
      description: "The environment CMD starts from, instead of this terminal's: a 0600 JSON file a launcher wrote, read and removed at once (the terminal's own TERM, TMUX_PANE, ... stay)",
    },
  },
  positionals: { min: 1, max: Infinity },
  examples: ["robot-army session run -d --name repro1 -- sh -c 'echo hello; sleep 1'", "robot-army session run --tag keep=true -- make test"],
};

const ls: CommandDef = {
  name: "session ls",
  summary: "List running sessions, then ended ones",
  usage: "session ls [--tags] [--json]",
  options: { tags: { type: "boolean", description: "Show each session's tags" }, json: JSON_OPTION },
};

const peek: CommandDef = {
  name: "session peek",
  summary: "Show the last lines of a session's output",
  usage: "session peek <ref> [-n N] [--json]",
  description:
    "A ref is a session's name, its id, or the start of its id. A session run in the foreground of a\n" +
    "tmux pane (as the tmux launcher runs workers) writes to the pane, not to a log: peek reads the\n" +
    "pane's last lines from tmux. One run in another terminal has no log to show.",
  options: { lines: { type: "string", short: "n", value: "N", description: "How many lines (default: 20)" }, json: JSON_OPTION },
  positionals: { min: 1, max: 1 },
};

const tag: CommandDef = {
  name: "session tag",
  summary: "Set or remove a session's tags",
  usage: "session tag <ref> [k=v]... [--rm k]...",
  description: "Works on a running session: its holder reads the tags again when it exits.",
  options: { rm: { type: "string", value: "k", multiple: true, description: "Remove a tag (repeatable)" } },
  positionals: { min: 1, max: Infinity },
  examples: ["robot-army session tag repro1 keep=true", "robot-army session tag repro1 --rm keep"],
};

const kill: CommandDef = {
  name: "session kill",
  summary: "Stop a session and keep its files",
  usage: "session kill <ref> [--grace SECONDS]",
  description:
    "SIGTERM to its command (SIGKILL after the grace period); the exit is recorded as killed and the files stay.\n" +
    "What a foreground command left running in its terminal's process group is not signalled: kill names it and exits 1.",
  options: { grace: { type: "string", value: "SECONDS", description: "How long to wait before SIGKILL (default: 5)" } },
  positionals: { min: 1, max: 1 },
};

const rm: CommandDef = {
  name: "session rm",
  summary: "Stop a session if it runs and remove its files (rm beats keep)",
  usage: "session rm <ref>",
  positionals: { min: 1, max: 1 },
};

const gc: CommandDef = {
  name: "session gc",
  summary: "Remove orphans, record abandoned sessions, respawn permanent ones, sweep ended ones",
  usage: "session gc [--dry-run] [--json]",
  description:
    "In order: a session tagged parent=<ref> whose parent is gone is stopped and removed (unless it is\n" +
    "kept: keep governs what ends, so a kept orphan is only reported); a permanent\n" +
    "session whose directory is gone is stopped and recorded as abandoned; an ended permanent session is\n" +
    "started again (three runs in a row that end within 60 s of starting tag it flapping=true and stop\n" +
    "that); ended sessions that are neither permanent nor kept are removed.",
  options: { "dry-run": { type: "boolean", description: "Change nothing: say what would be done" }, json: JSON_OPTION },
};

/** What every `session` subcommand works with: the environment that names the session root and state dir, and where output and warnings go. */
export interface SessionDeps {
  env: Record<string, string | undefined>;
  write: Write;
  warn: Write;
}

/** What `session run` was asked for: the command, and the session to make for it. */
export interface SessionRunOptions {
  command: string;
  args: string[];
  name: string | undefined;
  /** The id chosen before the start (`--id`), else a new one. */
  id?: string;
  cwd: string | undefined;
  env: Record<string, string>;
  /** A launch's environment file (`--launch-env`; not `--env-file`, which Node reads as its own option wherever it stands before `--`): the base the command starts from, instead of this terminal's. */
  envFile?: string;
  tags: Record<string, string>;
  permanent: boolean;
  ephemeral: boolean;
  detach: boolean;
}

/** What `session tag` was asked for. */
export interface TagOptions {
  ref: string;
  set: Record<string, string>;
  remove: string[];
}

/** The `session` family. */
export const command: FamilyDef = {
  name: "session",
  summary: "Run and manage worker processes whose exits are never lost",
  subcommands: {
    run: takingConfig(run, (args) => runRun(sessionRunOptions(args), { ...commandDeps(), output: stdoutIsTerminal() ? "terminal" : "tee" })),
    ls: takingConfig(ls, (args) => runLs({ tags: args.values.tags === true, json: args.values.json === true }, commandDeps())),
    // A worker's output is printed as it wrote it, its times included.
    peek: takingConfig(peek, (args) => (printVerbatim(), runPeek(peekOptions(args), commandDeps()))),
    tag: takingConfig(tag, (args) => runTag(tagOptions(args), commandDeps())),
    kill: takingConfig(kill, (args) => runKill(killOptions(args), commandDeps())),
    rm: takingConfig(rm, (args) => runRm({ ref: args.positionals[0] }, commandDeps())),
    gc: takingConfig(gc, (args) => runGc({ dryRun: args.values["dry-run"] === true, json: args.values.json === true }, commandDeps())),
  },
};

/**
 * A subcommand that takes `--config` as every command does: sessions live in the session
 * root, which the config does not move, but a file it names must still load.
 */
function takingConfig(def: CommandDef, handler: (args: ParsedArgs) => Promise<number>): { command: CommandDef; run: (args: ParsedArgs) => Promise<number> } {
  const [before, after] = def.usage.split(" -- ");
  const usage = `${before} [--config FILE]${after === undefined ? "" : ` -- ${after}`}`;
  return {
    command: { ...def, usage, options: { ...def.options, config: CONFIG_OPTION } },
    run: async (args) => {
      checkConfigOption(args);
      return await handler(args);
    },
  };
}

/** Routes argv to the subcommand. */
export function main(argv: string[]): Promise<number> {
  return runSubcommand(command, argv);
}

function commandDeps(): SessionDeps {
  return { env: process.env, write: writeStdout, warn: writeStderr };
}

/** `session run`'s options: the command after `--`, and `k=v` tags and variables read into maps. */
export function sessionRunOptions(args: ParsedArgs): SessionRunOptions {
  const [commandName, ...commandArgs] = args.positionals;
  return {
    command: commandName,
    args: commandArgs,
    name: stringOption(args, "name"),
    id: stringOption(args, "id"),
    cwd: stringOption(args, "cwd"),
    tags: pairs(args.values.tag, "--tag"),
    env: pairs(args.values.env, "--env"),
    envFile: stringOption(args, "launch-env"),
    permanent: args.values.permanent === true,
    ephemeral: args.values.ephemeral === true,
    detach: args.values.detach === true,
  };
}

/**
 * Makes the session and runs it: detached, it says which session started; in the
 * foreground, the command's output passes through as `output` says and its exit code is CMD's.
 */
export async function runRun(opts: SessionRunOptions, deps: SessionDeps & { output: OutputMode }): Promise<number> {
  // Taken first, so the file never outlives this command (a launch that fails below still removed it).
  const base = opts.envFile === undefined ? undefined : withTerminal(takeLaunchEnv(opts.envFile), deps.env);
  if (base && opts.detach) throw new UsageError("--launch-env is for a session held in this terminal, not with --detach");
  const root = ensureSessionRoot(deps.env);
  const record = await createSession(root, {
    id: opts.id,
    command: opts.command,
    args: opts.args,
    name: opts.name,
    cwd: opts.cwd,
    env: opts.env,
    tags: parentResolved(root, opts.tags),
    permanent: opts.permanent,
    ephemeral: opts.ephemeral,
  });
  if (opts.detach) {
    const started = await startDetached(root, record.id);
    deps.write(asLines(`started ${started.name} ${started.id} (pid ${started.pid})`));
    return 0;
  }
  const result = await holdSession(root, record.id, deps.output, undefined, base);
  if (result.record?.ended === "failed-to-start") {
    throw new PreconditionError(`Session "${record.name}" could not start "${record.command}": ${result.record.startError}`);
  }
  return exitCodeOf(result);
}

/**
 * A `parent=<ref>` tag names its parent by id: the ref (a name, an id or the start of one)
 * is resolved now, and one that names no session is refused, so gc never takes a typo
 * for a parent that is gone.
 */
function parentResolved(root: string, tags: Record<string, string>): Record<string, string> {
  if (tags.parent === undefined) return tags;
  return { ...tags, parent: resolveRef(root, tags.parent).id };
}

/** Reads repeated `k=v` options into a map. */
function pairs(values: unknown, option: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (values as string[] | undefined) ?? []) {
    const at = pair.indexOf("=");
    if (at < 1) throw new UsageError(`${option} "${pair}" must be key=value`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

/** Lists the running sessions, then the ended ones; warns of records that cannot be read. */
export async function runLs(opts: { tags: boolean; json: boolean }, deps: SessionDeps): Promise<number> {
  const root = sessionRoot(deps.env);
  const views = listRecords(root).map((record) => ({ ...record, state: sessionState(root, record), kept: isKept(record) }));
  const unreadable = unreadableRecords(root);
  if (opts.json) {
    deps.write(asJson(views));
    return 0;
  }
  for (const bad of unreadable) deps.warn(`robot-army: warning: ${bad.problem}\n`);
  if (views.length === 0) {
    deps.write(asLines("no sessions"));
    return 0;
  }
  const at = now().getTime();
  const running = views.filter((v) => v.state === "running" || v.state === "starting");
  const others = views.filter((v) => !(v.state === "running" || v.state === "starting"));
  const tags = (v: SessionRecord) => opts.tags && Object.keys(v.tags).length
    ? `  [${Object.entries(v.tags).map(([k, val]) => `${k}=${val}`).join(" ")}]` : "";
  const commandOf = (v: SessionRecord) => commandText([v.command, ...v.args]);
  const lines: string[] = [];
  if (running.length) {
    lines.push(`running (${running.length})`);
    for (const v of running) {
      const age = formatAge(at - Date.parse(v.startedAt));
      lines.push(`  ${v.name}  ${v.id.slice(0, 8)}  ${v.state === "starting" ? "starting" : `pid ${v.childPid}`}  up ${age}${v.kept ? "  keep" : ""}${v.permanent ? "  permanent" : ""}  ${commandOf(v)}${tags(v)}`);
    }
  }
  if (others.length) {
    lines.push(`${running.length ? "\n" : ""}ended (${others.length})`);
    for (const v of others) {
      const ago = v.exitedAt ? `${formatAge(at - Date.parse(v.exitedAt))} ago` : "";
      lines.push(`  ${v.name}  ${v.id.slice(0, 8)}  ${endedText(v, v.state)}${ago ? `  ${ago}` : ""}${v.kept ? "  keep" : ""}${v.permanent ? "  permanent" : ""}  ${commandOf(v)}${tags(v)}`);
    }
  }
  deps.write(asLines(...lines));
  return 0;
}

function endedText(record: SessionRecord, state: string): string {
  if (state === "vanished") return "vanished";
  if (state === "unknown") return "unknown (holder cannot be checked)";
  switch (record.ended) {
    case "killed": return "killed";
    case "crashed": return `crashed ${record.exitSignal}`;
    case "abandoned": return "abandoned";
    case "failed-to-start": return "failed to start";
    default: return `exit ${record.exitCode}`;
  }
}

/** `session peek`'s options: the session and how many lines. */
export function peekOptions(args: ParsedArgs): { ref: string; count: number; json: boolean } {
  return { count: integerOption(args, "lines", 1) ?? 20, ref: args.positionals[0], json: args.values.json === true };
}

/** Shows the last lines of a session's output: from its log, or from the tmux pane it ran in. */
export async function runPeek(opts: { ref: string; count: number; json: boolean }, deps: SessionDeps): Promise<number> {
  const { count } = opts;
  const root = sessionRoot(deps.env);
  const record = resolveRef(root, opts.ref);
  if (record.terminal) {
    // A foreground session's output went to its terminal: read the pane, or say where to look.
    const shown = await terminalLines(record.terminal, count);
    if (opts.json) deps.write(asJson({ name: record.name, id: record.id, terminal: record.terminal, ...shown }));
    else if ("unreadable" in shown) deps.write(asLines(`(${record.name} has no log: ${shown.unreadable})`));
    else if (shown.lines.length === 0) deps.write(asLines(`(nothing in ${record.name}'s tmux pane ${record.terminal.kind === "tmux" ? record.terminal.pane : ""} yet)`));
    else deps.write(asLines(...shown.lines));
    return 0;
  }
  let text: string;
  try {
    text = readFileSync(sessionFiles(root, record.id).log, "utf8");
  } catch {
    text = record.lastLines.join("\n");
  }
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  if (opts.json) deps.write(asJson({ name: record.name, id: record.id, lines: lines.slice(-count) }));
  else if (lines.length === 0) deps.write(asLines(`(no output from ${record.name} yet)`));
  else deps.write(asLines(...lines.slice(-count)));
  return 0;
}

/** `session tag`'s options: the session, the tags to set and those to remove (at least one of them). */
export function tagOptions(args: ParsedArgs): TagOptions {
  const [ref, ...assignments] = args.positionals;
  const set = pairs(assignments, "tag");
  const remove = (args.values.rm as string[] | undefined) ?? [];
  if (Object.keys(set).length === 0 && remove.length === 0) throw new UsageError("Nothing to change: give k=v or --rm k", helpText(tag));
  return { ref, set, remove };
}

/** Sets and removes the session's tags and shows the ones it has now. */
export async function runTag(opts: TagOptions, deps: SessionDeps): Promise<number> {
  const { set, remove } = opts;
  const root = sessionRoot(deps.env);
  const record = resolveRef(root, opts.ref);
  const resolved = parentResolved(root, set);
  const updated = await update(root, record.id, (r) => {
    const tags = { ...r.tags, ...resolved };
    for (const key of remove) delete tags[key];
    return { ...r, tags };
  });
  appendSessionEvent(root, record.id, "tag", { set, removed: remove });
  const shown = Object.entries(updated.tags).map(([k, v]) => `${k}=${v}`).join(" ");
  deps.write(asLines(`${updated.name}: ${shown || "no tags"}`));
  return 0;
}

/** `session kill`'s options: the session and the grace period in seconds. */
export function killOptions(args: ParsedArgs): { ref: string; grace: number } {
  return { grace: integerOption(args, "grace", 0, Math.floor(MAX_TIMER_MS / 1000)) ?? 5, ref: args.positionals[0] };
}

/** Stops the session (audited) and says whether its files were kept. */
export async function runKill(opts: { ref: string; grace: number }, deps: SessionDeps): Promise<number> {
  const root = sessionRoot(deps.env);
  const record = resolveRef(root, opts.ref);
  const result = await withAudit(deps, (audited) => audited("kill", record, () => stopSession(root, record, { graceMs: opts.grace * 1000 })));
  if (result === "not-running") deps.write(asLines(`${record.name} was not running; nothing to kill`));
  // Not "killed" while what it started runs on: say what still runs, and fail, so nothing takes its directory for free.
  else if (result === "left-running") {
    const after = readRecord(root, record.id) ?? record;
    throw new RobotArmyError(`Session "${record.name}" (${record.id}): ${describeStopLeft(after)}; its files are kept`);
  }
  // An --ephemeral session's holder removes its files even when it is killed: say which happened.
  else if (readRecord(root, record.id)) deps.write(asLines(`killed ${record.name} ${record.id}; its files are kept`));
  else deps.write(asLines(`killed ${record.name} ${record.id}; its files were removed (--ephemeral)`));
  return 0;
}

/** Stops the session if it runs and removes its files, each step audited. */
export async function runRm(opts: { ref: string }, deps: SessionDeps): Promise<number> {
  const root = sessionRoot(deps.env);
  const record = resolveRef(root, opts.ref);
  const stopped = await withAudit(deps, async (audited) => {
    const result = await audited("stop", record, () => stopSession(root, record));
    // Its record is what says something may still work in its directory: it is not removed while that may be so.
    const after = readRecord(root, record.id);
    if (after?.membersAtExit && workerRuns(root, after) !== false) {
      const how = result === "left-running" ? "stopped its command" : "its command ended";
      throw new RobotArmyError(`Session "${record.name}" (${record.id}): ${how}, but ${describeLeftRunning(after)}; its files are kept, not removed`);
    }
    await audited("remove", record, () => withLock(sessionFiles(root, record.id).lock, () => removeSessionFiles(root, record.id)));
    return result;
  });
  deps.write(asLines(`${stopped === "stopped" ? "stopped and removed" : "removed"} ${record.name} ${record.id}`));
  return 0;
}

/** Sweeps the session root (audited), or with `dryRun` says what a sweep would do. */
export async function runGc(opts: { dryRun: boolean; json: boolean }, deps: SessionDeps): Promise<number> {
  const { dryRun } = opts;
  const root = sessionRoot(deps.env);
  const report = dryRun
    ? await collectGarbage(root, { dryRun })
    : await withAudit(deps, (audited) => collectGarbage(root, { effect: audited }));
  if (opts.json) deps.write(asJson(report));
  else deps.write(asLines(...describeGc(report)));
  return 0;
}

/**
 * Runs `fn` with an `audited` wrapper that puts each stop, removal or respawn between an
 * audit intent and its outcome in the store (DESIGN rule 3), so a sweep leaves a trace.
 */
async function withAudit<T>(deps: SessionDeps, fn: (audited: GcEffect) => Promise<T>): Promise<T> {
  return await withStore(ensureStateDir(deps.env), async (store) => {
    const audited: GcEffect = (action, record, run) => auditEffect(
      store,
      { kind: `session.${action}`, sessionId: record.id, body: { name: record.name, generation: record.generation, item: record.tags.ra_item ?? null } },
      run,
    );
    return await fn(audited);
  });
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
