import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse } from "../lib/cli.ts";
import { UsageError } from "../lib/errors.ts";
import { makeTempDir, removeTempDir } from "../lib/testing/fixtures.ts";
import { waitFor } from "../lib/testing/wait.ts";
import { appendAudit, auditEffect } from "../lib/store/audit.ts";
import { openStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { command, formatLine, logOptions, run } from "./log.ts";
import { spawnSync } from "node:child_process";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { commandText } from "../lib/shell-words.ts";
import type { LogOptions } from "./log.ts";

const NOW = new Date("2026-01-15T10:00:00Z");

function options(...argv: string[]): LogOptions {
  return logOptions(parse(command, argv), NOW);
}

async function withStateDir(fn: (stateDir: string) => Promise<void>): Promise<void> {
  const dir = makeTempDir();
  try {
    await fn(join(dir, "state"));
  } finally {
    removeTempDir(dir);
  }
}

async function output(opts: LogOptions, stateDir: string): Promise<string> {
  let text = "";
  await run(opts, { stateDir, write: (chunk) => (text += chunk) });
  return text;
}

async function seeded(stateDir: string): Promise<Store> {
  const store = await openStore(stateDir);
  appendAudit(store, { at: "2026-01-15T08:00:00Z", kind: "state.work_item", repo: "o/r", item: 12, body: { from: "ready", to: "dispatching" } });
  appendAudit(store, { at: "2026-01-15T09:30:00Z", kind: "session.recovered", item: 12, sessionId: "s-1", body: { reason: "exit record found" } });
  appendAudit(store, { at: "2026-01-15T09:45:00Z", kind: "state.work_item", repo: "o/r", item: 13, body: { from: "discovered", to: "ready" } });
  return store;
}

test("with no database, the log is empty and nothing is created", async () => {
  await withStateDir(async (stateDir) => {
    assert.is(await output(options(), stateDir), "no audit records\n");
    assert.is(await output(options("--json"), stateDir), "[]\n");
    assert.not.ok(existsSync(stateDir));
  });
});

test("an empty database prints the same", async () => {
  await withStateDir(async (stateDir) => {
    (await openStore(stateDir)).close();
    assert.is(await output(options(), stateDir), "no audit records\n");
    assert.is(await output(options("--json"), stateDir), "[]\n");
  });
});

test("one line per record, oldest first: time, phase, kind, subjects, action id, body", async () => {
  await withStateDir(async (stateDir) => {
    (await seeded(stateDir)).close();
    assert.is(
      await output(options(), stateDir),
      [
        "2026-01-15T08:00:00Z  fact  state.work_item  o/r#12  -  from=ready to=dispatching",
        '2026-01-15T09:30:00Z  fact  session.recovered  #12 session=s-1  -  reason="exit record found"',
        "2026-01-15T09:45:00Z  fact  state.work_item  o/r#13  -  from=discovered to=ready",
        "",
      ].join("\n"),
    );
  });
});

test("simulated records are hidden, and counted, unless --include-simulated", async () => {
  await withStateDir(async (stateDir) => {
    const store = await openStore(stateDir);
    await auditEffect(store, { kind: "github.comment", repo: "o/r", item: 12, simulated: true }, () => 1);
    store.close();
    assert.is(await output(options(), stateDir), "no audit records\n2 simulated record(s) hidden; --include-simulated shows them\n");
    assert.equal(JSON.parse(await output(options("--json"), stateDir)), []);
  });
});

test("an effect shows as intent and outcome sharing an action id; simulated ones say so", async () => {
  await withStateDir(async (stateDir) => {
    const store = await openStore(stateDir);
    await auditEffect(store, { kind: "github.comment", repo: "o/r", item: 12, simulated: true, episodeId: "e-1" }, () => 1);
    store.close();
    const lines = (await output(options("--include-simulated"), stateDir)).trimEnd().split("\n");
    assert.is(lines.length, 2);
    const id = /  ([0-9a-f-]{36})  /.exec(lines[0])?.[1];
    assert.ok(id);
    assert.match(lines[0], `  intent (simulated)  github.comment  o/r#12 episode=e-1  ${id}  writer=pid:${process.pid}`);
    assert.match(lines[1], `  outcome (simulated)  github.comment  o/r#12 episode=e-1  ${id}  ok=true`);
  });
});

test("filters: --since (duration or ISO), --kind prefix, --exclude-kind, --item, --limit", async () => {
  await withStateDir(async (stateDir) => {
    (await seeded(stateDir)).close();
    const kinds = async (...argv: string[]) => JSON.parse(await output(options("--json", ...argv), stateDir)).map((r: { id: number }) => r.id);
    assert.equal(await kinds("--since", "1h"), [2, 3]);
    assert.equal(await kinds("--since", "2026-01-15T09:40:00Z"), [3]);
    assert.equal(await kinds("--kind", "state."), [1, 3]);
    assert.equal(await kinds("--kind", "session"), [2]);
    assert.equal(await kinds("--item", "12"), [1, 2]);
    assert.equal(await kinds("--limit", "1"), [3]);
    assert.equal(await kinds("--item", "12", "--limit", "1"), [2]);
    assert.equal(await kinds("--exclude-kind", "state"), [2]);
    assert.equal(await kinds("--exclude-kind", "session.recovered,state.work_item"), []);
    assert.equal(await kinds("--exclude-kind", "sess"), [1, 2, 3], "a prefix excludes only whole kinds under it");
    assert.equal(await kinds("--exclude-kind", "session", "--limit", "1"), [3]);
  });
});

test("the daemon's passes that changed nothing, two or more in a row, read as one line; --json has every one", async () => {
  await withStateDir(async (stateDir) => {
    const store = await openStore(stateDir);
    const quiet = (tick: number, at: string) => appendAudit(store, { at, kind: "reconcile.pass", body: { tick, failed: [], pulls: { requests: 1, not_modified: 1, stored: 0 }, dispatch: { active: 0, waiting: 1 } } });
    quiet(1, "2026-01-15T08:00:00Z");
    quiet(2, "2026-01-15T08:00:05Z");
    quiet(3, "2026-01-15T08:00:10Z");
    appendAudit(store, { at: "2026-01-15T08:00:15Z", kind: "reconcile.pass", body: { tick: 4, failed: [], dispatch: { active: 1, waiting: 0 } } });
    quiet(5, "2026-01-15T08:00:20Z");
    store.close();
    const lines = (await output(options(), stateDir)).trimEnd().split("\n");
    assert.equal(lines.length, 3);
    assert.is(lines[0], "2026-01-15T08:00:00Z  fact  reconcile.pass  -  -  3 passes that changed nothing, to 2026-01-15T08:00:10Z");
    assert.match(lines[1], /reconcile\.pass .*tick=4 .*"active":1/);
    assert.match(lines[2], /tick=5 /, "one quiet pass alone is shown as it is");
    assert.is(JSON.parse(await output(options("--json"), stateDir)).length, 5);
  });
});

test("at a terminal the log shows times in the local zone; --utc, --json and a pipe keep UTC", async () => {
  await withStateDir(async (stateDir) => {
    (await seeded(stateDir)).close();
    const env = { ...process.env, TZ: "Europe/Paris", RA_STATE_DIR: stateDir, NO_COLOR: "1" };
    const robotArmy = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
    // `script` gives the command a terminal for its stdout, as a person running it has.
    const atTerminal = (...argv: string[]) => spawnSync("script", ["-q", "-e", "-c", commandText([...robotArmy, ...argv]), join(dirname(stateDir), "typescript")], { env, encoding: "utf8" }).stdout;
    const local = atTerminal("log");
    assert.match(local, "2026-01-15 09:00:00 CET  fact  state.work_item  o/r#12");
    assert.not.match(local, "2026-01-15T08:00:00Z");
    assert.match(atTerminal("log", "--utc"), "2026-01-15T08:00:00Z  fact  state.work_item  o/r#12");
    assert.match(atTerminal("log", "--json"), '"at": "2026-01-15T08:00:00Z"');
    const piped = spawnSync(robotArmy[0], [...robotArmy.slice(1), "log"], { env, encoding: "utf8" });
    assert.match(piped.stdout, "2026-01-15T08:00:00Z  fact  state.work_item  o/r#12", "what a program reads never depends on the zone");
  });
});

test("--json prints records as the API returns them", async () => {
  await withStateDir(async (stateDir) => {
    (await seeded(stateDir)).close();
    const [first] = JSON.parse(await output(options("--json", "--limit", "3"), stateDir));
    assert.equal(first, {
      id: 1,
      at: "2026-01-15T08:00:00Z",
      kind: "state.work_item",
      phase: "fact",
      repo: "o/r",
      item: 12,
      sessionId: null,
      episodeId: null,
      actionId: null,
      simulated: false,
      body: { from: "ready", to: "dispatching" },
    });
  });
});

test("a bad --since, --limit or --item is a usage error that carries the help", () => {
  for (const argv of [["--since", "yesterday"], ["--since", "2026-01-15"], ["--limit", "0"], ["--limit", "ten"], ["--item", "0"]]) {
    try {
      options(...argv);
      assert.unreachable(argv.join(" "));
    } catch (error) {
      assert.instance(error, UsageError);
      assert.match((error as Error).message, `"${argv[1]}"`);
      assert.match(String((error as UsageError).help), "Usage: robot-army log");
    }
  }
});

test("--follow prints what is there, then new records as they come, until stopped", async () => {
  await withStateDir(async (stateDir) => {
    const store = await seeded(stateDir);
    const stop = new AbortController();
    let text = "";
    const following = run(options("--follow", "--limit", "1", "--kind", "state"), {
      stateDir,
      write: (chunk) => (text += chunk),
      signal: stop.signal,
      pollMs: 10,
    });
    await waitFor("item 13's record", () => text.includes("o/r#13"));
    appendAudit(store, { at: "2026-01-15T10:00:00Z", kind: "session.other", item: 14 });
    appendAudit(store, { at: "2026-01-15T10:00:01Z", kind: "state.work_item", repo: "o/r", item: 15 });
    await waitFor("item 15's record", () => text.includes("o/r#15"));
    stop.abort();
    assert.is(await following, 0);
    store.close();
    assert.equal(text.trimEnd().split("\n").map((line) => line.split("  ")[3]), ["o/r#13", "o/r#15"]);
  });
});

test("--follow --json prints one object per line, and waits for a database that does not exist yet", async () => {
  await withStateDir(async (stateDir) => {
    const stop = new AbortController();
    let text = "";
    const following = run(options("--follow", "--json"), { stateDir, write: (chunk) => (text += chunk), signal: stop.signal, pollMs: 10 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.is(text, "");
    assert.not.ok(existsSync(stateDir), "following does not create the state dir");
    const store = await seeded(stateDir);
    await waitFor("three records on the page", () => text.split("\n").length > 3);
    stop.abort();
    await following;
    store.close();
    assert.equal(text.trimEnd().split("\n").map((line) => JSON.parse(line).id), [1, 2, 3]);
  });
});

test("formatLine keeps a long body to one short line on a terminal, whole otherwise", () => {
  const record = {
    id: 1, at: "2026-01-15T10:00:00Z", kind: "k", phase: "fact", repo: null, item: null,
    sessionId: null, episodeId: null, actionId: null, simulated: false, body: { text: "x".repeat(500) },
  } as const;
  const short = formatLine(record, true);
  assert.ok(short.length < 200);
  assert.ok(short.endsWith("…"));
  const whole = formatLine(record);
  assert.ok(whole.includes("x".repeat(500)));
});

test("log's import graph stays light: no ajv, yaml, smol-toml or octokit, even dynamically", () => {
  const heavy = /^(ajv|yaml|smol-toml|@octokit\/.*)$/;
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    for (const [, specifier] of source.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
      assert.not.match(specifier, heavy, `${file} imports ${specifier}`);
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier));
    }
  };
  visit(join(import.meta.dirname, "log.ts"));
  assert.ok(seen.has(join(import.meta.dirname, "..", "lib", "store", "audit.ts")), "the graph was walked");
});


/** A token as GitHub formats it, written into a record as a store made before the redactor would hold it. */
const OLD_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

test("records written before the redactor existed are shown redacted, and their control characters escaped", async () => {
  await withStateDir(async (stateDir) => {
    const store = await openStore(stateDir);
    store.db.prepare("INSERT INTO audit (at, kind, phase, item, body) VALUES ('2026-01-15T09:30:00Z', 'state.work_item', 'fact', 3, ?)")
      .run(JSON.stringify({ from: "dispatching", to: "failed", reason: `token ${OLD_TOKEN} in the output`, title: "a\u009b2Jb", word: "x\u0085y" }));
    store.close();
    for (const argv of [[], ["--json"]]) {
      const text = await output(options(...argv), stateDir);
      assert.not.ok(text.includes(OLD_TOKEN), text);
      assert.ok(text.includes("token [redacted] in the output"), text);
    }
    const text = await output(options(), stateDir);
    assert.ok(text.includes("title=a\\u009b2Jb word=x\\u0085y"), text);
    assert.not.match(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });
});

test.run();
