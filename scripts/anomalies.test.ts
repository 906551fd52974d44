import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { raiseAnomaly } from "../lib/store/anomalies.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { openExistingStore } from "../lib/store/open.ts";
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
      'Once you have looked: "robot-army anomalies ack <id>"',
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
    for (const argv of [["acknowledge", "1"], ["ack"], ["ack", "0"], ["ack", "1x"]]) {
      try {
        await main(argv);
        assert.unreachable(argv.join(" "));
      } catch (error) {
        assert.ok(error instanceof UsageError, `${argv.join(" ")}: ${error}`);
      }
    }
  }));

test.run();
