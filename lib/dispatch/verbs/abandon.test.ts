import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { queryAudit } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { createItem, getItem } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { inWorkerDir, startWorker } from "../../testing/workers.ts";
import { trackSessionProcesses } from "../../testing/sessions.ts";
import { settleSessions } from "../../daemon/settle.ts";
import { drainSpool } from "../../daemon/spool-drain.ts";
import { sessionState } from "../../sessions/state.ts";
import { stopSession } from "../../sessions/stop.ts";
import { workerTags } from "../capacity.ts";
import { recordSession, sessionsOf } from "../../work-items/sessions.ts";
import { abandonItem, describeLeftWorker } from "./abandon.ts";
import { claimDetails } from "../claim.ts";
import { exitedPid } from "../../testing/fixtures.ts";
import { waitFor } from "../../testing/wait.ts";

const sessions = trackSessionProcesses(test, { childrenBy: "pid" });

function item(store: Store, issue: number, ...states: Array<Parameters<typeof transition>[2]>): number {
  const { id } = createItem(store, { repo: "demo/widgets", issue, title: `Issue ${issue}`, body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null }, { simulated: false });
  for (const to of states) transition(store, id, to, { reason: `to ${to}` });
  return id;
}

test("abandon records the reason given, or the default", inWorkerDir(async ({ store, root }) => {
  const a = item(store, 1, "ready");
  const b = item(store, 2, "ready", "dispatching", "failed");
  const first = abandonItem(store, root, a, "done by hand");
  const second = abandonItem(store, root, b);
  assert.equal([first.item.reason, second.item.reason], ["done by hand", "abandoned by the owner"]);
  assert.equal([first.before, second.before], ["ready", "failed"]);
  assert.equal([first.worker.live, describeLeftWorker(first.worker, a)], [false, null]);
  assert.is(getItem(store, b)!.state, "abandoned");
  assert.throws(() => abandonItem(store, root, a), /already abandoned/);
}));

test("abandon leaves a running worker running, names it and the command that ends it", inWorkerDir(async (dirs) => {
  const id = item(dirs.store, 1, "ready", "dispatching", "active");
  const worker = await startWorker(sessions, dirs, workerTags(dirs.store, id));
  const abandoned = abandonItem(dirs.store, dirs.root, id);
  assert.is(getItem(dirs.store, id)!.state, "abandoned");
  assert.equal([abandoned.worker.live, abandoned.worker.session?.id], [true, worker.id]);
  assert.is(describeLeftWorker(abandoned.worker, id),
    `its worker session ${worker.name} (id ${worker.id}) is still running and is left running; "robot-army cancel 1" ends it`);
  assert.is(sessionState(dirs.root, worker), "running", "abandon signals nothing");
  const [last] = queryAudit(dirs.store, { kind: "state.work_item", item: id, limit: 1 });
  assert.equal([last.body.from, last.body.to], ["active", "abandoned"]);
}));

test("abandon goes ahead when a record cannot be read: it signals nothing, and says a worker may still run", inWorkerDir(async ({ store, root }) => {
  const id = item(store, 1, "ready", "dispatching", "active");
  writeFileSync(join(root, "5e551011-0000-4000-8000-000000000001.json"), '{"id":');
  const abandoned = abandonItem(store, root, id);
  assert.is(abandoned.item.state, "abandoned");
  assert.match(describeLeftWorker(abandoned.worker, id)!, /cannot be read, so a worker of it may still run and is left as it is; "robot-army cancel 1" ends one/);
}));

test("the worker an abandoned item left running is not settled as lost, and its own exit later closes its row with the item left abandoned", inWorkerDir(async (dirs) => {
  const id = item(dirs.store, 1, "ready", "dispatching", "active");
  const worker = await startWorker(sessions, dirs, workerTags(dirs.store, id));
  recordSession(dirs.store, {
    id: worker.id, item: id, name: worker.name, host: "testhost", launcher: "process", marker: "", worktree: dirs.work, branch: "b", started_at: "", simulated: false,
  });
  abandonItem(dirs.store, dirs.root, id);
  const spoolDir = join(dirs.state, "spool");
  const settled = settleSessions({ store: dirs.store, sessionRoot: dirs.root, spoolDir, host: "testhost" });
  assert.equal([settled.lost, settled.ended], [0, 0], "settle leaves a running worker alone");
  assert.is(sessionsOf(dirs.store, id)[0].ended_at, null);
  // The worker ends (here by session kill); its spooled exit closes the row and the item stays abandoned.
  await stopSession(dirs.root, worker, { graceMs: 2_000 });
  // The holder spools the exit once nothing the command started runs: it may land a moment after the stop returns.
  const drained = await waitFor("the worker's spooled exit to be drained", async () => {
    const drain = await drainSpool(dirs.store, spoolDir);
    return drain.processed > 0 && drain;
  });
  assert.is(drained.processed, 1);
  assert.match(drained.events[0].line, "item stays abandoned");
  assert.equal([sessionsOf(dirs.store, id)[0].end_reason, getItem(dirs.store, id)!.state], ["killed", "abandoned"]);
}));

test("abandon waits while a dispatch of the item is under way; a claim cut short is abandoned", inWorkerDir(async ({ store, root }) => {
  const claimed = item(store, 1, "ready");
  transition(store, claimed, "dispatching", { reason: "a slot is free", details: claimDetails() });
  assert.throws(() => abandonItem(store, root, claimed), /Work item 1 is being dispatched: its claimer \(pid \d+\) still runs, so nothing is done/);
  assert.is(getItem(store, claimed)!.state, "dispatching");
  const cutShort = item(store, 2, "ready");
  transition(store, cutShort, "dispatching", { reason: "a slot is free", details: { claimed_by: { pid: exitedPid(), started_at: null } } });
  assert.is(abandonItem(store, root, cutShort).before, "dispatching");
  assert.is(getItem(store, cutShort)!.state, "abandoned");
}));

test.run();
