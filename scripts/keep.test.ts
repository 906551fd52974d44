import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { openStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { makeItem } from "../lib/testing/items.ts";
import { listKeeps, placeKeep } from "../lib/ending/keeps.ts";
import { defaultConfig } from "../lib/config.ts";

/** Runs the real binary on this runtime against a state dir, with a clock fixed and what else `env` says. */
function robotArmy(state: string, env: Record<string, string>, ...argv: string[]) {
  const [bin, ...args] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  const home = join(state, "..", "home");
  const result = spawnSync(bin, [...args, ...argv], {
    encoding: "utf8",
    env: { ...process.env, RA_STATE_DIR: state, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), RA_NOW: "2026-01-15T10:00:00Z", ...env },
  });
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

async function withState(fn: (state: string, store: () => Promise<Store>) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const state = join(dir, "state");
    await fn(state, () => openStore(state));
  });
}

test("keep, keeps and unkeep from the command line, and an unknown item or no store refused naming status", () =>
  withState(async (state, open) => {
    const none = robotArmy(state, {}, "keep", "1");
    assert.equal([none.code, none.stderr.trim()], [3, 'robot-army: No work item 1; "robot-army status" lists them']);
    assert.equal(robotArmy(state, {}, "keeps").stdout, "no keeps\n", "with no store there is nothing to list, and nothing is made");
    const store = await open();
    makeItem(store, { issue: 4, state: "ready" });
    store.close();
    const kept = robotArmy(state, {}, "keep", "1");
    assert.equal([kept.code, kept.stdout], [0, "kept: item 1 (demo/widgets#4, ready): no live session; it waits for done\n"]);
    const listed = robotArmy(state, {}, "keeps", "--json");
    assert.equal(JSON.parse(listed.stdout).keeps, [{ item: 1, placed_at: "2026-01-15T10:00:00Z", repo: "demo/widgets", issue: 4, state: "ready", session: null }]);
    const unkept = robotArmy(state, {}, "unkeep", "1");
    assert.equal([unkept.code, unkept.stdout], [0, "unkept: item 1 (demo/widgets#4, ready): its keep covered no live session\n"]);
    for (const verb of ["keep", "unkeep"]) {
      const bad = robotArmy(state, {}, verb, "0");
      assert.is(bad.code, 2, `${verb} 0 is a usage error`);
      assert.match(bad.stderr, 'A work item id is a positive whole number such as 12, got "0"');
    }
  }));

test("a keep cut short by a crash leaves neither its row nor its record: the keep and its audit fact are one transaction", () =>
  withState(async (state, open) => {
    const store = await open();
    makeItem(store, { issue: 4, state: "active" });
    store.close();
    const crashed = robotArmy(state, { RA_FAULT: "keep.placed:fact" }, "keep", "1");
    assert.is(crashed.signal, "SIGKILL", `the fault point killed it: ${crashed.stderr}`);
    const after = await open();
    try {
      assert.equal(listKeeps(after), [], "no keep without its record");
      assert.equal(queryAudit(after, { kind: "keep" }), []);
      placeKeep(after, 1, { worker: (await defaultConfig()).worker });
    } finally {
      after.close();
    }
    const released = robotArmy(state, { RA_FAULT: "keep.released:fact" }, "unkeep", "1");
    assert.is(released.signal, "SIGKILL");
    const last = await open();
    try {
      assert.equal(listKeeps(last).map((k) => k.item), [1], "a release cut short leaves the keep in force");
      assert.equal(queryAudit(last, { kind: "keep" }).map((r) => r.kind), ["keep.placed"]);
    } finally {
      last.close();
    }
  }));

test.run();
