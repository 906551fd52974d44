/**
 * Command-line plumbing shared by every command: option parsing, help text generated
 * from the command's definition, `--json` output, and the one top-level catch that turns
 * errors into exit codes (0 ok, 1 failed, 2 usage, 3 precondition not met, 4 check failed).
 */
import { EXIT, RobotArmyError, UsageError } from "./errors.ts";
import { nearestName } from "./nearest-name.ts";
import { redact } from "./redact.ts";
import { inLocalTime } from "./local-time.ts";

// Builtins are taken as modules, not imported: an ES import of `node:fs` evaluates every one
// of its lazy exports (its promises, streams), which every command's start would pay for.
const { fstatSync, writeSync } = process.getBuiltinModule("node:fs");
const { parseArgs } = process.getBuiltinModule("node:util");

/** One `--option` of a command. */
export interface OptionDef {
  type: "string" | "boolean";
  /** Placeholder shown in help for a string option, e.g. `PID`. */
  value?: string;
  short?: string;
  multiple?: boolean;
  description: string;
}

/** A leaf command: what it does, how it is called, which options it takes. */
export interface CommandDef {
  /** The words after `robot-army`, e.g. `episode start`. */
  name: string;
  summary: string;
  /** The synopsis after `robot-army `, e.g. `episode start [--key K]`. */
  usage: string;
  description?: string;
  options?: Record<string, OptionDef>;
  /** How many positional arguments it takes (default none). */
  positionals?: { min?: number; max?: number };
  examples?: string[];
}

/** A command made of subcommands, e.g. `episode start|status|end`. */
export interface FamilyDef {
  name: string;
  summary: string;
  description?: string;
  subcommands: Record<string, Subcommand>;
}

/** A subcommand's definition and the handler that runs it. */
export interface Subcommand {
  command: CommandDef;
  run: (args: ParsedArgs) => Promise<number | void>;
}

/** Writes what an owner's verb said (lib/dispatch/verbs/owner-verbs.ts), a line each, and returns its exit code. */
export function writeSaid(write: Write, said: { lines: string[]; code: number }): number {
  write(asLines(...said.lines));
  return said.code;
}

/** Parsed options and positionals of one invocation. */
export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** Thrown by `parse` when `--help` was asked for; prints the help and exits 0. */
export class HelpRequested extends Error {
  help: string;
  constructor(help: string) {
    super("help requested");
    this.help = help;
  }
}

const HELP_OPTION: OptionDef = { type: "boolean", short: "h", description: "Show this help" };

/** `--utc`, which every command takes: text at a terminal shows times in the local zone (lib/local-time.ts) unless it is given. */
const UTC_OPTION: OptionDef = { type: "boolean", description: "Show times in UTC (text at a terminal shows your local zone; --json is always UTC)" };

/** Whether this command's text shows times in UTC: `--utc` or `--json` was given (set by `parse`), or it prints text verbatim. */
let timesInUtc = false;

/**
 * For a command whose output is someone else's text, printed as it is (a worker's terminal, the
 * prompt a worker is given): its times are left as written, never turned into the local zone.
 */
export function printVerbatim(): void {
  timesInUtc = true;
}

/** The `--json` option every read command takes. */
export const JSON_OPTION: OptionDef = { type: "boolean", description: "Print JSON instead of text" };

/** The help page of a leaf command, generated from its definition. */
export function helpText(def: CommandDef): string {
  const lines = [`Usage: robot-army ${def.usage}`, "", def.summary];
  if (def.description) lines.push("", def.description.trimEnd());
  const options = { ...def.options, utc: UTC_OPTION, help: HELP_OPTION };
  lines.push("", "Options:");
  const rows = Object.entries(options).map(([name, opt]) => {
    const flag = `${opt.short ? `-${opt.short}, ` : ""}--${name}${opt.type === "string" ? ` ${opt.value ?? "VALUE"}` : ""}`;
    return [flag, opt.description] as const;
  });
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  for (const [flag, text] of rows) lines.push(`  ${flag.padEnd(width)}${text}`);
  if (def.examples?.length) {
    lines.push("", "Examples:");
    for (const example of def.examples) lines.push(`  ${example}`);
  }
  return lines.join("\n") + "\n";
}

