import { test } from "uvu";
import * as assert from "uvu/assert";
import { defaultConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { atTime, makeItem, withStore } from "../testing/items.ts";
import { transition } from "../work-items/transition.ts";
import { endSession, recordSession } from "../work-items/sessions.ts";
import { keptSession, listKeeps, placeKeep, releaseKeep } from "./keeps.ts";

const CLAUDE: Config["worker"] = { ...(await defaultConfig()).worker, binary: "claude" };
const SH: Config["worker"] = { ...CLAUDE, binary: "sh" };

/** Records the item's next attempt as an open session row, as dispatch does when a worker starts. */
function startSession(store: Store, item: number, id: string) {
  return recordSession(store, {
    id, item, name: `ra-widgets-${item}`, host: "testhost", launcher: "process", marker: "", worktree: "/w", branch: "b", started_at: "", simulated: false,
  });
}

function finish(store: Store, item: number): void {
  transition(store, item, "done", { reason: "issue closed", issueClosedObserved: true });
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof PreconditionError, String(error));
    return error.message;
  }
  return assert.unreachable("expected a refusal") as never;
}

test("a keep placed before the merge waits for done, covers the current session, and is placed once, audited", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 3, state: "active" });
    const session = startSession(store, item.id, "5e551011-0000-4000-8000-000000000003");
    const placed = atTime("2026-01-15T10:00:00Z", () => placeKeep(store, item.id, { worker: SH }));
    assert.equal(placed, {
      placed: true,
      keep: { item: item.id, placed_at: "2026-01-15T10:00:00Z", repo: "demo/widgets", issue: 3, state: "active", session: { id: session.id, name: session.name, attempt: 1 } },
    });
    assert.is(keptSession(store, item.id)?.id, session.id, "kept while active: it waits for done");
    atTime("2026-01-15T10:05:00Z", () => finish(store, item.id));
    assert.is(keptSession(store, item.id)?.id, session.id, "and still covers the session once done");
    const again = placeKeep(store, item.id, { worker: SH });
    assert.equal([again.placed, again.keep.placed_at, again.keep.state], [false, "2026-01-15T10:00:00Z", "done"], "placing twice keeps the first");
    assert.equal(queryAudit(store, { kind: "keep" }).map((r) => [r.kind, r.phase, r.item, r.repo, r.sessionId, r.body]), [
      ["keep.placed", "fact", item.id, "demo/widgets", session.id, { state: "active", session: session.id }],
    ]);
  }));

test("a keep may go on an item in any state but abandoned, and waits with no session", () =>
  withStore((store) => {
    for (const [issue, state] of [[1, "discovered"], [2, "ready"], [3, "failed"]] as const) {
      const item = makeItem(store, { issue, state });
      assert.is(placeKeep(store, item.id, { worker: SH }).keep.session, null);
      assert.is(keptSession(store, item.id), undefined, "nothing to cover yet");
    }
    assert.equal(listKeeps(store).map((k) => [k.item, k.state]), [[1, "discovered"], [2, "ready"], [3, "failed"]]);
  }));

test("a keep on an abandoned item is refused, saying why and what ends its worker", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 4, state: "abandoned" });
    assert.is(
      refusal(() => placeKeep(store, item.id, { worker: SH })),
      `Item ${item.id} (demo/widgets#4) is abandoned: it never becomes done, so a keep could never take effect; its worker is left running, and "robot-army cancel ${item.id}" ends it`,
    );
    assert.equal(listKeeps(store), []);
    assert.equal(queryAudit(store, { kind: "keep" }), [], "a refusal writes nothing");
  }));

