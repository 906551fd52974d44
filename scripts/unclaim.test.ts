import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Answer } from "../lib/cli.ts";
import { wireEffects } from "../lib/effects.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { comments, verbTemplate, withWorld } from "../lib/testing/verbs.ts";
import type { TestForge } from "../lib/testing/forge.ts";
import { claimOf, claimRef } from "../lib/work-items/issue-claims.ts";
import { dispatchReady } from "../lib/dispatch/dispatch.ts";
import { run } from "./unclaim.ts";

const template = verbTemplate();
test.after(() => template.remove());

const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Another host's claim on issue `issue` of demo/widgets, as its robot-army would make it; its commit. */
async function claimElsewhere(t: TestForge, issue: number, host = "laptop"): Promise<string> {
  const message = `robot-army claim demo/widgets#${issue}\n\nhost: ${host}\nitem: 41\naction: elsewhere-action\npurpose: dispatch\nat: 2026-01-15T09:00:00Z\n`;
  const { data } = await t.owner.rest.git.createCommit({ owner: "demo", repo: "widgets", message, tree: EMPTY_TREE, parents: [] });
  await t.owner.rest.git.createRef({ owner: "demo", repo: "widgets", ref: claimRef(issue), sha: data.sha });
  return data.sha;
}

async function refOf(t: TestForge, issue: number): Promise<string | null> {
  const { data } = await t.owner.rest.git.listMatchingRefs({ owner: "demo", repo: "widgets", ref: claimRef(issue).replace(/^refs\//, "") });
  return data.find((r) => r.ref === claimRef(issue))?.object.sha ?? null;
}

const answering = (line: string | null) => async (): Promise<Answer> => (line === null ? { unanswered: "no stdin" } : { line });

test("unclaim shows who holds the claim, asks for the item's id, then releases it; the item starts here at the next pass", () =>
  withWorld(template, async ({ t, store, deps }) => {
    await claimElsewhere(t, 1);
    const first = await dispatchReady(deps);
    assert.match(first.outcomes.find((o) => o.issue === 1)!.reason!, /^claimed by laptop on GitHub/);
    const out: string[] = [];
    const asked: string[] = [];
    const ask = async (question: string): Promise<Answer> => (asked.push(question), { line: "1\n" });
    assert.is(await run({ item: 1, yes: false }, { ...deps, ask, write: (text) => out.push(text) }), 0);
    assert.equal(out.join("").split("\n"), [
      "work item 1: refs/robot-army/claims/1 in demo/widgets: held by laptop for its item 41 since 2026-01-15T09:00:00Z",
      "work item 1: released: demo/widgets#1 may start here at the next dispatch pass",
      "",
    ]);
    assert.equal(asked, ["Release it, so that demo/widgets#1 may start here? Type 1 to confirm: "]);
    assert.is(await refOf(t, 1), null, "the claim is gone from GitHub");
    const release = queryAudit(store, { kind: "claim.release", item: 1 });
    assert.equal(release.map((r) => [r.phase, r.body.by ?? null, r.body.holder ?? null, r.body.ok ?? null]), [["intent", "owner", "laptop", null], ["outcome", null, null, true]]);
    assert.ok(claimOf(store, 1)?.released_at, "the item's claim on record is released: it is queued again");
    // issue 2 took the one slot on the first pass; once it is free, issue 1 starts here under a claim of this host.
    const { outcomes } = await dispatchReady({ ...deps, config: { ...deps.config, repos: { "demo/widgets": { ...deps.config.repos["demo/widgets"], max_sessions: 2 } } } });
    assert.is(outcomes.find((o) => o.issue === 1)?.result, "active");
    assert.equal([claimOf(store, 1)?.mine, claimOf(store, 1)?.host], [true, "testhost"]);
    assert.is((await comments(t, 1)).filter((c) => c.startsWith("robot-army dispatched")).length, 1);
  }));

test("unclaim without the item's id typed, or with no input, releases nothing and exits 3", () =>
  withWorld(template, async ({ t, deps }) => {
    const sha = await claimElsewhere(t, 1);
    for (const [line, why] of [["2\n", "answer did not match"], [null, "no stdin"]] as const) {
      const error = await run({ item: 1, yes: false }, { ...deps, ask: answering(line), write: () => {} }).then(() => null, (e: Error & { exitCode?: number }) => e);
      assert.is(error?.message, `Not released (${why}): the claim stands`);
    }
    assert.is(await refOf(t, 1), sha);
  }));

test("unclaim says when there is no claim, releases nothing below live, and leaves a claim that moved since it was read", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const out: string[] = [];
    const write = (text: string) => void out.push(text);
    assert.is(await run({ item: 1, yes: true }, { ...deps, ask: answering(null), write }), 0);
    assert.equal(out.splice(0), ["work item 1: demo/widgets#1 has no claim on GitHub; nothing to release\n"]);

    const sha = await claimElsewhere(t, 1);
    const effects = wireEffects("no-remote", { github: deps.effects.github });
    assert.is(await run({ item: 1, yes: true }, { ...deps, effects, ask: answering(null), write }), 0);
    assert.is(out.at(-1), "work item 1: would release it (effect level no-remote; nothing was written to GitHub)\n");
    assert.is(await refOf(t, 1), sha, "nothing was written below live");
    assert.equal(queryAudit(store, { kind: "claim.release", item: 1 }).map((r) => r.simulated), [true, true]);

    // The claim moves between the owner's look and the release (another host took it anew): left alone.
    const moving = { ...deps.github, readRef: async (repo: string, ref: string) => (await deps.github.readRef(repo, ref)) === sha ? "0".repeat(40) : null };
    const first = deps.github.readRef.bind(deps.github);
    let reads = 0;
    const github = { ...deps.github, readRef: async (repo: string, ref: string) => (reads++ === 0 ? await first(repo, ref) : await moving.readRef(repo, ref)) };
    const error = await run({ item: 1, yes: true }, { ...deps, github, ask: answering(null), write }).then(() => null, (e: Error) => e);
    assert.match(error!.message, "Not released: refs/robot-army/claims/1 moved since it was shown (someone claimed it anew); run unclaim again to see who holds it");
    assert.is(await refOf(t, 1), sha);
  }));

test("unclaim refuses this host's own claim while the item's worker works under it, and releases nothing", () =>
  withWorld(template, async ({ t, deps }) => {
    await dispatchReady(deps);
    const sha = await refOf(t, 1);
    const error = await run({ item: 1, yes: true }, { ...deps, ask: answering(null), write: () => {} }).then(() => null, (e: Error) => e);
    assert.match(error!.message, /^Work item 1 is active with its session ra-widgets-1 open under this claim: releasing it would let another host start demo\/widgets#1 too; cancel or abandon it first$/);
    assert.is(await refOf(t, 1), sha);
  }));

test.run();
