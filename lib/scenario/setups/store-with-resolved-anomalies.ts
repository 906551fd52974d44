/**
 * Setup `store-with-resolved-anomalies`: a store whose anomalies went the ways the pass
 * takes them, written through lib/store/anomalies.ts as the pass writes them. Items 1 and 2
 * of demo/widgets are done. At 09:00 `orphan_session` was raised for item 1's session
 * (`${SESSION_1}`) and for item 2's (`${SESSION_2}`), and `effect_unfinished` for a comment
 * cut short; at 09:05 item 1's was retracted (its item was kept) and item 2's resolved as
 * gone (its worker died); at 09:10, the keep released and the worker busy, item 1's session
 * was found orphaned again and raised anew. The steps run in `<dir>/work`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { raiseAnomaly, resolveAnomaly, retractAnomaly } from "../../store/anomalies.ts";
import { openStore } from "../../store/open.ts";
import { atTime, makeItem } from "../../testing/items.ts";
import { transition } from "../../work-items/transition.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

const SESSION_1 = "5e551011-0000-4000-8000-00000000a001";
const SESSION_2 = "5e551011-0000-4000-8000-00000000a002";

/** Makes the items and writes the anomalies' history. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const work = join(ctx.dir, "work");
  mkdirSync(work, { recursive: true });
  const store = await openStore(ctx.env.RA_STATE_DIR);
  try {
    for (const issue of [1, 2]) {
      makeItem(store, { issue, state: "active", at: "2026-01-15T08:00:00Z" });
      atTime("2026-01-15T08:30:00Z", () => transition(store, issue, "done", { reason: "issue closed", issueClosedObserved: true }));
    }
    const orphan = (item: number, session: string) => ({
      kind: "orphan_session" as const, actionId: session, repo: "demo/widgets", item,
      detail: `worker session ra-widgets-${item} (${session}) runs under done item ${item}, not kept: "robot-army keep ${item}" or "robot-army cancel ${item}"`,
    });
    const [first, second] = atTime("2026-01-15T09:00:00Z", () => [
      raiseAnomaly(store, orphan(1, SESSION_1)).anomaly,
      raiseAnomaly(store, orphan(2, SESSION_2)).anomaly,
      raiseAnomaly(store, { kind: "effect_unfinished", actionId: "0b7e0a52-0000-4000-8000-00000000c001", repo: "demo/widgets", item: 2, detail: "github.comment for demo/widgets#2 (item 2) was cut short: check the issue" }).anomaly,
    ]);
    atTime("2026-01-15T09:05:00Z", () => {
      retractAnomaly(store, first.id);
      resolveAnomaly(store, second.id, "gone");
    });
    atTime("2026-01-15T09:10:00Z", () => raiseAnomaly(store, orphan(1, SESSION_1)));
  } finally {
    store.close();
  }
  return { cwd: work, vars: { SESSION_1, SESSION_2 } };
}
