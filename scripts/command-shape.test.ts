/**
 * The commands of issue 9's list take one shape: the definition with its options, a
 * `run(opts, deps)` whose output goes through `deps.write`, questions through lib/cli.ts,
 * and a thin `main`. Checked on the source, and by running some through `run` itself.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../lib/runtime.ts";
import { makeGitRepo, withTempDir } from "../lib/testing/fixtures.ts";

const LEAVES = ["cancel", "abandon", "show", "prompt", "capacity", "pause", "unpause", "hold", "unhold", "holds", "repos", "poll", "continuity"];
const FAMILIES = ["episode", "ledger", "recover", "forge"];

const source = (name: string) => readFileSync(join(PROJECT_ROOT, "scripts", `${name}.ts`), "utf8");

test("no command of the list writes to stdout itself or reads a prompt itself: output goes through deps.write, questions through lib/cli.ts", () => {
  const offenders = [...LEAVES, ...FAMILIES].flatMap((name) => {
    const text = source(name);
    return [/\bprint\(/, /\bprintJson\(/, /process\.stdout\.write\(/, /node:readline/]
      .filter((pattern) => pattern.test(text)).map((pattern) => `${name}: ${pattern}`);
  });
  assert.equal(offenders, []);
});

test("a leaf command exports its definition, a thin main and run(opts, deps)", async () => {
  const wrong: string[] = [];
  for (const name of LEAVES) {
    const mod = await import(`./${name}.ts`);
    if (typeof mod.command?.usage !== "string") wrong.push(`${name}: command`);
    if (typeof mod.main !== "function") wrong.push(`${name}: main`);
    if (typeof mod.run !== "function" || mod.run.length !== 2) wrong.push(`${name}: run(opts, deps)`);
  }
  assert.equal(wrong, []);
});

test("a command family routes through runSubcommand, and each subcommand's work is an exported run(opts, deps)", async () => {
  const wrong: string[] = [];
  for (const name of FAMILIES) {
    const mod = await import(`./${name}.ts`);
    if (!/runSubcommand\(command, argv\)/.test(source(name))) wrong.push(`${name}: main`);
    const runs = Object.entries(mod).filter(([key, value]) => /^run[A-Z]/.test(key) && typeof value === "function");
    if (runs.length === 0) wrong.push(`${name}: no run function`);
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
