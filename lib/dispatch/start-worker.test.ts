import { test } from "uvu";
import * as assert from "uvu/assert";
import { listRecords } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import { queryAudit } from "../store/audit.ts";
import { getItem } from "../work-items/queries.ts";
import { sessionsOf } from "../work-items/sessions.ts";
import { comments, verbTemplate, withWorld } from "../testing/verbs.ts";
import { dispatchReady } from "./dispatch.ts";

const template = verbTemplate();
test.after(() => template.remove());

test("a worker launched but not recorded is stopped (audited), its item fails, and its issue hears once that no session started", () =>
  withWorld(template, async ({ t, store, deps }) => {
    // A real SQLite refusal between the launch and the row: the session table takes no row.
    store.db.exec("CREATE TEMP TRIGGER no_session_rows BEFORE INSERT ON sessions BEGIN SELECT RAISE(ABORT, 'the disk said no'); END");
    const { outcomes } = await dispatchReady(deps);
    // No row holds the slot, so dispatch goes on to the next item, which fails the same way.
    assert.ok(outcomes.length >= 1);
    for (const outcome of outcomes) {
      assert.is(outcome.result, "failed");
      assert.match(outcome.reason!, /^its worker started as session ra-widgets-\d \([0-9a-f-]{36}\) but could not be recorded: the disk said no; that session was stopped$/);
      assert.equal(sessionsOf(store, outcome.item), []);
      assert.is(getItem(store, outcome.item)!.state, "failed");
    }
    const records = listRecords(deps.sessionRoot);
    assert.is(records.length, outcomes.length);
    for (const record of records) {
      assert.equal([record.ended, sessionState(deps.sessionRoot, record)], ["killed", "exited"], "a worker no row records does not run on");
    }
    assert.equal(queryAudit(store, { kind: "session.stop" }).map((r) => r.phase), outcomes.flatMap(() => ["intent", "outcome"]));
    const said = await comments(t, 1);
    assert.is(said.filter((c) => c.startsWith("robot-army could not start")).length, 1);
    assert.not.ok(said.some((c) => c.startsWith("robot-army dispatched")));
  }));

test.run();
