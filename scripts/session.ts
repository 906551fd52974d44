/**
 * `robot-army session run|ls|peek|tag|kill|rm|gc`: managed sessions. Every worker runs
 * inside one, so its exit is recorded even while the daemon is down, and finished
 * sessions do not pile up.
 */
import { readFileSync } from "node:fs";
import { JSON_OPTION, runSubcommand, helpText, integerOption, print, printJson, runMain, stringOption } from "../lib/cli.ts";
import type { CommandDef, FamilyDef, ParsedArgs } from "../lib/cli.ts";
import { now } from "../lib/clock.ts";
import { formatAge } from "../lib/duration.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { commandText } from "../lib/shell-words.ts";
import { collectGarbage, describeGc } from "../lib/sessions/gc.ts";
import type { GcEffect } from "../lib/sessions/gc.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { auditEffect } from "../lib/store/audit.ts";
import { openStore } from "../lib/store/open.ts";
import { exitCodeOf, holdSession, update } from "../lib/sessions/holder.ts";
import { appendSessionEvent, ensureSessionRoot, isKept, listRecords, readRecord, unreadableRecords, removeSessionFiles, resolveRef, sessionFiles, sessionRoot } from "../lib/sessions/records.ts";
import type { SessionRecord } from "../lib/sessions/records.ts";
import { withLock } from "../lib/sessions/lock.ts";
import { createSession, startDetached } from "../lib/sessions/start.ts";
import { sessionState } from "../lib/sessions/state.ts";
import { stopSession } from "../lib/sessions/stop.ts";
import { terminalLines } from "../lib/sessions/terminal-output.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";


