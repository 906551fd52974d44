/**
 * The argv fuzz: random command lines for every command, generated from the commands' own
 * definitions (known options with wrong values, unknown options, missing and extra
 * arguments, huge and negative numbers, control characters, `--json`, `--help`), each of
 * which must end with an exit code from 0 to 4 and no stack trace.
 *
 * Cases run in batches, one process per command (`scripts/dev/argv-cases.ts`), each in a
 * throwaway world: its own state dir, HOME, config (GitHub at a loopback port nothing
 * listens on, no repositories, so no case polls or starts a worker), a store with a work
 * item in each state, and a fresh git repository as its working directory. `RA_FUZZ_SEED`
 * replays a run; `RA_FUZZ_CASES` sets the cases per command.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "../lib/cli.ts";
import type { CommandDef, OptionDef } from "../lib/cli.ts";
import { runtimeArgv } from "../lib/runtime.ts";
import { makeGitRepo, makeTempDir, removeTempDir } from "../lib/testing/fixtures.ts";
import { makeItem } from "../lib/testing/items.ts";
import type { ItemSpec } from "../lib/testing/items.ts";
import { openStore } from "../lib/store/open.ts";
import type { CaseResult } from "./dev/argv-cases.ts";
import { COMMANDS } from "./robot-army.ts";

const SEED = Number(process.env.RA_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CASES_PER_COMMAND = Number(process.env.RA_FUZZ_CASES ?? 40);
const CASE_RUNNER = fileURLToPath(new URL("./dev/argv-cases.ts", import.meta.url));

/** Commands whose every case costs a process of its own (a session's holder): fewer of them. */
const FEWER_CASES: Record<string, number> = { "session run": 12 };

/**
 * Commands a case must not leave running for ever; a case whose argv would (it parses, and
 * asks for no help) is left out. `attach` needs no shape: no work item in the store has a
 * session, so there is nothing to attach to.
 */
const RUNS_FOR_EVER: Record<string, (values: Record<string, unknown>, positionals: string[]) => boolean> = {
  // The rehearsal: a forge and a daemon until Ctrl-C.
  start: () => true,
  // The sandbox forge serves until stopped.
  "forge serve": () => true,
  // The daemon ticks until stopped unless told --once.
  run: (values) => values.once !== true,
  // --follow prints new records until stopped.
  log: (values) => values.follow === true,
  // The dashboard serves until stopped; --render prints one page and ends.
  serve: (values) => values.render === undefined,
  // Runs the command given: only commands that end at once are allowed as one.
  "session run": (_values, positionals) => !SAFE_PROGRAMS.includes(positionals[0]),
};

/** What `session run` may be given to run: each ends at once. */
const SAFE_PROGRAMS = ["true", "false"];

/** Values that have broken command lines before, or are at the edges of what a value can be. */
const EDGE_VALUES = [
  "", " ", "-", "--", "0", "-0", "-1", "1", "2", "1.5", "1e3", "0x10", "+5", "NaN", "Infinity", "-Infinity",
  "2147483647", "2147483648", "4294967296", "9007199254740991", "9007199254740993", "9223372036854775807",
  "99999999999999999999", "-99999999999999999999", "1".repeat(400),
  "30s", "0s", "1h30m", "9999999w", "99999999999999999999999d", "-1h", "1.5h", "36500d", "36501d",
  "2026-01-01T00:00:00Z", "2026-13-45T99:99:99Z", "1970-01-01", "9999-12-31T23:59:59Z",
  "demo/widgets", "demo/widgets#1", "demo/widgets#0", "demo/widgets#9007199254740993", "../..#1", "a/b/c#1",
  "k=v", "=", "k=", "=v", "a=b=c", "{\"a\":1}", "[", "{", "null", "[1,2]", "\"x\"", "[".repeat(20_000) + "]".repeat(20_000),
  "\x1b[31mred\x1b[0m", "\r", "\n", "a\nb", "\t", "\x7f", "\u202e", "é", "🤖", "a".repeat(5000), "..", ".",
  "ra-demo-1", "issue-1", "00000000-0000-0000-0000-000000000000",
];

