import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { workerTags } from "../dispatch/capacity.ts";
import { readRecord } from "../sessions/records.ts";
import { readExitRecord } from "../sessions/spool.ts";
import { stopSession } from "../sessions/stop.ts";
import { listAnomalies } from "../store/anomalies.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { inWorkerDir, startWorker } from "../testing/workers.ts";
import type { WorkerDirs } from "../testing/workers.ts";
import { trackSessionProcesses, waitFor } from "../testing/sessions.ts";
import { createItem, getItem } from "../work-items/queries.ts";
import { recordSession, sessionsOf } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";
import { settleSessions } from "./settle.ts";
import { drainSpool } from "./spool-drain.ts";

const sessions = trackSessionProcesses(test, { childrenBy: "pid" });

/** An active item for `issue` with an open session row `id` on this host. */
function activeWithRow(store: Store, issue: number, id: string, work: string): number {
  const { id: item } = createItem(store, { repo: "demo/widgets", issue, title: `Issue ${issue}`, body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null }, { simulated: false });
  for (const to of ["ready", "dispatching", "active"] as const) transition(store, item, to, { reason: `to ${to}` });
  recordSession(store, { id, item, name: `ra-widgets-${issue}`, host: "testhost", launcher: "process", marker: "", worktree: work, branch: "b", started_at: "", simulated: false });
  return item;
}

/** A valid exit record's text for session `id` of item `item`, with `change` laid over it. */
function exitText(id: string, item: number, change: Record<string, unknown> = {}): string {
  return JSON.stringify({ session_id: id, name: `ra-widgets-${item}`, item: String(item), generation: 1, ended: "exited", code: 3, signal: null, at: "2026-01-15T10:00:00Z", ...change }, null, 2);
}

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const B = "bbbbbbbb-0000-4000-8000-000000000002";
const spoolOf = (dirs: WorkerDirs) => join(dirs.state, "spool");
const write = (dir: string, file: string, text: string) => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, file), text);
  return join(dir, file);
};

test('a file with "code": "abc" beside a good one: the good one is processed, the bad one set aside, and the drain goes on', inWorkerDir(async (dirs) => {
  const { store, work } = dirs;
  const good = activeWithRow(store, 1, A, work);
  const bad = activeWithRow(store, 2, B, work);
  const spool = spoolOf(dirs);
  write(spool, `${A}.1.json`, exitText(A, good));
  const badPath = write(spool, `${B}.1.json`, exitText(B, bad, { code: "abc" }));
  const result = await drainSpool(store, spool);
  assert.equal([result.processed, result.damaged, result.kept], [1, 1, 0]);
  assert.equal(readdirSync(spool), ["damaged"], "the good file is gone, the bad one moved");
  assert.equal(readdirSync(join(spool, "damaged")), [`${B}.1.json`]);
  assert.match(readFileSync(join(spool, "damaged", `${B}.1.json`), "utf8"), '"code": "abc"', "moved whole, never rewritten");
  assert.equal([getItem(store, good)!.state, getItem(store, good)!.reason], ["interrupted", "worker exited (code 3)"]);
  assert.is(getItem(store, bad)!.state, "active", "nothing of the damaged file is stored");
  assert.is(sessionsOf(store, bad)[0].ended_at, null);
  const line = result.events.find((e) => e.event === "spool_damaged")!.line;
  assert.is(line, `exit spool: set aside damaged file ${badPath} (moved to ${join(spool, "damaged", `${B}.1.json`)}): it is not an exit record: /code must be integer,null; its session ${B} (ra-widgets-2) is settled from its own record`);
  const audit = queryAudit(store, { kind: "spool.damaged" });
  assert.equal(audit.map((r) => r.phase), ["intent", "outcome"]);
  assert.equal([audit[0].body.path, audit[0].body.session, audit[0].item, audit[0].sessionId], [badPath, B, bad, B]);
  assert.match(String(audit[0].body.reason), "/code must be integer,null");
  assert.equal(audit[1].body, { ok: true, moved_to: join(spool, "damaged", `${B}.1.json`), owner_told: true });
  const anomalies = listAnomalies(store, { open: true });
  assert.equal(anomalies.map((a) => [a.kind, a.action_id, a.repo, a.item]), [["spool_damaged", audit[0].actionId, "demo/widgets", bad]], "the owner is told, once per file set aside");
  assert.match(anomalies[0].detail, `exit spool file ${badPath} was damaged (it is not an exit record: /code must be integer,null) and set aside as ${join(spool, "damaged", `${B}.1.json`)}`);
  await drainSpool(store, spool);
  assert.is(listAnomalies(store).length, 1, "a later drain raises nothing more");
}));

