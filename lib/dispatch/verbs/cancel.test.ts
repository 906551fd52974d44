import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT, runtimeArgv } from "../../runtime.ts";
import { listRecords, sessionFiles, writeRecord } from "../../sessions/records.ts";
import { sessionState } from "../../sessions/state.ts";
import { queryAudit } from "../../store/audit.ts";
import { getItem } from "../../work-items/queries.ts";
import { dispatchReady } from "../dispatch.ts";
import type { DispatchDeps } from "../dispatch.ts";
import type { Store } from "../../store/open.ts";
import { sessionsOf } from "../../work-items/sessions.ts";
import { cancelSession, cancelTarget } from "./cancel.ts";
import { rejects } from "../../testing/rejects.ts";
import { verbTemplate, withWorld } from "../../testing/verbs.ts";

const template = verbTemplate();
test.after(() => template.remove());

test("cancel with no stdin signals nothing and records which session it reached for and how it gave up", () =>
  withWorld(template, async ({ store, deps, t }) => {
    await dispatchReady(deps);
    store.close();
    const argv = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
    const result = spawnSync(argv[0], [...argv.slice(1), "cancel", "1"], {
      encoding: "utf8", stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, RA_STATE_DIR: deps.stateDir, RA_SESSION_ROOT: deps.sessionRoot, RA_CONFIG: "", HOME: t.tmp },
    });
    assert.is(result.status, 3, result.stderr);
    assert.match(result.stderr, "Not cancelled (no stdin): nothing was signalled");
    const reopened = await (await import("../../store/open.ts")).openStore(deps.stateDir);
    try {
      const [record] = queryAudit(reopened, { kind: "session.cancel" });
      assert.equal([record.phase, record.body.session, record.body.gave_up, record.body.signalled], ["fact", "ra-widgets-1", "no stdin", false]);
      const [session] = listRecords(deps.sessionRoot);
      assert.is(sessionState(deps.sessionRoot, session), "running", "the worker still runs");
      assert.is(getItem(reopened, 1)!.state, "active");
    } finally {
      reopened.close();
    }
  }));

test("a confirmed cancel stops only that session, closes its row as cancelled and interrupts the item", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    const target = cancelTarget(store, 1);
    assert.is(await cancelSession(store, deps.sessionRoot, target), "stopped");
    const [record] = listRecords(deps.sessionRoot);
    assert.equal([record.ended, sessionState(deps.sessionRoot, record)], ["killed", "exited"]);
    const [row] = sessionsOf(store, 1);
    assert.is(row.end_reason, "cancelled");
    assert.is(getItem(store, 1)!.state, "interrupted");
    const phases = queryAudit(store, { kind: "session.cancel" }).map((r) => r.phase);
    assert.equal(phases, ["intent", "outcome"]);
    assert.throws(() => cancelTarget(store, 1), /no open session to cancel/);
  }));

test("cancel reaches for the session by its id: with the item's own record swept, another session of the same name is never signalled", () =>
  withWorld(template, async ({ store, deps }) => {
    const { target, own, other } = await withNamesake(store, deps);
    // The item's own record is gone (swept).
    rmSync(sessionFiles(deps.sessionRoot, own.id).record);
    assert.is(await cancelSession(store, deps.sessionRoot, target), "not-running");
    assert.is(sessionState(deps.sessionRoot, other), "running", "the other session runs on");
    assert.is(sessionsOf(store, 1)[0].end_reason, "cancelled");
  }));

test("an unreadable record of the item's session refuses cancel before any signal", () =>
  withWorld(template, async ({ store, deps }) => {
    const { target, own, other } = await withNamesake(store, deps);
    writeFileSync(sessionFiles(deps.sessionRoot, own.id).record, "");
    await rejects(cancelSession(store, deps.sessionRoot, target), Error, "cannot be read", "nothing was signalled");
    assert.equal(queryAudit(store, { kind: "session.cancel" }), [], "a refusal before any signal changes nothing");
    assert.is(sessionsOf(store, 1)[0].ended_at, null);
    assert.is(getItem(store, 1)!.state, "active");
    assert.is(sessionState(deps.sessionRoot, other), "running", "the worker runs on");
  }));

/** Dispatches item 1 and records another robot-army's session under the same name (the same worker, seen twice). */
async function withNamesake(store: Store, deps: DispatchDeps) {
  await dispatchReady(deps);
  const target = cancelTarget(store, 1);
  const [own] = listRecords(deps.sessionRoot);
  const other = { ...own, id: "0f0f0f0f-0000-4000-8000-000000000000" };
  writeRecord(deps.sessionRoot, other);
  return { target, own, other };
}

test.run();
