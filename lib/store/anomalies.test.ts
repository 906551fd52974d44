import { test } from "uvu";
import * as assert from "uvu/assert";
import { withStore } from "../testing/items.ts";
import { acknowledgeAnomaly, listAnomalies, raiseAnomaly } from "./anomalies.ts";
import { queryAudit } from "./audit.ts";

const ACTION = "0b7e0a52-1111-4000-8000-000000000001";

test("an anomaly is raised once per kind and action id, as an audited fact", async () => {
  await withStore((store) => {
    const first = raiseAnomaly(store, { kind: "effect_unfinished", actionId: ACTION, repo: "demo/widgets", item: 1, detail: "a comment was never posted" });
    assert.is(first.raised, true);
    assert.equal({ ...first.anomaly, raised_at: "t" }, {
      id: 1, kind: "effect_unfinished", action_id: ACTION, repo: "demo/widgets", item: 1, detail: "a comment was never posted", raised_at: "t", acknowledged_at: null,
    });
    const again = raiseAnomaly(store, { kind: "effect_unfinished", actionId: ACTION, repo: "demo/widgets", item: 1, detail: "found again" });
    assert.equal([again.raised, again.anomaly.id, again.anomaly.detail], [false, 1, "a comment was never posted"], "the second pass finds it on record");
    const other = raiseAnomaly(store, { kind: "spool_damaged", actionId: ACTION, detail: "a file set aside" });
    assert.equal([other.raised, other.anomaly.id, other.anomaly.repo, other.anomaly.item], [true, 2, null, null], "another kind for the same action is its own");
    assert.equal(listAnomalies(store).map((a) => a.id), [1, 2]);
    const audit = queryAudit(store, { kind: "anomaly" });
    assert.equal(audit.map((r) => [r.kind, r.phase, r.item, r.body.anomaly, r.body.kind]), [
      ["anomaly.raised", "fact", 1, 1, "effect_unfinished"],
      ["anomaly.raised", "fact", null, 2, "spool_damaged"],
    ]);
  });
});

test("acknowledged anomalies leave the open list, are audited once, and are never raised again", async () => {
  await withStore((store) => {
    raiseAnomaly(store, { kind: "effect_unfinished", actionId: ACTION, item: 1, detail: "one" });
    raiseAnomaly(store, { kind: "spool_damaged", detail: "two" });
    const acked = acknowledgeAnomaly(store, 1);
    assert.ok(acked.acknowledged_at, "it says when");
    assert.equal(listAnomalies(store, { open: true }).map((a) => a.id), [2]);
    assert.equal(listAnomalies(store, { open: false }).map((a) => a.id), [1]);
    assert.equal(listAnomalies(store).map((a) => a.id), [1, 2]);
    assert.equal(acknowledgeAnomaly(store, 1), acked, "acknowledging twice changes nothing");
    assert.equal(queryAudit(store, { kind: "anomaly.acknowledged" }).map((r) => [r.body.anomaly, r.body.kind, r.item]), [[1, "effect_unfinished", 1]]);
    assert.is(raiseAnomaly(store, { kind: "effect_unfinished", actionId: ACTION, detail: "again" }).raised, false, "an acknowledged one stays acknowledged");
    assert.throws(() => acknowledgeAnomaly(store, 9), /No anomaly 9 is on record; "robot-army anomalies --all" lists them/);
  });
});

test.run();
