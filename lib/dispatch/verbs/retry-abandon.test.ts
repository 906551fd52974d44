import { test } from "uvu";
import * as assert from "uvu/assert";
import { queryAudit } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { createItem, getItem } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { inWorkerDir } from "../../testing/workers.ts";
import { retryItem } from "./retry.ts";
import { PreconditionError } from "../../errors.ts";
import { rejects } from "../../testing/rejects.ts";

function item(store: Store, issue: number, ...states: Array<Parameters<typeof transition>[2]>): number {
  const { id } = createItem(store, { repo: "demo/widgets", issue, title: `Issue ${issue}`, body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null }, { simulated: false });
  for (const to of states) transition(store, id, to, { reason: `to ${to}` });
  return id;
}

/** What retry reads, in a worker dir whose worktree root holds nothing. */
function retryDeps(dirs: { store: Store; state: string }) {
  return { store: dirs.store, config: { worktrees: { post_create: [] }, repos: {} }, stateDir: dirs.state };
}

test("retry puts a failed item back to ready, with the failure kept in the audit record", inWorkerDir(async (dirs) => {
  const { store } = dirs;
  const id = item(store, 1, "ready", "dispatching", "failed");
  assert.is((await retryItem(retryDeps(dirs), id)).state, "ready");
  const [last] = queryAudit(store, { kind: "state.work_item", item: id, limit: 1 });
  assert.equal([last.body.from, last.body.to, last.body.reason, last.body.failure], ["failed", "ready", "retried by the owner", "to failed"]);
}));

test("retry refuses an item that is not failed, and an unknown id", inWorkerDir(async (dirs) => {
  const { store } = dirs;
  const id = item(store, 1, "ready");
  await rejects(retryItem(retryDeps(dirs), id), PreconditionError, /is ready, not failed/);
  await rejects(retryItem(retryDeps(dirs), 99), PreconditionError, /No work item 99/);
  assert.is(getItem(store, id)!.state, "ready");
}));

test.run();
