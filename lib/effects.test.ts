import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { GitHubWriter } from "./boundaries/github-types.ts";
import { parse } from "./cli.ts";
import { defaultConfig } from "./config.ts";
import type { Config } from "./config.ts";
import { COMMENT_MAX_CHARACTERS, EFFECT_LEVEL_OPTIONS, SIMULATED_GITHUB, commentMarker, commentOnIssue, effectsFor, fitComment, resolveLevel, wireEffects } from "./effects.ts";
import { connectGitHub } from "./boundaries/github.ts";
import { forgeTemplate } from "./testing/forge.ts";
import { forgeConfig, quickOptions, testStore } from "./testing/github-kit.ts";
import { UsageError } from "./errors.ts";
import { withTempDir } from "./testing/fixtures.ts";
import { queryAudit } from "./store/audit.ts";
import { openStore } from "./store/open.ts";

const template = forgeTemplate();
test.after(() => template.remove());

const root = fileURLToPath(new URL("..", import.meta.url));

/** A writer that records what it was asked to do. */
function recordingWriter(calls: string[]): GitHubWriter {
  return {
    simulated: false,
    comment: async (repo, issue, body) => {
      calls.push(`comment ${repo}#${issue}: ${body}`);
      return { id: 41, url: `https://forge.invalid/${repo}/issues/${issue}#issuecomment-41` };
    },
    addLabels: async (repo, issue, labels) => void calls.push(`label ${repo}#${issue} ${labels.join(",")}`),
    removeLabel: async (repo, issue, label) => void calls.push(`unlabel ${repo}#${issue} ${label}`),
    createClaim: async (repo, ref) => (calls.push(`claim ${repo} ${ref}`), { created: true, sha: "c0ffee" }),
    advanceClaim: async (repo, ref) => (calls.push(`advance ${repo} ${ref}`), { moved: true, sha: "c0ffee" }),
    deleteClaim: async (repo, ref) => (calls.push(`release ${repo} ${ref}`), "deleted" as const),
  };
}

const COMMAND = { name: "poll", summary: "", usage: "poll", options: EFFECT_LEVEL_OPTIONS };

test("each level makes real exactly what it names, and only live writes to GitHub", () => {
  const real = recordingWriter([]);
  const table = (["plan", "local", "no-remote", "live"] as const).map((level) => {
    const e = wireEffects(level, { github: real });
    return [level, e.simulated, e.github === real, e.worktrees, e.sessions, e.notifications];
  });
  assert.equal(table, [
    ["plan", true, false, false, false, false],
    ["local", true, false, true, false, false],
    ["no-remote", true, false, true, true, false],
    ["live", false, true, true, true, true],
  ]);
});

test("a dry run at any level makes nothing real, and takes the level's items as its own", () => {
  const real = recordingWriter([]);
  const table = (["plan", "local", "no-remote", "live"] as const).map((level) => {
    const e = wireEffects(level, { github: real }, { dryRun: true });
    return [level, e.simulated, e.github === SIMULATED_GITHUB, e.worktrees, e.sessions, e.notifications, e.ownerFiles];
  });
  assert.equal(table, [
    ["plan", true, true, false, false, false, false],
    ["local", true, true, false, false, false, false],
    ["no-remote", true, true, false, false, false, false],
    ["live", false, true, false, false, false, false],
  ]);
});

test("the level is --effect-level, else daemon.effect_level; an unknown one is a usage error", async () => {
  const base = await defaultConfig();
  assert.is(resolveLevel(parse(COMMAND, []), base), "plan", "the default is plan");
  const live: Config = { ...base, daemon: { ...base.daemon, effect_level: "live" } };
  assert.is(resolveLevel(parse(COMMAND, []), live), "live");
  assert.is(resolveLevel(parse(COMMAND, ["--effect-level", "local"]), live), "local", "the flag wins");
  assert.throws(() => resolveLevel(parse(COMMAND, ["--effect-level", "loud"]), base),
    (e: unknown) => e instanceof UsageError && e.message === `--effect-level must be one of plan, local, no-remote, live, got "loud"`);
  assert.is(effectsFor(parse(COMMAND, ["--effect-level", "no-remote"]), base, { github: SIMULATED_GITHUB }).sessions, true);
});

test("the simulated writer writes nothing and returns nulls", async () => {
  assert.equal(await SIMULATED_GITHUB.comment("demo/widgets", 3, "x"), { id: null, url: null });
  assert.is(SIMULATED_GITHUB.simulated, true);
});

test("a comment below live is audited as a simulated intent and outcome, and nothing is written", () =>
  withTempDir(async (dir) => {
    const store = await openStore(join(dir, "state"));
    try {
      const calls: string[] = [];
      const effects = wireEffects("plan", { github: recordingWriter(calls) });
      const result = await commentOnIssue(store, effects, { repo: "demo/widgets", issue: 3, item: 1, body: "queued as work item 1", purpose: "queued" });
      assert.equal(result, { simulated: true, id: null, url: null });
      assert.equal(calls, []);
      const records = queryAudit(store, { kind: "github.comment" });
      assert.equal(records.map((r) => [r.phase, r.simulated, r.item, r.repo]), [["intent", true, 1, "demo/widgets"], ["outcome", true, 1, "demo/widgets"]]);
      assert.is(records[0].actionId, records[1].actionId);
      assert.equal({ ...records[0].body, writer: undefined }, { issue: 3, purpose: "queued", comment: "queued as work item 1", writer: undefined });
      assert.equal(records[1].body, { ok: true, simulated: true });
    } finally {
      store.close();
    }
  }));