test("a keep on a finished item with no session open is refused with the resume command for its transcript", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 5, state: "active" });
    const first = startSession(store, item.id, "5e551011-0000-4000-8000-000000000051");
    endSession(store, first.id, "lost");
    const last = startSession(store, item.id, "5e551011-0000-4000-8000-000000000052");
    endSession(store, last.id, "exited", { code: 0 });
    finish(store, item.id);
    assert.is(
      refusal(() => placeKeep(store, item.id, { worker: CLAUDE })),
      `Item ${item.id} (demo/widgets#5) is done and no session of it is open, so a keep has nothing to cover; to go back to its transcript, run: claude --resume ${last.id}`,
    );
    assert.is(
      refusal(() => placeKeep(store, item.id, { worker: SH })),
      `Item ${item.id} (demo/widgets#5) is done and no session of it is open, so a keep has nothing to cover; its last session was ra-widgets-${item.id} (${last.id}), and its worker (sh) has no resume command`,
    );
    const never = makeItem(store, { issue: 6 });
    finish(store, never.id);
    assert.match(refusal(() => placeKeep(store, never.id, { worker: CLAUDE })), /nothing to cover; no session of it was ever started$/);
    assert.equal(listKeeps(store), []);
    assert.match(refusal(() => placeKeep(store, 99, { worker: CLAUDE })), /No work item 99/);
  }));

test("a keep on a finished item whose worker still runs is accepted", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 7, state: "active" });
    const session = startSession(store, item.id, "5e551011-0000-4000-8000-000000000007");
    finish(store, item.id);
    assert.is(placeKeep(store, item.id, { worker: CLAUDE }).keep.session?.id, session.id);
    assert.is(keptSession(store, item.id)?.id, session.id);
  }));

test("a keep covers the current session only, never an earlier attempt's still open", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 8, state: "active" });
    const earlier = startSession(store, item.id, "5e551011-0000-4000-8000-000000000081");
    placeKeep(store, item.id, { worker: SH });
    const current = startSession(store, item.id, "5e551011-0000-4000-8000-000000000082");
    assert.is(keptSession(store, item.id)?.id, current.id);
    endSession(store, current.id, "exited", { code: 0 });
    assert.is(keptSession(store, item.id), undefined, "the earlier attempt's row is still open, and not covered");
    assert.is(listKeeps(store)[0].session, null);
    assert.is(earlier.ended_at, null);
  }));

test("a keep is not cleared when its session ends: inert, listed with no live session, until released (audited)", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 9, state: "active" });
    const session = startSession(store, item.id, "5e551011-0000-4000-8000-000000000009");
    atTime("2026-01-15T10:00:00Z", () => placeKeep(store, item.id, { worker: SH }));
    finish(store, item.id);
    endSession(store, session.id, "exited", { code: 0 });
    assert.is(keptSession(store, item.id), undefined, "inert: it covers nothing");
    assert.equal(listKeeps(store).map((k) => [k.item, k.state, k.session]), [[item.id, "done", null]]);
    const released = releaseKeep(store, item.id);
    assert.equal([released?.item, released?.placed_at, released?.session], [item.id, "2026-01-15T10:00:00Z", null]);
    assert.is(releaseKeep(store, item.id), undefined, "releasing twice finds nothing");
    assert.equal(listKeeps(store), []);
    assert.equal(queryAudit(store, { kind: "keep.released" }).map((r) => [r.item, r.sessionId, r.body]), [
      [item.id, null, { placed_at: "2026-01-15T10:00:00Z", session: null }],
    ]);
    assert.match(refusal(() => releaseKeep(store, 99)), /No work item 99/);
  }));

test("releasing hands a running worker back: it is no longer kept", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 10, state: "active" });
    const session = startSession(store, item.id, "5e551011-0000-4000-8000-000000000010");
    placeKeep(store, item.id, { worker: SH });
    finish(store, item.id);
    assert.is(releaseKeep(store, item.id)?.session?.id, session.id);
    assert.is(keptSession(store, item.id), undefined);
    assert.equal(queryAudit(store, { kind: "keep.released" }).map((r) => r.sessionId), [session.id]);
  }));

test.run();
