/**
 * A stand-in for `kitty` in tests, where there is no display: an executable that records
 * each call's argv (one JSON line per call) and acts out the remote-control commands the
 * kitty launcher uses. `launch` really starts the command after `--` (detached, as a tab's
 * program), `ls` answers kitty's JSON shape from the tabs it knows, `focus-tab --match
 * var:K=RE` fails when no tab matches (matching the way kitty does: a regular expression
 * search, so an unanchored `7` would also match `17`), and `close-window --match` closes the
 * windows matching every `id:N`, `pid:N` and `var:K=RE` term joined by `and` (hanging up on the
 * program it started, as kitty does), failing as kitty does when none matches; `send-text
 * --match ... --stdin` appends what it reads on stdin to the matching windows' typed text (`typed`),
 * failing the same way when none matches.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeArgv } from "../runtime.ts";

/** One recorded call of the stand-in. */
export interface KittyCall {
  argv: string[];
}

/** A tab as the stand-in keeps it; `pid` is the program it started, null for a tab seeded by the test. */
export interface StandInTab {
  id: number;
  title: string;
  vars: Record<string, string>;
  pid: number | null;
  startTicks: string | null;
}

/** The stand-in's files and what it recorded. */
export interface KittyStandIn {
  /** The executable to give the launcher as its kitty binary. */
  binary: string;
  /** The variables the stand-in needs in its environment (where to keep its files). */
  env: Record<string, string>;
  /** Every call so far, oldest first. */
  calls(): KittyCall[];
  /** The tabs it knows now. */
  tabs(): StandInTab[];
  /** What `send-text` typed into a window so far ("" when nothing). */
  typed(id: number): string;
  /** Adds tabs that exist before the test launches anything (the owner's, another item's). */
  seed(tabs: Array<{ id: number; title: string; vars: Record<string, string> }>): void;
}