test("a comment at live is really written, ending with its action's marker, with an intent and an outcome naming it", () =>
  withTempDir(async (dir) => {
    const store = await openStore(join(dir, "state"));
    try {
      const calls: string[] = [];
      const effects = wireEffects("live", { github: recordingWriter(calls) });
      const result = await commentOnIssue(store, effects, { repo: "demo/widgets", issue: 3, item: 1, body: "queued", purpose: "queued" });
      assert.is(result.simulated, false);
      const [intent, outcome] = queryAudit(store, { kind: "github.comment" });
      assert.equal(calls, [`comment demo/widgets#3: queued\n\n<!-- robot-army:action ${intent.actionId} -->`], "the marker names the comment's action, nothing else");
      assert.is(commentMarker(intent.actionId!), `<!-- robot-army:action ${intent.actionId} -->`);
      assert.equal([intent.simulated, outcome.simulated, outcome.body.ok, outcome.body.comment_id], [false, false, true, 41]);
    } finally {
      store.close();
    }
  }));

/** Whether code names the level's setting, or branches on a level: compares a `level` with a level's name, or switches on one. */
function readsLevel(code: string): boolean {
  const name = `["'](?:plan|local|no-remote|live)["']`;
  return /effect_level|effectLevel/.test(code) ||
    new RegExp(`\\blevel\\s*[!=]==?\\s*${name}|${name}\\s*[!=]==?\\s*[\\w.]*\\blevel\\b|case\\s+["'](?:no-remote|live)["']`, "i").test(code);
}

test("a text that fits GitHub's limit is sent as it is; a longer one is cut with a note saying how much is not shown, never splitting a character", () => {
  assert.is(fitComment("short"), "short");
  const fits = "x".repeat(COMMENT_MAX_CHARACTERS);
  assert.is(fitComment(fits), fits);
  const cut = fitComment("y".repeat(100_000), 100);
  assert.ok(cut.length <= COMMENT_MAX_CHARACTERS - 100, `${cut.length} characters`);
  const shown = cut.indexOf("\n\n[robot-army cut");
  assert.is(cut.slice(shown), `\n\n[robot-army cut this comment: ${100_000 - shown} of 100000 characters are not shown; GitHub allows 65536]`);
  const robots = fitComment("\u{1F916}".repeat(40_000));
  assert.is([...robots.slice(0, robots.indexOf("\n\n[robot-army cut"))].every((c) => c === "\u{1F916}"), true, "no half of a surrogate pair is left");
});

test("robot-army never sends GitHub a comment over its limit: a long text reaches the forge cut, with its note and its marker, and the audit says it was cut", () =>
  template.use(async (t) => {
    const store = await testStore(t);
    try {
      const github = await connectGitHub(await forgeConfig(t), store, quickOptions());
      const long = "z".repeat(70_000);
      const made = await commentOnIssue(store, wireEffects("live", { github: github.writer }), { repo: "demo/widgets", issue: 1, item: 1, body: long, purpose: "test" });
      assert.is(made.simulated, false);
      const [posted] = (await t.owner.rest.issues.listComments({ owner: "demo", repo: "widgets", issue_number: 1 })).data;
      const [intent] = queryAudit(store, { kind: "github.comment" });
      assert.ok(posted.body!.length <= COMMENT_MAX_CHARACTERS, `${posted.body!.length} characters`);
      assert.match(posted.body!, /\n\n\[robot-army cut this comment: \d+ of 70000 characters are not shown; GitHub allows 65536\]\n\n<!-- robot-army:action [0-9a-f-]+ -->$/);
      assert.equal([intent.body.cut_from, (intent.body.comment as string).length < 70_000], [70_000, true]);
    } finally {
      store.close();
    }
  }));

test("the check below finds a branch on the level however it is spelt", () => {
  for (const code of ['if (effects.level === "live")', "if ('plan' !== deps.effects.level)", 'switch (x) { case "no-remote": }', "const effect_level = 1"]) {
    assert.ok(readsLevel(code), code);
  }
  for (const code of ['a.kind === "local"', "`effect level ${deps.effects.level}`", 'if (effects.github) post()']) assert.not.ok(readsLevel(code), code);
});

test("no module but lib/effects.ts (and the config that defines it) reads the effect level", () => {
  const allowed = new Set(["lib/effects.ts", "lib/config.ts"]);
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
        const name = relative(root, path);
        // A scenario setup writes a config file for its world: the level there is data, not a branch.
        if (!allowed.has(name) && !name.startsWith("lib/scenario/setups/") && readsLevel(readFileSync(path, "utf8"))) offenders.push(name);
      }
    }
  };
  walk(join(root, "lib"));
  walk(join(root, "scripts"));
  assert.equal(offenders, [], `these read the effect level; ask lib/effects.ts instead: ${offenders.join(", ")}`);
});

test.run();
