import { spawn } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { workerTags } from "../dispatch/capacity.ts";
import { inWorkerDir, startWorker } from "../testing/workers.ts";
import { identify, liveness } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { trackSessionProcesses, waitFor } from "../testing/sessions.ts";
import { sessionState } from "../sessions/state.ts";
import type { Store } from "../store/open.ts";
import { createItem, getItem } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import { settleClaims } from "./settle-claims.ts";

const sessions = trackSessionProcesses(test, { childrenBy: "pid" });

/** A ready item claimed by `claimer` (or with no claimer on record, as an older claim has none). */
function claimed(store: Store, issue: number, claimer: ProcessIdentity | null): number {
  const { id } = createItem(store, { repo: "demo/widgets", issue, title: `Issue ${issue}`, body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null }, { simulated: false });
  transition(store, id, "ready", { reason: "onboarded" });
  transition(store, id, "dispatching", { reason: "a slot is free", ...(claimer ? { details: { claimed_by: claimer } } : {}) });
  return id;
}

/** A real process that has come and gone, proven exited by its pid and start time. */
async function endedProcess(): Promise<ProcessIdentity> {
  const child = spawn("sleep", ["0.2"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("spawn", resolve));
  const who = identify(child.pid!);
  assert.ok(who.started_at, "the child's start time is readable");
  await new Promise((resolve) => child.once("exit", resolve));
  await waitFor("the claimer to be gone", () => liveness(who) === "exited");
  return who;
}

test("a claim whose process is proven gone is cut short: the item is interrupted, with the pid in its reason", inWorkerDir(async ({ store, root }) => {
  const gone = await endedProcess();
  const id = claimed(store, 1, gone);
  const result = settleClaims({ store, sessionRoot: root });
  assert.equal([result.cutShort, result.unknown], [1, 0]);
  const item = getItem(store, id)!;
  assert.is(item.state, "interrupted");
  assert.match(item.reason!, `its dispatch was cut short: the process that claimed it (pid ${gone.pid}) ended before its worker was recorded`);
  assert.match(result.events[0].line, /^dispatch of demo\/widgets#1 \(item 1\) was cut short .*: item interrupted; "robot-army resume 1"/);
  // Settled once: a second pass finds nothing dispatching.
  assert.equal(settleClaims({ store, sessionRoot: root }).cutShort, 0);
}));

test("a claim whose process still runs is in flight and left alone", inWorkerDir(async ({ store, root }) => {
  const id = claimed(store, 1, identify(process.pid));
  const result = settleClaims({ store, sessionRoot: root });
  assert.equal([result.cutShort, result.unknown, result.events.length], [0, 0, 0]);
  assert.is(getItem(store, id)!.state, "dispatching");
}));

test("a claim naming no process, or one that cannot be checked, is never taken for cut short", inWorkerDir(async ({ store, root }) => {
  const none = claimed(store, 1, null);
  // A pid with no recorded start time cannot be told from a reused pid: unknown, not gone.
  const unchecked = claimed(store, 2, { pid: process.pid, started_at: null });
  const result = settleClaims({ store, sessionRoot: root });
  assert.equal([result.cutShort, result.unknown], [0, 2]);
  assert.equal([getItem(store, none)!.state, getItem(store, unchecked)!.state], ["dispatching", "dispatching"]);
}));

test("a worker session tagged for a cut-short item is named, and left running", inWorkerDir(async (dirs) => {
  const gone = await endedProcess();
  const id = claimed(dirs.store, 1, gone);
  const worker = await startWorker(sessions, dirs, workerTags(dirs.store, id));
  const result = settleClaims({ store: dirs.store, sessionRoot: dirs.root });
  assert.is(result.cutShort, 1);
  assert.match(getItem(dirs.store, id)!.reason!, `; session "${worker.name}" tagged for it still runs`);
  assert.match(result.events[0].line, `look at it with "robot-army session peek ${worker.name}" or end it with "robot-army session kill ${worker.name}"`);
  assert.is(result.events[0].session, worker.id);
  assert.is(sessionState(dirs.root, worker), "running");
}));

test.run();