test('"at": "garbage", an unknown ending, a bad signal or generation are refused: set aside, nothing stored', inWorkerDir(async (dirs) => {
  const { store, work } = dirs;
  const item = activeWithRow(store, 1, A, work);
  const spool = spoolOf(dirs);
  const path = write(spool, `${A}.1.json`, exitText(A, item, { at: "garbage" }));
  assert.match((await readExitRecord(path)).problem!, '/at must match pattern');
  for (const [change, problem] of [
    [{ at: "2026-13-45T99:00:00Z" }, '/at "2026-13-45T99:00:00Z" is not a time'],
    [{ ended: "vanished" }, "/ended must be equal to one of the allowed values"],
    [{ signal: "kill -9" }, "/signal must match pattern"],
    [{ generation: 0 }, "/generation must be >= 1"],
    [{ session_id: "not-a-uuid" }, "/session_id must match pattern"],
  ] as const) {
    writeFileSync(join(spool, "probe.json"), exitText(A, item, change));
    assert.match((await readExitRecord(join(spool, "probe.json"))).problem!, problem);
  }
  const result = await drainSpool(store, spool);
  assert.equal([result.processed, result.damaged], [0, 2]);
  assert.is(getItem(store, item)!.state, "active");
  assert.is(sessionsOf(store, item)[0].ended_at, null, "no row closed with `ended garbage`");
  assert.ok(existsSync(join(spool, "damaged", `${A}.1.json`)));
  assert.match(result.events.find((e) => e.file === path)!.line, /: it is not an exit record: \/at must match pattern .*; its session .* is settled from its own record$/);
  assert.match(result.events.find((e) => e.file === join(spool, "probe.json"))!.line, "its name tells no session, so nothing is settled from it: look at it, then remove it");
}));

test("an empty file and a file that is not JSON are set aside, each with what is wrong", inWorkerDir(async (dirs) => {
  const { store, work } = dirs;
  activeWithRow(store, 1, A, work);
  const spool = spoolOf(dirs);
  write(spool, `${A}.1.json`, "");
  write(spool, `${B}.1.json`, '{"session_id": "bbbb');
  const result = await drainSpool(store, spool);
  assert.equal([result.processed, result.damaged, result.kept], [0, 2, 0]);
  const [empty, notJson] = result.events.map((e) => e.line);
  assert.match(empty, `: it is empty; its session ${A} (ra-widgets-1) is settled from its own record`);
  assert.match(notJson, `: it is not JSON; session ${B}, which its name tells, is not in the store, so nothing is settled from it: look at it, then remove it`);
  assert.equal(readdirSync(join(spool, "damaged")).sort(), [`${A}.1.json`, `${B}.1.json`]);
}));

test("a damaged file's line says only what will happen: an item not active keeps its open row, a closed row stays closed", inWorkerDir(async (dirs) => {
  const { store, work } = dirs;
  const held = activeWithRow(store, 1, A, work);
  transition(store, held, "abandoned", { reason: "abandoned by the owner" });
  const ended = activeWithRow(store, 2, B, work);
  const spool = spoolOf(dirs);
  write(spool, `${B}.1.json`, exitText(B, ended));
  await drainSpool(store, spool);
  write(spool, `${A}.1.json`, "{");
  write(spool, `${B}.1.json`, "{");
  const lines = (await drainSpool(store, spool)).events.map((e) => e.line);
  assert.match(lines[0], `its session ${A} (ra-widgets-1) stays open, as its item ${held} is abandoned; nothing is guessed from the file`);
  assert.match(lines[1], `its session ${B} (ra-widgets-2) had already ended on record; nothing changes`);
}));

