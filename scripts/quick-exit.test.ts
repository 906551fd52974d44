import { test } from "uvu";
import * as assert from "uvu/assert";
import { defaultConfig } from "../lib/config.ts";
import { itemReport } from "../lib/reports/item.ts";
import { statusReport } from "../lib/reports/status.ts";
import type { Exit } from "../lib/sessions/spool.ts";
import { queryAudit } from "../lib/store/audit.ts";
import type { Store } from "../lib/store/open.ts";
import { makeItem, withStore } from "../lib/testing/items.ts";
import { formatStatus } from "./status.ts";
import { formatItem } from "./show.ts";
import { getItem } from "../lib/work-items/queries.ts";
import { QUICK_EXIT_KIND } from "../lib/work-items/quick-exit.ts";
import { recordSession } from "../lib/work-items/sessions.ts";
import { closeFromExit } from "../lib/ending/worker-ended.ts";

/** An active item of demo/widgets#7 with one open session; its id. */
function activeItem(store: Store, session = "s1", issue = 7): number {
  const item = makeItem(store, { issue, state: "active" }).id;
  recordSession(store, {
    id: session, item, name: "ra-widgets-7", host: "testhost", launcher: "process", marker: "m", worktree: "/w/7", branch: "robot-army/issue-7",
    started_at: "2026-01-15T10:00:00Z", simulated: false,
  });
  return item;
}

const TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
const LINES = ["demo worker: RA_PROMPT_FILE is not set; it names the file holding the worker's prompt", `token ${TOKEN}`];
const exit = (fields: Partial<Exit>): Exit => ({ ended: "exited", code: 1, signal: null, at: "2026-01-15T10:00:01Z", ...fields });

test("a worker that ends by itself within seconds of its start keeps its last lines, redacted; show and status print them under its item", () =>
  withStore(async (store, stateDir) => {
    const item = activeItem(store);
    closeFromExit(store, { id: "s1", item }, exit({ ran_seconds: 0.4, last_lines: LINES }));
    assert.is(getItem(store, item)!.state, "failed");
    const [record] = queryAudit(store, { kind: QUICK_EXIT_KIND });
    assert.equal([record.item, record.sessionId], [item, "s1"]);
    assert.equal(record.body.last_lines, [LINES[0], "token [redacted]"], "the secret never reaches the store");
    const config = await defaultConfig();
    const report = itemReport(store, config, getItem(store, item)!);
    assert.equal(report.sessions[0].quick_exit, {
      session: "s1", ran_seconds: 0.4, ended: "exited", code: 1, signal: null, last_lines: [LINES[0], "token [redacted]"],
    });
    const shown = formatItem(getItem(store, item)!, null, [], report.sessions);
    assert.ok(shown.includes("    quick exit: its worker exited 1 0.4 s after it started; its last 2 lines:"), shown.join("\n"));
    assert.ok(shown.includes(`      | ${LINES[0]}`));
    const status = statusReport(store, config, false, stateDir);
    assert.equal(status.needs_you[0].quick_exit?.last_lines.length, 2);
    const lines = formatStatus(status);
    const at = lines.findIndex((line) => line.includes(`item ${item}  failed:`));
    assert.equal(lines.slice(at + 1, at + 4), [
      "    its worker exited 1 0.4 s after it started; its last 2 lines:", `      | ${LINES[0]}`, "      | token [redacted]",
    ]);
  }));

test("status shows a quick exit's last five lines and points at show for the rest; an empty output says so", () =>
  withStore(async (store, stateDir) => {
    const item = activeItem(store);
    const many = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
    closeFromExit(store, { id: "s1", item }, exit({ ended: "crashed", code: null, signal: "SIGSEGV", ran_seconds: 2, last_lines: many }));
    const lines = formatStatus(statusReport(store, await defaultConfig(), false, stateDir));
    const at = lines.findIndex((line) => line.includes(`item ${item}  interrupted:`));
    assert.equal(lines.slice(at + 1, at + 7), [
      `    its worker ended by SIGSEGV 2 s after it started; its last 12 lines: (the last 5 here; "robot-army show ${item}" has all 12)`,
      "      | line 8", "      | line 9", "      | line 10", "      | line 11", "      | line 12",
    ]);
    const other = makeItem(store, { issue: 8, state: "active" }).id;
    recordSession(store, { id: "s2", item: other, name: "ra-widgets-8", host: "h", launcher: "process", marker: "m", worktree: "/w/8", branch: "b8", started_at: "2026-01-15T10:00:00Z", simulated: false });
    closeFromExit(store, { id: "s2", item: other }, exit({ ran_seconds: 1 }));
    const report = statusReport(store, await defaultConfig(), false, stateDir);
    assert.match(formatStatus(report).join("\n"), "    its worker exited 1 1 s after it started; it printed nothing robot-army could keep");
  }));

test("a stop from outside, an end after ten seconds and an exit record without a measured run keep nothing", () =>
  withStore(async (store) => {
    for (const [n, fields] of [[1, { ended: "killed", code: 0, ran_seconds: 1, last_lines: LINES }], [2, { ran_seconds: 10.1, last_lines: LINES }], [3, { last_lines: LINES }]] as const) {
      const item = activeItem(store, `s${n}`, 10 + n);
      closeFromExit(store, { id: `s${n}`, item }, exit(fields as Partial<Exit>));
    }
    assert.equal(queryAudit(store, { kind: QUICK_EXIT_KIND }), []);
  }));

test.run();
