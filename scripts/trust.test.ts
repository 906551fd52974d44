import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configFrom } from "../lib/testing/workers.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { rejects } from "../lib/testing/rejects.ts";
import { PreconditionError } from "../lib/errors.ts";
import { agentTrustEvidence, claudeTrusts, codexTrusts } from "../lib/dispatch/agent-trust.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { withStore } from "../lib/store/open.ts";
import { SIMULATED_GITHUB, wireEffects } from "../lib/effects.ts";
import type { EffectLevel } from "../lib/effects.ts";
import { run } from "./trust.ts";

/** A home, a clone folder and a state dir; `trust` run with them, its output and exit code. */
function inHome(fn: (place: { home: string; clone: string; state: string; trust: (args: { check?: boolean; json?: boolean; level?: EffectLevel; profile?: string }) => Promise<{ code: number; out: string }> }) => Promise<void>) {
  return () => withTempDir(async (dir) => {
    const home = join(dir, "home");
    const clone = join(dir, "widgets");
    const state = join(dir, "state");
    mkdirSync(home);
    mkdirSync(clone);
    const trust = async (args: { check?: boolean; json?: boolean; level?: EffectLevel; profile?: string }) => {
      const config = await configFrom(`[worker]\nprofile = "${args.profile ?? "claude"}"\n[repos."demo/widgets"]\npath = ${JSON.stringify(clone)}\n`);
      let out = "";
      const code = await run({ repo: "demo/widgets", check: args.check === true, json: args.json === true }, {
        config, effects: wireEffects(args.level ?? "live", { github: SIMULATED_GITHUB }), env: { HOME: home }, stateDir: () => state, write: (chunk) => void (out += chunk),
      });
      return { code, out };
    };
    await fn({ home, clone, state, trust });
  });
}

test("trust records the owner's yes where Claude Code keeps it, keeping its other settings, audited; --check reads it (exit 4 while not trusted)", inHome(async ({ home, clone, state, trust }) => {
  const file = join(home, ".claude.json");
  writeFileSync(file, JSON.stringify({ theme: "dark", projects: { "/elsewhere": { allowedTools: ["Bash"] } } }), { mode: 0o600 });
  const before = await trust({ check: true });
  assert.is(before.code, 4);
  assert.match(before.out, `Claude Code has not been told to trust ${clone} (demo/widgets)`);
  assert.match(before.out, `"robot-army trust demo/widgets" records your yes in ${file}`);

  const recorded = await trust({});
  assert.is(recorded.code, 0);
  assert.match(recorded.out, `recorded: Claude Code trusts ${clone} (demo/widgets) in ${file}`);
  const data = JSON.parse(readFileSync(file, "utf8"));
  assert.equal(data, { theme: "dark", projects: { "/elsewhere": { allowedTools: ["Bash"] }, [clone]: { hasTrustDialogAccepted: true } } });
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.equal(claudeTrusts(file, clone), { trusted: true });
  await withStore(state, (store) => {
    const records = queryAudit(store, { kind: "agent.trust" });
    assert.equal(records.map((r) => [r.phase, r.repo]), [["intent", "demo/widgets"], ["outcome", "demo/widgets"]]);
    assert.equal({ ...records[0].body, writer: undefined }, { agent: "claude", file, folder: clone, writer: undefined });
  });

  const after = await trust({ check: true, json: true });
  assert.equal([after.code, JSON.parse(after.out).result], [0, "trusted"]);
  assert.equal(JSON.parse((await trust({ json: true })).out).result, "trusted", "recorded once: the second run writes nothing");
}));

test("below effect level local it says what it would record and writes nothing; a file that is not JSON is Claude Code's to mend, never overwritten", inHome(async ({ home, clone, trust }) => {
  const planned = await trust({ level: "plan" });
  assert.match(planned.out, `would record Claude Code's trust in ${clone} (demo/widgets)`);
  assert.not.ok(existsSync(join(home, ".claude.json")));
  writeFileSync(join(home, ".claude.json"), "{ half written");
  const error = await rejects(trust({}), PreconditionError);
  assert.match(error.message, "cannot be read as JSON");
  assert.is(readFileSync(join(home, ".claude.json"), "utf8"), "{ half written");
}));

test("a worker whose agent asks no trust question (generic, demo) is refused before anything is read or written", inHome(async ({ home, trust }) => {
  const error = await rejects(trust({ profile: "generic" }), PreconditionError);
  assert.match(error.message, "[worker] profile is generic: its agent asks no folder-trust question");
  assert.not.ok(existsSync(join(home, ".claude.json")));
  assert.not.ok(existsSync(join(home, ".codex")));
}));

test("with Codex as the worker, trust adds the clone's table to Codex's config.toml (the rest byte for byte), audited; --check reads it", inHome(async ({ home, clone, state, trust }) => {
  const file = join(home, ".codex", "config.toml");
  mkdirSync(join(home, ".codex"));
  const owners = '# my Codex\nmodel = "gpt-5.5"\n\n[projects."/elsewhere"]\ntrust_level = "trusted"\n';
  writeFileSync(file, owners, { mode: 0o600 });
  const before = await trust({ profile: "codex", check: true });
  assert.is(before.code, 4);
  assert.match(before.out, `Codex has not been told to trust ${clone} (demo/widgets): every worker there stops at "Trust this folder?"`);
  const recorded = await trust({ profile: "codex" });
  assert.match(recorded.out, `recorded: Codex trusts ${clone} (demo/widgets) in ${file}`);
  assert.is(readFileSync(file, "utf8"), `${owners}\n[projects.${JSON.stringify(clone)}]\ntrust_level = "trusted"\n`);
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.equal(codexTrusts(file, clone), { trusted: true });
  await withStore(state, (store) => {
    assert.equal(queryAudit(store, { kind: "agent.trust" }).map((r) => [r.phase, r.body.agent]), [["intent", "codex"], ["outcome", undefined]]);
  });
  assert.equal(JSON.parse((await trust({ profile: "codex", check: true, json: true })).out).result, "trusted");
  assert.is(readFileSync(file, "utf8").split("[projects.").length, 3, "recorded once");
  // A crash cut short after the intent is settled from Codex's file, as Claude Code's is from its own.
  assert.equal(agentTrustEvidence({ body: { agent: "codex", file, folder: clone } }), { settled: true, ok: true, found: "recorded", facts: { file, folder: clone } });
  assert.equal(agentTrustEvidence({ body: { agent: "codex", file, folder: join(home, "other") } }).settled && "not recorded", "not recorded");
}));

test("Codex told not to trust the clone, or a config.toml that is not TOML, is the owner's to change: never rewritten", inHome(async ({ home, clone, trust }) => {
  const file = join(home, ".codex", "config.toml");
  mkdirSync(join(home, ".codex"));
  const untrusted = `[projects.${JSON.stringify(clone)}]\ntrust_level = "untrusted"\n`;
  writeFileSync(file, untrusted);
  assert.match((await rejects(trust({ profile: "codex" }), PreconditionError)).message, 'says trust_level "untrusted"; change it to "trusted" there yourself');
  assert.is(readFileSync(file, "utf8"), untrusted);
  writeFileSync(file, "model = [");
  assert.match((await rejects(trust({ profile: "codex" }), PreconditionError)).message, "cannot be read as TOML");
  assert.is(readFileSync(file, "utf8"), "model = [");
}));

test.run();
