import { test } from "uvu";
import * as assert from "uvu/assert";
import type { GitHubReader, GitHubWriter } from "../boundaries/github-types.ts";
import { SIMULATED_GITHUB, wireEffects } from "../effects.ts";
import type { Store } from "../store/open.ts";
import { makeItem, withStore } from "../testing/items.ts";
import { fullScans, queryPlans } from "../testing/query-plans.ts";
import { claimMessage, claimOf, claimRef, readClaimMessage, releaseClaims, unclaimRefusal } from "./issue-claims.ts";
import { recordSession } from "./sessions.ts";
import { transition } from "./transition.ts";

const SHA = (n: number) => String(n).repeat(40).slice(0, 40);

/** A claim this store made for `item`, as takeClaim records it. */
function heldHere(store: Store, item: number, issue: number, repo = "demo/widgets"): void {
  store.statement("INSERT INTO issue_claims (item, repo, issue, ref, sha, host, mine, action_id, seen_at, released_at) VALUES (?, ?, ?, ?, ?, 'testhost', 1, 'a', '2026-01-15T10:00:00Z', NULL)")
    .run(item, repo, issue, claimRef(issue), SHA(issue));
}

test("a claim's message reads back as written; words in shapes robot-army never writes are not taken", () => {
  const words = { host: "laptop.local", item: 12, session: "5d0c7f7e-aaaa-4bbb-8ccc-dddddddddddd", action: "0b7e0a52-1111-4222-8333-444455556666", purpose: "dispatch", at: "2026-01-15T10:00:00.000Z" };
  assert.equal(readClaimMessage(claimMessage("demo/widgets", 3, words)), words);
  assert.equal(readClaimMessage("Merge branch 'main'\n\nhost: laptop\n"), {}, "not a claim");
  const hostile = "robot-army claim demo/widgets#3\n\nhost: la\u001b[31mptop\nitem: 0\naction: x\npurpose: $(rm -rf)\n";
  assert.equal(readClaimMessage(hostile), { action: "x" }, "an escape in the host, item 0 and a purpose with a shell's words are each left out");
  assert.equal(readClaimMessage(`robot-army claim demo/widgets#3\n\nhost: ${"h".repeat(65)}\n`), {}, "a host name longer than daemon.host allows");
});

test("the release step reads only the claims still held, by their partial index, however many items are finished", () =>
  withStore(async (store) => {
    const plans = queryPlans(store, (s) => void releaseClaims({ store: s, github: {} as GitHubReader, effects: wireEffects("live", { github: { ...SIMULATED_GITHUB, simulated: false } }) }));
    assert.equal(plans.length, 1);
    assert.ok(plans[0].steps.some((step) => /USING INDEX issue_claims_held/.test(step)), plans[0].steps.join("; "));
    assert.equal(fullScans(store, (s) => void releaseClaims({ store: s, github: {} as GitHubReader, effects: wireEffects("live", { github: { ...SIMULATED_GITHUB, simulated: false } }) })), []);
  }));

test("one claim GitHub will not release holds back none of the others, and is tried again on the next pass", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 1, state: "abandoned" });
    makeItem(store, { issue: 2, state: "abandoned" });
    heldHere(store, 1, 1);
    heldHere(store, 2, 2);
    const deleted: string[] = [];
    let refuse = true;
    const github = { readRef: async (_repo: string, ref: string) => SHA(Number(ref.split("/").at(-1))) } as unknown as GitHubReader;
    const writer: GitHubWriter = {
      ...SIMULATED_GITHUB, simulated: false,
      deleteClaim: async (_repo, ref) => {
        if (refuse && ref.endsWith("/1")) throw new Error("GitHub answered 403 to DELETE /repos/demo/widgets/git/refs/robot-army/claims/1: Repository was archived so is read-only.");
        deleted.push(ref);
        return "deleted";
      },
    };
    const deps = { store, github, effects: wireEffects("live", { github: writer }) };
    const first = await releaseClaims(deps);
    assert.equal(first.map((r) => [r.item, r.result]), [[1, "failed"], [2, "released"]]);
    assert.match(first[0].why!, "Repository was archived so is read-only");
    assert.equal(deleted, ["refs/robot-army/claims/2"]);
    assert.equal([claimOf(store, 1)?.released_at, typeof claimOf(store, 2)?.released_at], [null, "string"]);
    refuse = false;
    assert.equal((await releaseClaims(deps)).map((r) => [r.item, r.result]), [[1, "released"]], "the next pass tries only the one left");
  }));

test("the owner may not release this host's claim while its item's worker may be at work here", () =>
  withStore(async (store) => {
    const active = makeItem(store, { issue: 1, state: "active" });
    const ready = makeItem(store, { issue: 2, state: "ready" });
    const interrupted = makeItem(store, { issue: 3, state: "active" });
    const stale = transition(store, interrupted.id, "interrupted", { reason: "its worker was lost" });
    recordSession(store, {
      id: "5e551011-0000-4000-8000-000000000003", item: interrupted.id, name: "ra-widgets-3", host: "testhost", launcher: "process",
      marker: "", worktree: "/nonexistent/worktree", branch: "robot-army/issue-3", started_at: "2026-01-15T10:00:00Z", simulated: false,
    });
    const mine = { ref: "r", sha: SHA(1), words: {}, mine: true };
    assert.is(unclaimRefusal(store, active, mine), "Work item 1 is active under this claim: releasing it would let another host start demo/widgets#1 too; cancel or abandon it first");
    assert.is(unclaimRefusal(store, stale, mine), "Work item 3 is interrupted with its session ra-widgets-3 open under this claim: releasing it would let another host start demo/widgets#3 too; cancel or abandon it first");
    assert.is(unclaimRefusal(store, ready, mine), null, "no worker of it here");
    assert.is(unclaimRefusal(store, active, { ...mine, mine: false }), null, "another host's claim: the owner knows better");
  }));

test.run();