/** Writes the stand-in into `dir`. */
export function writeKittyStandIn(dir: string): KittyStandIn {
  const script = join(dir, "kitty-standin.mjs");
  const binary = join(dir, "kitty");
  writeFileSync(script, STANDIN_SOURCE);
  const quoted = [...runtimeArgv(script)].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
  writeFileSync(binary, `#!/bin/sh\nexec ${quoted} "$@"\n`, { mode: 0o755 });
  const tabsFile = join(dir, "tabs.json");
  const readTabs = (): StandInTab[] => {
    try {
      return JSON.parse(readFileSync(tabsFile, "utf8"));
    } catch {
      return [];
    }
  };
  return {
    binary,
    env: { KITTY_STANDIN_DIR: dir },
    calls() {
      try {
        return readFileSync(join(dir, "calls.jsonl"), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
      } catch {
        return [];
      }
    },
    tabs: readTabs,
    typed(id) {
      try {
        return readFileSync(join(dir, `typed-${id}.txt`), "utf8");
      } catch {
        return "";
      }
    },
    seed(tabs) {
      writeFileSync(tabsFile, JSON.stringify([...readTabs(), ...tabs.map((t) => ({ ...t, pid: null, startTicks: null }))]));
    },
  };
}

/** Writes a kitty that cannot be reached: every call fails as kitty does without remote control. */
export function writeUnreachableKitty(dir: string): string {
  const binary = join(dir, "kitty-unreachable");
  writeFileSync(binary, "#!/bin/sh\necho 'Error: Could not connect to the kitty socket' >&2\nexit 1\n", { mode: 0o755 });
  return binary;
}

const STANDIN_SOURCE = String.raw`
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";

const dir = process.env.KITTY_STANDIN_DIR;
const argv = process.argv.slice(2);
appendFileSync(join(dir, "calls.jsonl"), JSON.stringify({ argv }) + "\n");
const tabsFile = join(dir, "tabs.json");
let tabs = [];
try { tabs = JSON.parse(readFileSync(tabsFile, "utf8")); } catch {}
const save = () => writeFileSync(tabsFile, JSON.stringify(tabs));
const fail = (message) => { process.stderr.write("Error: " + message + "\n"); process.exit(1); };
const startTicks = (pid) => { try { const s = readFileSync("/proc/" + pid + "/stat", "utf8"); return s.slice(s.lastIndexOf(")") + 2).split(" ")[19]; } catch { return null; } };

let rest = argv[0] === "@" ? argv.slice(1) : fail("only remote control (kitty @) is acted out");
if (rest[0] === "--to") rest = rest.slice(2);
const [verb, ...args] = rest;

function matching(args) {
  const at = args.indexOf("--match");
  const terms = (at >= 0 ? args[at + 1] : "").split(" and ").map((term) => {
    const id = /^id:(\d+)$/.exec(term);
    if (id) return (t) => t.id === Number(id[1]);
    // The window's process, as kitty matches pid: one this stand-in started, still running as it was.
    const pid = /^pid:(\d+)$/.exec(term);
    if (pid) return (t) => t.pid === Number(pid[1]) && t.startTicks !== null && startTicks(t.pid) === t.startTicks;
    const m = /^var:([^=]+)=(.*)$/.exec(term);
    if (!m) fail("the stand-in only matches id:N, pid:N and var:KEY=REGEX, joined by and");
    const re = new RegExp(m[2]);
    return (t) => t.vars[m[1]] !== undefined && re.test(t.vars[m[1]]);
  });
  return tabs.filter((t) => terms.every((term) => term(t)));
}

if (verb === "launch") {
  const split = args.indexOf("--");
  const options = args.slice(0, split);
  const command = args.slice(split + 1);
  const value = (name) => options.filter((_, i) => options[i - 1] === name);
  const env = { ...process.env };
  delete env.KITTY_STANDIN_DIR;
  for (const pair of value("--env")) env[pair.slice(0, pair.indexOf("="))] = pair.slice(pair.indexOf("=") + 1);
  const vars = Object.fromEntries(value("--var").map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));
  const child = spawn(command[0], command.slice(1), { cwd: value("--cwd")[0], env, detached: true, stdio: "ignore" });
  child.unref();
  const id = Math.max(0, ...tabs.map((t) => t.id)) + 1;
  tabs.push({ id, title: value("--tab-title")[0] ?? "", vars, pid: child.pid, startTicks: startTicks(child.pid) });
  save();
  process.stdout.write(id + "\n");
} else if (verb === "ls") {
  const windows = (t) => [{ id: t.id, title: t.title, is_focused: false, user_vars: t.vars, cmdline: [] }];
  process.stdout.write(JSON.stringify([{ id: 1, is_focused: true, tabs: tabs.map((t) => ({ id: t.id, title: t.title, windows: windows(t) })) }], null, 2));
} else if (verb === "focus-tab") {
  if (matching(args).length === 0) fail("No matching tabs for expression");
} else if (verb === "close-window") {
  const closing = matching(args);
  if (closing.length === 0) fail("No matching windows for expression: " + args[args.indexOf("--match") + 1]);
  for (const t of closing) {
    // Only the program this stand-in started, known by pid plus start time.
    if (t.pid && t.startTicks && startTicks(t.pid) === t.startTicks) { try { process.kill(t.pid, "SIGHUP"); } catch {} }
  }
  tabs = tabs.filter((t) => !closing.includes(t));
  save();
} else if (verb === "send-text") {
  if (!args.includes("--stdin")) fail("the stand-in only sends text read from stdin");
  const typing = matching(args);
  if (typing.length === 0) fail("No matching windows for expression: " + args[args.indexOf("--match") + 1]);
  const text = readFileSync(0, "utf8");
  for (const t of typing) appendFileSync(join(dir, "typed-" + t.id + ".txt"), text);
} else {
  fail("the stand-in does not act out " + verb);
}
`;