/** The help page of a command family: its subcommands with their summaries. */
export function familyHelpText(def: FamilyDef): string {
  const lines = [`Usage: robot-army ${def.name} <subcommand> [options]`, "", def.summary];
  if (def.description) lines.push("", def.description.trimEnd());
  lines.push("", "Subcommands:");
  const names = Object.keys(def.subcommands);
  const width = Math.max(...names.map((n) => n.length)) + 2;
  for (const name of names) {
    lines.push(`  ${name.padEnd(width)}${def.subcommands[name].command.summary}`);
  }
  lines.push("", `Run "robot-army ${def.name} <subcommand> --help" for a subcommand's options.`);
  return lines.join("\n") + "\n";
}

/** Parses argv against a command definition; unknown options and stray arguments are usage errors. */
export function parse(def: CommandDef, argv: string[]): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  for (const [name, opt] of Object.entries({ ...def.options, utc: UTC_OPTION, help: HELP_OPTION })) {
    options[name] = { type: opt.type, ...(opt.short ? { short: opt.short } : {}), ...(opt.multiple ? { multiple: true } : {}) };
  }
  // A negative number (`-1`, `--limit -3`) is a value, not an option: parseArgs is given a
  // stand-in for it, so the command's own check says what is wrong with it.
  const numbers = new Map<string, string>();
  const args = argv.map((arg) => {
    if (!/^-\d/.test(arg)) return arg;
    const standIn = `\u0000${numbers.size}`;
    numbers.set(standIn, arg);
    return standIn;
  });
  const restore = (value: string) => numbers.get(value) ?? value;
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error), helpText(def));
  }
  parsed.positionals = parsed.positionals.map(restore);
  for (const [name, value] of Object.entries(parsed.values)) {
    if (typeof value === "string") parsed.values[name] = restore(value);
    else if (Array.isArray(value)) parsed.values[name] = value.map((v) => (typeof v === "string" ? restore(v) : v));
  }
  if (parsed.values.help) throw new HelpRequested(helpText(def));
  timesInUtc = parsed.values.utc === true || parsed.values.json === true;
  delete parsed.values.utc;
  const { min = 0, max = 0 } = def.positionals ?? {};
  if (parsed.positionals.length < min) {
    throw new UsageError(`"${def.name}" needs ${min} argument(s), got ${parsed.positionals.length}`, helpText(def));
  }
  if (parsed.positionals.length > max) {
    throw new UsageError(`Unexpected argument "${parsed.positionals[max]}" for "${def.name}"`, helpText(def));
  }
  return { values: parsed.values as ParsedArgs["values"], positionals: parsed.positionals };
}

function describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // node:util phrases these with advice for script authors; keep the first sentence.
  return message.split(/\. (?=[A-Z])/)[0].replace(/\.$/, "");
}

/** Runs a family: picks the subcommand from argv[0] and hands it the rest. */
export async function runSubcommand(def: FamilyDef, argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    if (name === undefined) throw new UsageError(`"${def.name}" needs a subcommand`, familyHelpText(def));
    writeStdout(familyHelpText(def));
    return EXIT.ok;
  }
  const sub = Object.hasOwn(def.subcommands, name) ? def.subcommands[name] : undefined;
  if (!sub) {
    const near = nearestName(name, Object.keys(def.subcommands));
    throw new UsageError(`Unknown subcommand "${def.name} ${name}"${near ? `: did you mean "${def.name} ${near}"?` : ""}`, familyHelpText(def));
  }
  try {
    return (await sub.run(parse(sub.command, rest))) ?? EXIT.ok;
  } catch (error) {
    // Option values checked after parsing (a bad number, a bad duration) show the subcommand's help too.
    if (error instanceof UsageError && !error.help) error.help = helpText(sub.command);
    throw error;
  }
}

/** Runs `fn`; a usage error it throws (a bad option value checked after parsing) shows the command's help. */
export function withHelp<T>(def: CommandDef, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof UsageError && !error.help) error.help = helpText(def);
    throw error;
  }
}

