import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../config.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { sha256Hex } from "../sha256.ts";
import { ConfigWatch, configChanges } from "./config-reload.ts";

const GOOD = ['[daemon]', "max_concurrent_sessions = 2", "", '[repos."demo/widgets"]', 'path = "/tmp/widgets"', ""].join("\n");

test("what changed, one line per key as TOML writes it, and which keys wait for a restart", async () => {
  const before = await parseConfig(GOOD, "/c/config.toml");
  const after = await parseConfig(GOOD.replace("= 2", "= 3") + '[repos."demo/gad.gets"]\npath = "/tmp/g"\n[github]\ntoken_env = "GH"\n', "/c/config.toml");
  const { changes, atRestart } = configChanges(before, after);
  assert.ok(changes.includes("daemon.max_concurrent_sessions: 2 -> 3"), changes.join("\n"));
  assert.ok(changes.includes('repos."demo/gad.gets": added'), changes.join("\n"));
  assert.ok(changes.includes("github.token_env: added"), changes.join("\n"));
  assert.equal(atRestart, ["github.token_env"]);
  assert.equal(configChanges(before, before), { changes: [], atRestart: [] });
  const live = await parseConfig(GOOD.replace("[daemon]", '[daemon]\neffect_level = "live"'), "/c/config.toml");
  assert.equal(configChanges(before, live), { changes: ['daemon.effect_level: "plan" -> "live"'], atRestart: ["daemon.effect_level"] }, "the level changes at the next start only");
});

test("the watch applies a changed valid file, refuses a broken one once with its line, and notices the applied text back", () => withTempDir(async (dir) => {
  const path = join(dir, "config.toml");
  writeFileSync(path, GOOD);
  const watch = await ConfigWatch.start(path, GOOD, {});
  let current = await parseConfig(GOOD, path);
  assert.equal(await watch.check(current), { kind: "unchanged" });
  assert.is(watch.inUse().sha256, sha256Hex(GOOD));

  writeFileSync(path, GOOD.replace("= 2", "= 4"));
  const applied = await watch.check(current);
  assert.is(applied.kind, "applied");
  if (applied.kind !== "applied") return;
  assert.equal(applied.changes, ["daemon.max_concurrent_sessions: 2 -> 4"]);
  assert.is(applied.config.daemon.max_concurrent_sessions, 4);
  assert.is(watch.inUse().sha256, sha256Hex(readFileSync(path, "utf8")));
  current = applied.config;

  const applied4 = readFileSync(path, "utf8");
  writeFileSync(path, applied4.replace("max_concurrent_sessions", "max_concurent_sessions"));
  const refused = await watch.check(current);
  assert.is(refused.kind, "refused");
  assert.match(refused.kind === "refused" ? refused.reason : "", /unknown key "daemon\.max_concurent_sessions" \(line 2\)/);
  assert.equal(await watch.check(current), { kind: "unchanged" }, "a refused text is said once");
  assert.is(watch.inUse().refused?.sha256, sha256Hex(readFileSync(path, "utf8")));
  assert.is(watch.inUse().sha256, sha256Hex(applied4), "the last good config stays applied");

  writeFileSync(path, applied4);
  assert.equal(await watch.check(current), { kind: "restored" });
  assert.is(watch.inUse().refused, null);

  rmSync(path);
  const gone = await watch.check(current);
  assert.equal(gone, { kind: "refused", reason: `Cannot read config "${path}": no such file` }, "a file gone is not all defaults: nothing is applied");
}));

test.run();
