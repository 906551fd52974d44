import { test } from "uvu";
import * as assert from "uvu/assert";
import { queryAudit } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { createItem, getItem } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { inWorkerDir } from "../../testing/workers.ts";
import { retryItem } from "./retry.ts";

function item(store: Store, issue: number, ...states: Array<Parameters<typeof transition>[2]>): number {
  const { id } = createItem(store, { repo: "demo/widgets", issue, title: `Issue ${issue}`, body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null }, { simulated: false });
  for (const to of states) transition(store, id, to, { reason: `to ${to}` });
  return id;
}

test("retry puts a failed item back to ready, with the failure kept in the audit record", inWorkerDir(async ({ store }) => {
  const id = item(store, 1, "ready", "dispatching", "failed");
  assert.is(retryItem(store, id).state, "ready");
  const [last] = queryAudit(store, { kind: "state.work_item", item: id, limit: 1 });
  assert.equal([last.body.from, last.body.to, last.body.reason, last.body.failure], ["failed", "ready", "retried by the owner", "to failed"]);
}));

test("retry refuses an item that is not failed, and an unknown id", inWorkerDir(async ({ store }) => {
  const id = item(store, 1, "ready");
  assert.throws(() => retryItem(store, id), /is ready, not failed/);
  assert.throws(() => retryItem(store, 99), /No work item 99/);
  assert.is(getItem(store, id)!.state, "ready");
}));

test.run();