/** Reads a string option, or undefined when it was not given. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Reads an option that must be a whole number, e.g. `--limit 5`, from `min` to `max`: by
 * default no larger than a number can be exactly (2^53-1), and less where it means less
 * (a port, a pid, seconds a timer waits).
 */
export function integerOption(args: ParsedArgs, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = stringOption(args, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min) {
    throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${raw}"`);
  }
  if (Number(raw) > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return Number(raw);
}

/** Where a command's `run` writes its output: stdout in `main`, a buffer in a test. */
export type Write = (text: string) => void;

/**
 * Writes to stdout: the `write` a command's `main` hands its `run`, and the only way product
 * code prints. A failing stdout never ends the process with a stack trace. A reader that went
 * away (`log | head -c 10`, EPIPE) is no failure: what is left to print goes nowhere and the
 * command ends as it would have, so a daemon keeps ticking and still writes its audit log
 * and heartbeat. Any other write error (a full disk, `> /dev/full`) is one line on stderr,
 * and the command ends with exit 1.
 */
export const writeStdout: Write = (text) => {
  // A person at a terminal reads times in their own zone; a pipe, --json and --utc keep UTC.
  writeStdoutVerbatim(!timesInUtc && stdoutIsTerminal() ? inLocalTime(text) : text);
};

/** Writes to stdout as given, no time turned into the local zone: someone else's output passed on (a worker's). */
export function writeStdoutVerbatim(data: string | Uint8Array): void {
  if (stdoutState.closed || stdoutState.failed) return;
  try {
    writeAll(1, data);
  } catch (error) {
    stdoutFailed(error as NodeJS.ErrnoException);
  }
}

/** Writes to stderr; when stderr itself fails (`2>&1 | head -1`) there is nowhere left to say so, and nothing is. */
export function writeStderr(data: string | Uint8Array): void {
  try {
    writeAll(2, data);
  } catch {
    // Nowhere to report it.
  }
}

/**
 * Writes all of `data` to a standard stream's descriptor at once, with no stream object:
 * `process.stdout` on a pipe builds a socket and loads some 30 modules, a tenth of a read
 * command's start. A descriptor left non-blocking by whoever shares it answers EAGAIN while
 * its reader is behind: the write waits a moment and goes on from where it stopped.
 */
function writeAll(fd: 1 | 2, data: string | Uint8Array): void {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

const encoder = new TextEncoder();
/** What a write waits on while a non-blocking descriptor is full: nothing ever wakes it, so it waits its millisecond. */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Whether stdout is a terminal, read once: a pipe or a file is known from its kind, without loading the terminal module. */
export function stdoutIsTerminal(): boolean {
  return (terminal[1] ??= isTerminal(1));
}

/** Whether stderr is a terminal (progress lines are shown only there). */
export function stderrIsTerminal(): boolean {
  return (terminal[2] ??= isTerminal(2));
}

const terminal: { 1?: boolean; 2?: boolean } = {};

function isTerminal(fd: 1 | 2): boolean {
  try {
    // Only a character device can be a terminal; /dev/null is one too, so the terminal module decides.
    if (!fstatSync(fd).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return process.getBuiltinModule("node:tty").isatty(fd);
}

/**
 * Calls `listener` once stdout's reader has gone away or a write to it failed: `log --follow`
 * ends then. Returns what stops listening.
 */
export function onStdoutGone(listener: () => void): () => void {
  stdoutGone.add(listener);
  return () => void stdoutGone.delete(listener);
}

const stdoutGone = new Set<() => void>();

/** Whether stdout's reader went away, or a write to it failed. */
const stdoutState = { closed: false, failed: false };

function stdoutFailed(error: NodeJS.ErrnoException): void {
  if (stdoutState.closed || stdoutState.failed) return;
  if (error.code === "EPIPE" || error.name === "BrokenPipe") stdoutState.closed = true;
  else {
    stdoutState.failed = true;
    process.exitCode = EXIT.failed;
    writeStderr(`robot-army: Cannot write the output: ${error.message}\n`);
  }
  for (const listener of stdoutGone) listener();
}

/** Lines of text as one string, each ended by a newline: what `print` writes. */
export function asLines(...lines: string[]): string {
  return lines.map((line) => line + "\n").join("");
}

/** A value as indented JSON and a newline: what `printJson` writes. */
export function asJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

/** What a question got: the line typed (or piped in), or how it went unanswered. */
export type Answer = { line: string } | { unanswered: "no stdin" | "interrupted" };

/** Asks a question and reads one line of the answer; how a command's `run` is handed `ask`. */
export type Ask = (question: string) => Promise<Answer>;

/**
 * Asks on stderr and reads one line from stdin. End of input (no stdin at all, as from a
 * script or a service, or a closed one) and Ctrl-C leave it unanswered, and the question's
 * line is ended so the refusal that follows starts on a line of its own. A command may ask
 * more than once: lines piped in past one answer are kept for the next question, and once
 * the input has ended every later question is unanswered at once (a new reader would wait
 * for an end that has already come).
 */
export function ask(question: string, io: { input: NodeJS.ReadableStream & { isTTY?: boolean; readableEnded?: boolean }; output: NodeJS.WritableStream } = { input: process.stdin, output: quietStderr() }): Promise<Answer> {
  const queued = laterLines.get(io.input) ?? [];
  laterLines.set(io.input, queued);
  if (queued.length > 0) {
    io.output.write(`${question}\n`);
    return Promise.resolve({ line: queued.shift()! });
  }
  if (io.input.readableEnded) {
    io.output.write(`${question}\n`);
    return Promise.resolve({ unanswered: "no stdin" });
  }
  return new Promise((resolve) => {
    const rl = process.getBuiltinModule("node:readline").createInterface({ input: io.input, output: io.output, terminal: Boolean(io.input.isTTY) });
    let settled = false;
    const done = (answer: Answer) => {
      if (settled) return;
      settled = true;
      rl.close();
      resolve(answer);
    };
    const unanswered = (how: "no stdin" | "interrupted") => {
      if (!settled) io.output.write("\n");
      done({ unanswered: how });
    };
    rl.on("SIGINT", () => unanswered("interrupted"));
    rl.on("close", () => unanswered("no stdin"));
    // Lines that came in the same read as the answer: the next question's.
    rl.on("line", (line) => {
      if (settled) queued.push(line);
    });
    rl.question(question, (line) => done({ line }));
  });
}

/** `process.stderr` as a stream (readline's output), made only when a question is asked; a failing stderr is dropped. */
function quietStderr(): NodeJS.WritableStream {
  if (process.stderr.listenerCount("error") === 0) process.stderr.on("error", () => {});
  return process.stderr;
}

/** Lines read from an input past the answer of the question they came with, oldest first. */
const laterLines = new WeakMap<object, string[]>();

/** Writes a value as indented JSON, the form every `--json` output takes. */
export function printJson(value: unknown): void {
  writeStdout(asJson(value));
}

/** Writes lines to stdout. */
export function print(...lines: string[]): void {
  writeStdout(asLines(...lines));
}

/**
 * The one top-level catch: runs a command's main and maps what it throws to an exit code.
 * Expected errors are one line on stderr; a usage error is followed by the command's help.
 */
export async function runMain(main: (argv: string[]) => Promise<number | void>, argv: string[]): Promise<void> {
  try {
    process.exitCode = (await main(argv)) ?? EXIT.ok;
  } catch (error) {
    process.exitCode = reportError(error);
  }
  if (stdoutState.failed) process.exitCode = EXIT.failed;
}

function reportError(error: unknown): number {
  if (error instanceof HelpRequested) {
    writeStdout(error.help);
    return EXIT.ok;
  }
  if (error instanceof RobotArmyError) {
    writeStderr(`robot-army: ${redact(error.message)}\n`);
    if (error instanceof UsageError && error.help) writeStderr("\n" + error.help);
    return error.exitCode;
  }
  writeStderr(`robot-army: unexpected error: ${redact(error instanceof Error ? String(error.stack) : String(error))}\n`);
  return EXIT.failed;
}
