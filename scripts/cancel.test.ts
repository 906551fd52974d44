import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { dispatchReady } from "../lib/dispatch/dispatch.ts";
import type { DispatchDeps } from "../lib/dispatch/dispatch-deps.ts";
import { sessionsOf } from "../lib/work-items/sessions.ts";
import { listRecords } from "../lib/sessions/records.ts";
import { sessionState } from "../lib/sessions/state.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { rejects } from "../lib/testing/rejects.ts";
import { verbTemplate, withWorld } from "../lib/testing/verbs.ts";
import { getItem } from "../lib/work-items/queries.ts";
import { transition } from "../lib/work-items/transition.ts";
import { PreconditionError } from "../lib/errors.ts";
import { run } from "./cancel.ts";
import type { CancelCommandDeps } from "./cancel.ts";

const template = verbTemplate();
test.after(() => template.remove());

/** The command's dependencies for the world's dispatch, with a scripted answer to the question. */
function commandDeps(deps: DispatchDeps, answer: string | "no stdin", written: string[], asked: string[] = []): CancelCommandDeps {
  return {
    store: deps.store, sessionRoot: deps.sessionRoot, spoolDir: join(deps.stateDir, "spool"), host: deps.host,
    ask: async (question) => {
      asked.push(question);
      return answer === "no stdin" ? { unanswered: "no stdin" } : { line: answer };
    },
    write: (text) => written.push(text),
  };
}

test("cancel on a done item stops its session and says the item stays done", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    transition(store, 1, "done", { reason: "issue closed", issueClosedObserved: true });
    const written: string[] = [];
    const asked: string[] = [];
    assert.is(await run({ item: 1, force: false }, commandDeps(deps, "1\n", written, asked)), 0);
    assert.equal(asked, ["Cancel session ra-widgets-1 of work item 1? Type 1 to confirm: "]);
    assert.equal(written, ["cancelled session ra-widgets-1 of work item 1; the item stays done\n"]);
    assert.is(getItem(store, 1)!.state, "done");
    assert.is(sessionsOf(store, 1)[0].end_reason, "cancelled");
    assert.is(sessionState(deps.sessionRoot, listRecords(deps.sessionRoot)[0]), "exited");
  }));

test("cancel gives up on an unanswered question: nothing written, nothing signalled, how it gave up audited", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    const written: string[] = [];
    await rejects(run({ item: 1, force: false }, commandDeps(deps, "no stdin", written)), PreconditionError, "Not cancelled (no stdin): nothing was signalled");
    await rejects(run({ item: 1, force: false }, commandDeps(deps, "2", written)), PreconditionError, "Not cancelled (answer did not match)");
    assert.equal(written, []);
    assert.equal(queryAudit(store, { kind: "session.cancel" }).map((r) => r.body.gave_up), ["no stdin", "answer did not match"]);
    assert.is(sessionState(deps.sessionRoot, listRecords(deps.sessionRoot)[0]), "running");
    assert.is(getItem(store, 1)!.state, "active");
  }));

test.run();
