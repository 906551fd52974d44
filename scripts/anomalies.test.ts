import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { spawnSync } from "node:child_process";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { acknowledgeAnomaly, raiseAnomaly, resolveAnomaly, retractAnomaly } from "../lib/store/anomalies.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { openExistingStore, openStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { atTime, withStore } from "../lib/testing/items.ts";
import { main, run } from "./anomalies.ts";
import type { AnomaliesOptions } from "./anomalies.ts";

function anomalies(store: Store | undefined, opts: AnomaliesOptions): string {
  let text = "";
  atTime("2026-01-15T10:00:00Z", () => run(opts, { store, write: (chunk) => (text += chunk) }));
  return text;
}

test("lists the open anomalies with what to check, acknowledges one, and --all shows it again", () =>
  withStore(async (store) => {
    atTime("2026-01-15T09:00:00Z", () => {
      raiseAnomaly(store, { kind: "effect_unfinished", actionId: "a-1", repo: "demo/widgets", item: 1, detail: "github.comment for demo/widgets#1 (item 1) was cut short: never posted" });
      raiseAnomaly(store, { kind: "spool_damaged", actionId: "a-2", detail: "exit spool file x was damaged\u001b[2J" });
    });
    assert.is(anomalies(store, { json: false, list: { all: false } }), [
      "1  effect_unfinished, item 1 of demo/widgets  raised 2026-01-15T09:00:00Z  open",
      "    github.comment for demo/widgets#1 (item 1) was cut short: never posted",
      "2  spool_damaged  raised 2026-01-15T09:00:00Z  open",
      "    exit spool file x was damaged\\u001b[2J",
      "",
      'Once you have looked: "robot-army anomalies --acknowledge <id>"',
      "",
    ].join("\n"));
    assert.is(anomalies(store, { json: false, ack: 1 }), "acknowledged: anomaly 1 (effect_unfinished, item 1 of demo/widgets)\n");
    assert.is(anomalies(store, { json: false, ack: 1 }), "already acknowledged: anomaly 1 (effect_unfinished, item 1 of demo/widgets)\n");
    assert.equal(queryAudit(store, { kind: "anomaly.acknowledged" }).length, 1);
    const open = JSON.parse(anomalies(store, { json: true, list: { all: false } }));
    assert.equal(open.anomalies.map((a: { id: number }) => a.id), [2]);
    const all = JSON.parse(anomalies(store, { json: true, list: { all: true } }));
    assert.equal(all.anomalies.map((a: { id: number; acknowledged_at: string | null }) => [a.id, a.acknowledged_at]), [[1, "2026-01-15T10:00:00Z"], [2, null]]);
    assert.throws(() => anomalies(store, { json: false, ack: 7 }), (e: Error) => e instanceof PreconditionError && /No anomaly 7 is on record/.test(e.message));
  }));

test("with no database there is nothing to list and nothing is created; bad arguments are usage errors", () =>
  withTempDir(async (dir) => {
    const stateDir = join(dir, "state");
    assert.is(anomalies(await openExistingStore(stateDir), { json: false, list: { all: false } }), "no open anomalies\n");
    assert.is(anomalies(undefined, { json: false, list: { all: true } }), "no anomalies\n");
    for (const argv of [["acknowledge", "1"], ["ack"], ["ack", "0"], ["ack", "1x"], ["--acknowledge", "0"], ["--acknowledge", "x"], ["ack", "1", "--acknowledge", "1"]]) {
      try {
        await main(argv);
        assert.unreachable(argv.join(" "));
      } catch (error) {
        assert.ok(error instanceof UsageError, `${argv.join(" ")}: ${error}`);
      }
    }
  }));

test("resolved anomalies leave the open list, and --all shows each with its resolution and when", () =>
  withStore(async (store) => {
    atTime("2026-01-15T09:00:00Z", () => {
      for (const [n, item] of [[1, 1], [2, 2], [3, 3]]) raiseAnomaly(store, { kind: "orphan_session", actionId: `session-${n}`, repo: "demo/widgets", item, detail: `worker ra-widgets-${item} runs under a done item` });
    });
    atTime("2026-01-15T09:30:00Z", () => {
      retractAnomaly(store, 1);
      acknowledgeAnomaly(store, 2);
      resolveAnomaly(store, 2, "gone");
    });
    assert.is(anomalies(store, { json: false, list: { all: false } }), [
      "3  orphan_session, item 3 of demo/widgets  raised 2026-01-15T09:00:00Z  open",
      "    worker ra-widgets-3 runs under a done item",
      "",
      'Once you have looked: "robot-army anomalies --acknowledge <id>"',
      "",
    ].join("\n"));
    assert.is(anomalies(store, { json: false, list: { all: true } }), [
      "1  orphan_session, item 1 of demo/widgets  raised 2026-01-15T09:00:00Z  retracted 2026-01-15T09:30:00Z",
      "    worker ra-widgets-1 runs under a done item",
      "2  orphan_session, item 2 of demo/widgets  raised 2026-01-15T09:00:00Z  acknowledged 2026-01-15T09:30:00Z, gone 2026-01-15T09:30:00Z",
      "    worker ra-widgets-2 runs under a done item",
      "3  orphan_session, item 3 of demo/widgets  raised 2026-01-15T09:00:00Z  open",
      "    worker ra-widgets-3 runs under a done item",
      "",
      'Once you have looked: "robot-army anomalies --acknowledge <id>"',
      "",
    ].join("\n"));
    retractAnomaly(store, 3);
    assert.is(anomalies(store, { json: false, list: { all: false } }), "no open anomalies\n");
    const all = JSON.parse(anomalies(store, { json: true, list: { all: true } }));
    assert.equal(all.anomalies.map((a: { id: number; resolution: string | null; resolved_at: string | null }) => [a.id, a.resolution, a.resolved_at !== null]), [
      [1, "retracted", true], [2, "gone", true], [3, "retracted", true],
    ]);
  }));

test("--acknowledge N acknowledges, as ack N still does, from the real command line", () =>
  withTempDir(async (dir) => {
    const state = join(dir, "state");
    await withStoreAt(state, (store) => {
      raiseAnomaly(store, { kind: "spool_damaged", actionId: "a-1", detail: "one" });
      raiseAnomaly(store, { kind: "spool_damaged", actionId: "a-2", detail: "two" });
    });
    const robotArmy = (...argv: string[]) => {
      const [bin, ...args] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
      return spawnSync(bin, [...args, ...argv], { encoding: "utf8", env: { ...process.env, RA_STATE_DIR: state, RA_NOW: "2026-01-15T10:00:00Z" } });
    };
    const flag = robotArmy("anomalies", "--acknowledge", "1");
    assert.equal([flag.status, flag.stdout], [0, "acknowledged: anomaly 1 (spool_damaged)\n"]);
    const verb = robotArmy("anomalies", "ack", "2");
    assert.equal([verb.status, verb.stdout], [0, "acknowledged: anomaly 2 (spool_damaged)\n"]);
    const missing = robotArmy("anomalies", "--acknowledge", "9");
    assert.equal([missing.status, missing.stderr.trim()], [3, 'robot-army: No anomaly 9 is on record; "robot-army anomalies --all" lists them']);
    await withStoreAt(state, (store) => assert.equal(queryAudit(store, { kind: "anomaly.acknowledged" }).map((r) => r.body.anomaly), [1, 2]));
  }));

async function withStoreAt(state: string, fn: (store: Store) => void): Promise<void> {
  const store = await openStore(state);
  try {
    fn(store);
  } finally {
    store.close();
  }
}

test.run();