/** Numbers as people mistype them: most options and arguments are numbers, ids or durations. */
const NUMBERISH = ["0", "-1", "1", "2", "3", "4", "5", "6", "12", "1.5", "1e3", "0x10", "+5", "", "9007199254740993", "99999999999999999999", "30s", "-1h"];

const valueArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NUMBERISH), weight: 4 },
  { arbitrary: fc.constantFrom(...EDGE_VALUES), weight: 4 },
  { arbitrary: fc.integer({ min: -100_000, max: 100_000 }).map(String), weight: 2 },
  { arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String), weight: 1 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 2 },
  { arbitrary: fc.string({ unit: fc.integer({ min: 1, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 12 }), weight: 1 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }), weight: 1 },
).map(harmless);

/**
 * A value no real command line could hold, or that would reach outside the case's world,
 * made harmless: argv cannot carry NUL, and an absolute path is made relative to the case's
 * working directory so no value names a file outside it.
 */
function harmless(value: string): string {
  const text = value.replaceAll("\u0000", "");
  return text.startsWith("/") ? `.${text}` : text;
}

/** One option's tokens: right and wrong spellings of it, with and without values. */
function optionTokens(name: string, opt: OptionDef): fc.Arbitrary<string[]> {
  const spellings: fc.Arbitrary<string[]>[] = [];
  if (opt.type === "string") {
    spellings.push(valueArb.map((v) => [`--${name}`, v]), valueArb.map((v) => [`--${name}=${v}`]), fc.constant([`--${name}`]));
    if (opt.short) spellings.push(valueArb.map((v) => [`-${opt.short}`, v]));
  } else {
    spellings.push(fc.constant([`--${name}`]), fc.constant([`--${name}`]), valueArb.map((v) => [`--${name}=${v}`]));
    if (opt.short) spellings.push(fc.constant([`-${opt.short}`]));
  }
  return fc.oneof(...spellings);
}

/** Options the command does not have. */
const unknownOptionArb: fc.Arbitrary<string[]> = fc.oneof(
  fc.constantFrom("--no-such-option", "--JSON", "--help=yes", "---", "--=", "-Z", "-", "--json=false", "--config"),
  fc.stringMatching(/^[a-z][a-z-]{0,10}$/).map((name) => [`--x-${name}`]),
).map((t) => (Array.isArray(t) ? t : [t]));

/** A command line for one command: its words, then a random mixture of tokens. */
function argvArb(words: string[], def: CommandDef): fc.Arbitrary<string[]> {
  const options = Object.entries(def.options ?? {});
  const known = options.length ? [{ arbitrary: fc.oneof(...options.map(([name, opt]) => optionTokens(name, opt))), weight: 6 }] : [];
  const positional = words.join(" ") === "session run" ? fc.constantFrom(...SAFE_PROGRAMS, "-x", "arg") : valueArb;
  const token = fc.oneof(
    ...known,
    { arbitrary: unknownOptionArb, weight: 1 },
    { arbitrary: positional.map((p) => [p]), weight: 4 },
    { arbitrary: fc.constant(["--json"]), weight: 1 },
    { arbitrary: fc.constant(["--"]), weight: 1 },
  );
  const help = fc.oneof({ arbitrary: fc.constant<string[]>([]), weight: 12 }, { arbitrary: fc.constantFrom(["--help"], ["-h"]), weight: 1 });
  return fc.tuple(fc.array(token, { maxLength: 6 }), help, fc.nat()).map(([tokens, helpTokens, at]) => {
    const flat = tokens.flat();
    flat.splice(at % (flat.length + 1), 0, ...helpTokens);
    return [...words, ...(words[0] === "run" ? ["--once"] : []), ...flat];
  });
}

/** Whether a case would start something that never ends by itself: then it is not run. */
function runsForEver(words: string[], def: CommandDef, argv: string[]): boolean {
  const check = RUNS_FOR_EVER[words.join(" ")];
  if (!check) return false;
  try {
    const parsed = parse(def, argv.slice(words.length));
    return check(parsed.values, parsed.positionals);
  } catch {
    return false; // help, or a usage error: it ends before it starts anything
  }
}

