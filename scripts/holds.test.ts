import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { isPaused } from "../lib/dispatch/controls.ts";
import { PreconditionError } from "../lib/errors.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { atTime, makeItem, withStore } from "../lib/testing/items.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { openExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { run as hold } from "./hold.ts";
import { run as holds } from "./holds.ts";
import type { HoldsReport } from "./holds.ts";
import { run as pause } from "./pause.ts";
import { run as unhold } from "./unhold.ts";
import { run as unpause } from "./unpause.ts";

const T0 = "2026-01-15T10:00:00Z";

/** Runs a command's `run` with the clock at T0 and returns what it wrote. */
function output(fn: (write: (text: string) => void) => number): string {
  let text = "";
  const code = atTime(T0, () => fn((chunk) => (text += chunk)));
  assert.is(code, 0);
  return text;
}

const listed = (store: Store | undefined, json = false) => output((write) => holds({ json }, { store, write }));

test("pause, pause again, unpause, unpause again", () =>
  withStore((store) => {
    assert.is(output((write) => pause({ reason: "release" }, { store, write })), 'paused (release): no worker session is dispatched until "robot-army unpause"\n');
    assert.is(output((write) => pause({}, { store, write })), `already paused since ${T0} (release)\n`);
    assert.is(isPaused(store), true);
    assert.is(listed(store), `dispatch paused since ${T0} (release)\nno holds\n`);
    assert.is(output((write) => unpause({}, { store, write })), `unpaused: dispatch runs again (it was paused since ${T0})\n`);
    assert.is(output((write) => unpause({}, { store, write })), "not paused\n");
    assert.equal(queryAudit(store, { kind: "control" }).map((r) => r.kind), ["control.pause", "control.unpause"]);
  }));

test("hold and unhold an item and a repository; holds lists them, repositories first", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 7 });
    const target = { item: item.id };
    assert.is(output((write) => hold({ target, reason: "needs design" }, { store, write })),
      'held: item 1 (demo/widgets#7) (needs design): not dispatched until "robot-army unhold 1"\n');
    assert.is(output((write) => hold({ target }, { store, write })), `already held since ${T0}: item 1 (demo/widgets#7) (needs design)\n`);
    assert.is(output((write) => hold({ target: { repo: "demo/gadgets" } }, { store, write })),
      'held: repository demo/gadgets: not dispatched until "robot-army unhold --repo demo/gadgets"\n');
    assert.is(listed(store), [
      `repository demo/gadgets: held since ${T0}`,
      `item 1 (demo/widgets#7): held since ${T0} (needs design)`,
      "",
    ].join("\n"));
    const json = JSON.parse(listed(store, true)) as HoldsReport;
    assert.equal(json, {
      paused: null,
      holds: [
        { id: 2, item: null, repo: "demo/gadgets", reason: null, set_at: T0, what: "repository demo/gadgets" },
        { id: 1, item: 1, repo: null, reason: "needs design", set_at: T0, what: "item 1 (demo/widgets#7)" },
      ],
    });
    assert.is(output((write) => unhold({ target }, { store, write })), `unheld: item 1 (demo/widgets#7) (held since ${T0})\n`);
    assert.is(output((write) => unhold({ target }, { store, write })), "not held: item 1 (demo/widgets#7)\n");
    assert.is(output((write) => unhold({ target: { repo: "demo/gadgets" } }, { store, write })), `unheld: repository demo/gadgets (held since ${T0})\n`);
    assert.is(listed(store), "no holds\n");
    assert.equal(queryAudit(store, { kind: "control" }).map((r) => [r.kind, r.repo, r.item]), [
      ["control.hold", "demo/widgets", 1], ["control.hold", "demo/gadgets", null],
      ["control.unhold", "demo/widgets", 1], ["control.unhold", "demo/gadgets", null],
    ]);
  }));

test("with no store, the reads and unpause say there is nothing and create nothing", () =>
  withTempDir(async (dir) => {
    const stateDir = join(dir, "state");
    const store = await openExistingStore(stateDir);
    assert.is(listed(store), "no holds\n");
    assert.equal(JSON.parse(listed(store, true)), { paused: null, holds: [] });
    assert.is(output((write) => unpause({}, { store, write })), "not paused\n");
    assert.is(output((write) => unhold({ target: { repo: "demo/widgets" } }, { store, write })), "not held: repository demo/widgets\n");
    assert.throws(() => unhold({ target: { item: 3 } }, { store, write: () => {} }),
      (error: Error) => error instanceof PreconditionError && error.message === 'No work item 3; "robot-army status" lists them');
    assert.not.ok(existsSync(stateDir));
  }));

test.run();
