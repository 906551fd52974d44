/**
 * Every command the router lists takes one shape (issue 9): the definition with its
 * options, a `run(opts, deps)` whose output goes through `deps.write`, questions through
 * lib/cli.ts, and a thin `main`; a family routes through `runSubcommand` to one exported
 * `run<Sub>(opts, deps)` per subcommand. The list is the router's own, so a new command is
 * checked as soon as it is routed. Checked on the source, and by running some through `run`.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../lib/runtime.ts";
import { makeGitRepo, withTempDir } from "../lib/testing/fixtures.ts";
import { COMMANDS } from "./robot-army.ts";
import type { CommandModule } from "./robot-army.ts";

/** Commands whose definition, main and run are made elsewhere, and the file that makes them. */
const MADE_ELSEWHERE: Record<string, string> = {
  resume: "lib/dispatch/verbs/relaunch-command.ts",
  restart: "lib/dispatch/verbs/relaunch-command.ts",
};

const NAMES = Object.keys(COMMANDS);
const load = (name: string): Promise<CommandModule & Record<string, unknown>> => COMMANDS[name].load() as Promise<CommandModule & Record<string, unknown>>;
const isFamily = (mod: CommandModule) => "subcommands" in mod.command;
const sources = (name: string): Array<[string, string]> =>
  [`scripts/${name}.ts`, ...(Object.hasOwn(MADE_ELSEWHERE, name) ? [MADE_ELSEWHERE[name]] : [])]
    .map((file) => [file, readFileSync(join(PROJECT_ROOT, file), "utf8")]);

test("the router lists the commands, leaves and families both", async () => {
  assert.ok(NAMES.length >= 30, `only ${NAMES.length} commands`);
  const kinds = await Promise.all(NAMES.map(async (name) => isFamily(await load(name))));
  assert.ok(kinds.includes(true) && kinds.includes(false));
});