/** Every leaf command, with the words that call it. */
async function leafCommands(): Promise<Array<{ words: string[]; def: CommandDef }>> {
  const leaves: Array<{ words: string[]; def: CommandDef }> = [];
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const { command } = await entry.load();
    if ("subcommands" in command) {
      for (const [sub, { command: def }] of Object.entries(command.subcommands)) leaves.push({ words: [name, sub], def });
    } else {
      leaves.push({ words: [name], def: command });
    }
  }
  return leaves;
}

/** Cases for one leaf command: `count` of them that end by themselves. */
function casesFor(words: string[], def: CommandDef, seed: number): string[][] {
  const count = FEWER_CASES[words.join(" ")] ?? CASES_PER_COMMAND;
  const sampled = fc.sample(argvArb(words, def), { numRuns: count * 4, seed });
  return sampled.filter((argv) => !runsForEver(words, def, argv)).slice(0, count);
}

/** Cases for the router and each family's own dispatch: unknown and missing words. */
function routingCases(families: string[], seed: number): string[][] {
  const word = fc.oneof(fc.constantFrom("", "help", "-h", "--help", "-V", "--version", "nosuch", "Status", "statu", "--json"), valueArb);
  const routed = fc.sample(fc.tuple(fc.constantFrom("", ...families), word, fc.array(valueArb, { maxLength: 2 })), { numRuns: CASES_PER_COMMAND, seed });
  return [[], ...families.map((f) => [f]), ...routed.map(([family, w, rest]) => (family ? [family, w, ...rest] : [w, ...rest]))]
    .filter((argv) => !(argv[0] === "start" || argv[0] === "run"));
}

/**
 * Work items the world's store starts with, so the verbs that take an id get past "no such
 * item": one in each state a test path reaches, titles with control characters included.
 * Their repository is in no config, so nothing can dispatch them, whatever the effect level.
 */
const ITEMS: ItemSpec[] = [
  { issue: 1, state: "ready" }, { issue: 2, state: "dispatching" }, { issue: 3, state: "active" },
  { issue: 4, state: "failed", title: "Fix \x1b[31mred\x1b[0m\r\n text" }, { issue: 5, state: "abandoned" }, { issue: 6, state: "discovered", simulated: true },
];

/** A throwaway world for one batch: state dir, HOME, config, a store with work items and a git repository to work in. */
async function makeWorld(root: string): Promise<{ env: Record<string, string>; cwd: string }> {
  const home = join(root, "home");
  const state = join(root, "state");
  mkdirSync(home, { recursive: true });
  mkdirSync(state, { recursive: true, mode: 0o700 });
  const cwd = makeGitRepo(join(root, "work", "in", "repo"));
  const config = join(root, "config.toml");
  // Port 9 (discard) on loopback: nothing listens, so no case can reach a real GitHub.
  writeFileSync(config, '[daemon]\neffect_level = "plan"\n\n[github]\napi_base = "http://127.0.0.1:9"\nauthor = "owner"\n');
  const store = await openStore(state);
  try {
    for (const spec of ITEMS) makeItem(store, spec);
  } finally {
    store.close();
  }
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".local/state"),
    RA_STATE_DIR: state, RA_CONFIG: config, RA_SESSION_ROOT: join(state, "sessions"),
  };
  for (const name of ["RA_EPISODE_KEY", "RA_NOW", "RA_CALLER_PID", "RA_GITHUB_API", "RA_GITHUB_TOKEN_FILE", "RA_PROMPT_FILE", "RA_REPO", "RA_SESSION_NAME", "GITHUB_TOKEN"]) delete env[name];
  return { env, cwd };
}