const run: CommandDef = {
  name: "session run",
  summary: "Run a command as a managed session",
  usage: "session run [-d] [--name N] [--tag k=v]... [--ephemeral | --permanent] [--cwd DIR] [--env K=V]... -- CMD [ARGS...]",
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
    tag: { type: "string", value: "k=v", multiple: true, description: "A tag, e.g. keep=true or ra_item=42 (repeatable)" },
    ephemeral: { type: "boolean", description: "Remove its files at any exit, killed included (keep still wins)" },
    permanent: { type: "boolean", description: "Keep it at exit; gc starts it again" },
    cwd: { type: "string", value: "DIR", description: "The directory CMD runs in (default: here)" },
    env: { type: "string", value: "K=V", multiple: true, description: "An environment variable for CMD (repeatable)" },
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
  description: "SIGTERM to its command (SIGKILL after the grace period); the exit is recorded as killed and the files stay.",
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

/** The `session` family. */
export const command: FamilyDef = {
  name: "session",
  summary: "Run and manage worker processes whose exits are never lost",
  subcommands: {
    run: takingConfig(run, runRun),
    ls: takingConfig(ls, runLs),
    peek: takingConfig(peek, runPeek),
    tag: takingConfig(tag, runTag),
    kill: takingConfig(kill, runKill),
    rm: takingConfig(rm, runRm),
    gc: takingConfig(gc, runGc),
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

export function main(argv: string[]): Promise<number> {
  return runSubcommand(command, argv);
}

async function runRun(args: ParsedArgs): Promise<number> {
  const [commandName, ...commandArgs] = args.positionals;
  const root = ensureSessionRoot();
  const tags = parentResolved(root, pairs(args.values.tag, "--tag"));
  const record = await createSession(root, {
    command: commandName,
    args: commandArgs,
    name: stringOption(args, "name"),
    cwd: stringOption(args, "cwd"),
    env: pairs(args.values.env, "--env"),
    tags,
    permanent: args.values.permanent === true,
    ephemeral: args.values.ephemeral === true,
  });
  if (args.values.detach) {
    const started = await startDetached(root, record.id);
    print(`started ${started.name} ${started.id} (pid ${started.pid})`);
    return 0;
  }
  const result = await holdSession(root, record.id, process.stdout.isTTY ? "terminal" : "tee");
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

async function runLs(args: ParsedArgs): Promise<number> {
  const root = sessionRoot();
  const views = listRecords(root).map((record) => ({ ...record, state: sessionState(root, record), kept: isKept(record) }));
  const unreadable = unreadableRecords(root);
  if (args.values.json) {
    printJson(views);
    return 0;
  }
  for (const bad of unreadable) process.stderr.write(`robot-army: warning: ${bad.problem}\n`);
  if (views.length === 0) {
    print("no sessions");
    return 0;
  }
  const at = now().getTime();
  const running = views.filter((v) => v.state === "running" || v.state === "starting");
  const others = views.filter((v) => !(v.state === "running" || v.state === "starting"));
  const tags = (v: SessionRecord) => args.values.tags && Object.keys(v.tags).length
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
  print(...lines);
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

async function runPeek(args: ParsedArgs): Promise<number> {
  const count = integerOption(args, "lines", 1) ?? 20;
  const root = sessionRoot();
  const record = resolveRef(root, args.positionals[0]);
  if (record.terminal) {
    // A foreground session's output went to its terminal: read the pane, or say where to look.
    const shown = await terminalLines(record.terminal, count);
    if (args.values.json) printJson({ name: record.name, id: record.id, terminal: record.terminal, ...shown });
    else if ("unreadable" in shown) print(`(${record.name} has no log: ${shown.unreadable})`);
    else if (shown.lines.length === 0) print(`(nothing in ${record.name}'s tmux pane ${record.terminal.kind === "tmux" ? record.terminal.pane : ""} yet)`);
    else print(...shown.lines);
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
  if (args.values.json) printJson({ name: record.name, id: record.id, lines: lines.slice(-count) });
  else if (lines.length === 0) print(`(no output from ${record.name} yet)`);
  else print(...lines.slice(-count));
  return 0;
}

async function runTag(args: ParsedArgs): Promise<number> {
  const [ref, ...assignments] = args.positionals;
  const set = pairs(assignments, "tag");
  const remove = (args.values.rm as string[] | undefined) ?? [];
  if (Object.keys(set).length === 0 && remove.length === 0) throw new UsageError("Nothing to change: give k=v or --rm k", helpText(tag));
  const root = sessionRoot();
  const record = resolveRef(root, ref);
  const resolved = parentResolved(root, set);
  const updated = await update(root, record.id, (r) => {
    const tags = { ...r.tags, ...resolved };
    for (const key of remove) delete tags[key];
    return { ...r, tags };
  });
  appendSessionEvent(root, record.id, "tag", { set, removed: remove });
  const shown = Object.entries(updated.tags).map(([k, v]) => `${k}=${v}`).join(" ");
  print(`${updated.name}: ${shown || "no tags"}`);
  return 0;
}

async function runKill(args: ParsedArgs): Promise<number> {
  const grace = integerOption(args, "grace", 0) ?? 5;
  const root = sessionRoot();
  const record = resolveRef(root, args.positionals[0]);
  const result = await withAudit((audited) => audited("kill", record, () => stopSession(root, record, { graceMs: grace * 1000 })));
  if (result === "not-running") print(`${record.name} was not running; nothing to kill`);
  // An --ephemeral session's holder removes its files even when it is killed: say which happened.
  else if (readRecord(root, record.id)) print(`killed ${record.name} ${record.id}; its files are kept`);
  else print(`killed ${record.name} ${record.id}; its files were removed (--ephemeral)`);
  return 0;
}

async function runRm(args: ParsedArgs): Promise<number> {
  const root = sessionRoot();
  const record = resolveRef(root, args.positionals[0]);
  const stopped = await withAudit(async (audited) => {
    const result = await audited("stop", record, () => stopSession(root, record));
    await audited("remove", record, () => withLock(sessionFiles(root, record.id).lock, () => removeSessionFiles(root, record.id)));
    return result;
  });
  print(`${stopped === "stopped" ? "stopped and removed" : "removed"} ${record.name} ${record.id}`);
  return 0;
}

async function runGc(args: ParsedArgs): Promise<number> {
  const dryRun = args.values["dry-run"] === true;
  const report = dryRun
    ? await collectGarbage(sessionRoot(), { dryRun })
    : await withAudit((audited) => collectGarbage(sessionRoot(), { effect: audited }));
  if (args.values.json) printJson(report);
  else print(...describeGc(report));
  return 0;
}

/**
 * Runs `fn` with an `audited` wrapper that puts each stop, removal or respawn between an
 * audit intent and its outcome in the store (DESIGN rule 3), so a sweep leaves a trace.
 */
async function withAudit<T>(fn: (audited: GcEffect) => Promise<T>): Promise<T> {
  const store = await openStore(ensureStateDir());
  try {
    const audited: GcEffect = (action, record, run) => auditEffect(
      store,
      { kind: `session.${action}`, sessionId: record.id, body: { name: record.name, generation: record.generation, item: record.tags.ra_item ?? null } },
      run,
    );
    return await fn(audited);
  } finally {
    store.close();
  }
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