test("no command writes to stdout itself or reads a prompt itself: output goes through deps.write (writeStdout in main), questions through lib/cli.ts", () => {
  const offenders = NAMES.flatMap((name) => sources(name).flatMap(([file, text]) =>
    [/\bprint\(/, /\bprintJson\(/, /process\.stdout\.write\(/, /node:readline/, /\bwrite: \(text(: string)?\) =>/]
      .filter((pattern) => pattern.test(text)).map((pattern) => `${name} (${file}): ${pattern}`)));
  assert.equal(offenders, []);
});

test("a command whose main is made in another file names that file here, so its source is checked too", () => {
  const unnamed = NAMES.filter((name) => !/\bfunction main\(/.test(sources(name).map(([, text]) => text).join("\n")));
  assert.equal(unnamed, []);
});

test("a leaf command exports its definition, a thin main and run(opts, deps)", async () => {
  const wrong: string[] = [];
  for (const name of NAMES) {
    const mod = await load(name);
    if (isFamily(mod)) continue;
    if (typeof (mod.command as { usage?: unknown }).usage !== "string") wrong.push(`${name}: command`);
    if (typeof mod.main !== "function") wrong.push(`${name}: main`);
    if (typeof mod.run !== "function" || (mod.run as Function).length !== 2) wrong.push(`${name}: run(opts, deps)`);
  }
  assert.equal(wrong, []);
});

test("a command family routes through runSubcommand, and each subcommand's work is an exported run(opts, deps)", async () => {
  const wrong: string[] = [];
  for (const name of NAMES) {
    const mod = await load(name);
    if (!isFamily(mod)) continue;
    if (!sources(name).some(([, text]) => /runSubcommand\(command, argv\)/.test(text))) wrong.push(`${name}: main`);
    const runs = Object.entries(mod).filter(([key, value]) => /^run[A-Z]/.test(key) && typeof value === "function");
    const subcommands = Object.keys((mod.command as { subcommands: object }).subcommands).length;
    if (runs.length === 0) wrong.push(`${name}: no run function`);
    // A run may serve two subcommands (episode idle and busy), never the other way round.
    if (runs.length > subcommands) wrong.push(`${name}: ${runs.length} run functions for ${subcommands} subcommands`);
    for (const [key, fn] of runs) if ((fn as Function).length !== 2) wrong.push(`${name}: ${key} takes (opts, deps)`);
  }
  assert.equal(wrong, []);
});
test("episode, ledger and continuity run through run(opts, deps) write what the commands print", () =>
  withTempDir(async (dir) => {
    const repo = makeGitRepo(join(dir, "repo"));
    const { runStart, runStatusChange } = await import("./episode.ts");
    const { runAppend, runTail } = await import("./ledger.ts");
    const { run: continuity } = await import("./continuity.ts");
    const out: string[] = [];
    const deps = { cwd: repo, write: (text: string) => out.push(text), warn: (text: string) => out.push(`warn: ${text}`) };
    await runStart({ key: "k1", clientPid: process.pid, json: false }, deps);
    await runStatusChange({ key: "k1", status: "idle" }, deps);
    await runAppend({ kind: "note", data: { text: "tests pass" }, key: "k1" }, deps);
    await runTail({ count: 5, json: false }, deps);
    await continuity({ records: 5, events: 0, json: false }, deps);
    const text = out.join("");
    assert.match(text, /^started episode \S+ \(key k1, busy\)\n/);
    assert.match(text, /\nepisode \S+ \(key k1\) is idle since /);
    assert.match(text, /  note  appended to episode \S+ \(key k1\)\n/);
    assert.match(text, /  note  k1  \{"text":"tests pass"\}\n/);
    assert.match(text, "Open episodes (1)\n");
    assert.match(text, "\nLatest records (0)\n  none\n\nLedger (last 0)\n  empty\n");
    assert.not.match(text, "warn: ");
  }));

test("session run, ls, peek, tag and rm run through run(opts, deps) write what the commands print", () =>
  withTempDir(async (dir) => {
    const { runLs, runPeek, runRm, runRun, runTag } = await import("./session.ts");
    const out: string[] = [];
    const env = { RA_SESSION_ROOT: join(dir, "sessions"), RA_STATE_DIR: join(dir, "state") };
    const deps = { env, write: (text: string) => out.push(text), warn: (text: string) => out.push(`warn: ${text}`) };
    const ran = await runRun(
      { command: "sh", args: ["-c", "echo hello"], name: "shape1", cwd: dir, env: {}, tags: { keep: "true" }, permanent: false, ephemeral: false, detach: false },
      { ...deps, output: "log" },
    );
    assert.is(ran, 0);
    await runLs({ tags: true, json: false }, deps);
    await runPeek({ ref: "shape1", count: 5, json: false }, deps);
    await runTag({ ref: "shape1", set: { color: "blue" }, remove: ["keep"] }, deps);
    await runRm({ ref: "shape1" }, deps);
    await runLs({ tags: false, json: false }, deps);
    const text = out.join("");
    assert.match(text, /^ended \(1\)\n  shape1  [0-9a-f]{8}  exit 0  \S+ ago  keep  sh -c 'echo hello'  \[keep=true\]\n/);
    assert.match(text, "\nhello\nshape1: color=blue\nremoved shape1 ");
    assert.match(text, /\nno sessions\n$/);
    assert.not.match(text, "warn: ");
  }));

test("forge seed and forge issue run through run(opts, deps) write what the commands print", () =>
  withTempDir(async (dir) => {
    const { runIssue, runSeed } = await import("./forge.ts");
    const out: string[] = [];
    const write = (text: string) => out.push(text);
    await runSeed({ dir, repo: "demo/widgets", issues: 1, json: false }, { write });
    const seeded = out.join("");
    assert.match(seeded, /^repository  demo\/widgets  \(clone /);
    assert.match(seeded, "\ntoken       owner (trusted author)  ");
    assert.match(seeded, "\nseeded      the repository; users owner, stranger; issues #1 #2 #3\n");
    out.length = 0;
    await runIssue({ repo: "demo/widgets", number: 1, dir, json: true }, { write });
    const shown = JSON.parse(out.join(""));
    assert.equal([shown.repo, shown.number, shown.comments], ["demo/widgets", 1, []]);
  }));

test.run();