/** Runs one batch of cases in a child process; resolves with one result per case run. */
async function runBatch(cases: string[][], root: string): Promise<{ results: CaseResult[]; stderr: string; ended: string }> {
  const { env, cwd } = await makeWorld(root);
  const file = join(root, "cases.json");
  const resultsFile = join(root, "results.jsonl");
  writeFileSync(file, JSON.stringify(cases));
  writeFileSync(resultsFile, "");
  const [program, ...args] = runtimeArgv(CASE_RUNNER);
  return await new Promise((resolve, reject) => {
    // A process group of its own: a foreground `session run` case waits for whatever in its
    // group started after its command did, and the batches running beside it would be that.
    const child = spawn(program, [...args, file, resultsFile], { cwd, env, stdio: "pipe", detached: true });
    child.stdin.end(); // no stdin: a question a case asks is left unanswered
    child.stdout.resume(); // a holder a case starts may print here; what counts is in resultsFile
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const results = readFileSync(resultsFile, "utf8").split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as CaseResult);
      resolve({ results, stderr: err, ended: signal ? `killed by ${signal}` : `exit ${code}` });
    });
  });
}

/** What is wrong with how a case ended, or undefined when it ended as a command should. */
function problemWith(result: CaseResult): string | undefined {
  if (result.exit === null) return "did not end within 10s";
  if (result.escaped) return `an error escaped: ${result.escaped.split("\n")[0]}`;
  if (!(result.exit >= 0 && result.exit <= 4)) return `exit code ${result.exit}`;
  for (const [name, text] of [["stderr", result.stderr], ["stdout", result.stdout]] as const) {
    if (/^ {4}at /m.test(text)) return `a stack trace on ${name}`;
    if (/unexpected error|\b(TypeError|RangeError|SyntaxError|ReferenceError)\b/.test(text)) return `${name}: ${text.split("\n").find((l) => /error/i.test(l))}`;
  }
  return undefined;
}

/** Runs promises made by `jobs`, at most `limit` at once. */
async function inParallel<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

test("every command line ends with an exit code from 0 to 4 and no stack trace", async () => {
  const leaves = await leafCommands();
  const families = [...new Set(leaves.filter((leaf) => leaf.words.length > 1).map((leaf) => leaf.words[0]))];
  const batches = new Map<string, string[][]>();
  leaves.forEach(({ words, def }, index) => {
    const batch = batches.get(words[0]) ?? [];
    batch.push(...casesFor(words, def, SEED + index));
    batches.set(words[0], batch);
  });
  batches.set("(router)", routingCases(families, SEED - 1));
  const root = makeTempDir("robot-army-fuzz-");
  const failures: string[] = [];
  try {
    const names = [...batches.keys()];
    const ran = await inParallel(names.map((name, i) => () => runBatch(batches.get(name)!, join(root, String(i)))), 2);
    names.forEach((name, i) => {
      const { results, stderr, ended } = ran[i];
      const cases = batches.get(name)!;
      const perCommand = new Map<string, number>();
      for (const result of results) {
        const leaf = leaves.find((l) => l.words.every((w, j) => result.argv[j] === w) && (l.words.length === 1 || result.argv.length > 1));
        const key = name === "(router)" ? "(router)" : (leaf?.words.join(" ") ?? name);
        perCommand.set(key, (perCommand.get(key) ?? 0) + 1);
        const problem = problemWith(result);
        if (problem) failures.push(`${JSON.stringify(result.argv.map((a) => (a.length > 60 ? `${a.slice(0, 60)}...(${a.length})` : a)))}: ${problem}`);
      }
      if (results.length < cases.length) {
        const last = results.at(-1);
        const culprit = last?.exit === null ? last.argv : cases[results.length];
        failures.push(`${JSON.stringify(culprit)}: ended its batch's process, ${ended} (${cases.length - results.length} case(s) never ran)${stderr ? `: ${stderr.trim().split("\n").slice(-3).join(" / ")}` : ""}`);
      }
      for (const [key, count] of perCommand) console.log(`argv fuzz: ${key} ${count} cases`);
    });
  } finally {
    removeTempDir(root);
  }
  assert.equal(failures, [], `argv fuzz (RA_FUZZ_SEED=${SEED}) found command lines that end badly`);
});

test.run();