test("a damaged file whose name is taken in damaged/ gets a suffix: nothing set aside before is replaced", inWorkerDir(async (dirs) => {
  const spool = spoolOf(dirs);
  write(join(spool, "damaged"), `${A}.1.json`, "the first one");
  write(spool, `${A}.1.json`, "not json");
  const result = await drainSpool(dirs.store, spool);
  assert.is(result.damaged, 1);
  assert.is(readFileSync(join(spool, "damaged", `${A}.1.json`), "utf8"), "the first one");
  assert.is(readFileSync(join(spool, "damaged", `${A}.1.json.2`), "utf8"), "not json");
}));

test("the item of a set-aside file is settled from its session's own record: a worker killed, its exit spooled and damaged, ends interrupted", inWorkerDir(async (dirs) => {
  const { store, work } = dirs;
  const { id: item } = createItem(store, { repo: "demo/widgets", issue: 1, title: "Issue 1", body: "", author: "owner", labels: ["robot-army"], issue_state: "open", issue_updated_at: null }, { simulated: false });
  for (const to of ["ready", "dispatching", "active"] as const) transition(store, item, to, { reason: `to ${to}` });
  const worker = await startWorker(sessions, dirs, workerTags(store, item));
  recordSession(store, { id: worker.id, item, name: worker.name, host: "testhost", launcher: "process", marker: "", worktree: work, branch: "b", started_at: "", simulated: false });
  await stopSession(dirs.root, worker, { graceMs: 2_000 });
  const spool = spoolOf(dirs);
  const file = join(spool, `${worker.id}.1.json`);
  await waitFor("the exit spooled", () => existsSync(file));
  writeFileSync(file, readFileSync(file, "utf8").replace(/"code": null/, '"code": "abc"'));
  const deps = { store, sessionRoot: dirs.root, spoolDir: spool, host: "testhost" };
  const drained = await drainSpool(store, spool);
  assert.equal([drained.processed, drained.damaged], [0, 1]);
  const settled = settleSessions({ ...deps, damagedSessions: drained.damagedSessions });
  assert.is(settled.ended, 1, "settle no longer leaves it to the drain");
  assert.equal([getItem(store, item)!.state, getItem(store, item)!.reason], ["interrupted", "worker was killed"]);
  assert.is(sessionsOf(store, item)[0].end_reason, "killed");
  assert.ok(readRecord(dirs.root, worker.id)?.exitedAt, "decided from the session's own record");
}));

test("a spool file that cannot be read or moved is kept and reported once; settle decides its session from its own record all the same", inWorkerDir(async (dirs) => {
  const { store, work } = dirs;
  const item = activeWithRow(store, 1, A, work);
  const spool = spoolOf(dirs);
  // A folder where the file should be: it cannot be read, and a hard link to it is refused.
  mkdirSync(join(spool, `${A}.1.json`), { recursive: true });
  const reported = new Set<string>();
  const first = await drainSpool(store, spool, reported);
  assert.equal([first.kept, first.damaged, first.damagedSessions], [1, 0, [A]]);
  assert.match(first.events[0].line, /^exit spool: kept damaged file .*: it cannot be read \(EISDIR\), and it could not be set aside \(.*\); its session .* is settled from its own record$/);
  assert.equal(queryAudit(store, { kind: "spool.damaged" }).map((r) => [r.phase, r.body.ok]), [["intent", undefined], ["outcome", false]]);
  assert.is((await drainSpool(store, spool, reported)).events.length, 0, "reported once");
  // No session record and no process: proven gone, so lost (without the drain's word it would wait for ever).
  assert.is(settleSessions({ store, sessionRoot: dirs.root, spoolDir: spool, host: "testhost" }).lost, 0, "without the drain's word the spool owns it");
  const settled = settleSessions({ store, sessionRoot: dirs.root, spoolDir: spool, host: "testhost", damagedSessions: first.damagedSessions });
  assert.is(settled.lost, 1);
  assert.is(getItem(store, item)!.state, "interrupted");
}));

test.run();
