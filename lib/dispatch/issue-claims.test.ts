import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { connectGitHub } from "../boundaries/github.ts";
import { launcherFor } from "../boundaries/launchers/select.ts";
import type { Config } from "../config.ts";
import { wireEffects } from "../effects.ts";
import { pollRepository } from "../intake/poll.ts";
import { currentFingerprint } from "../repos/onboard.ts";
import { recordApproval } from "../repos/records.ts";
import { listRecords } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import { stopSession } from "../sessions/stop.ts";
import { appendAudit, queryAudit } from "../store/audit.ts";
import { copyStore, openStore, STORE_FILE } from "../store/open.ts";
import { git } from "../testing/fixtures.ts";
import { quickOptions } from "../testing/github-kit.ts";
import type { TestForge } from "../testing/forge.ts";
import { comments, verbTemplate, withWorld } from "../testing/verbs.ts";
import { claimOf, claimRef, readClaimMessage, releaseClaims, takeClaim } from "../work-items/issue-claims.ts";
import { getItem } from "../work-items/queries.ts";
import { sweepUnfinished } from "../daemon/unfinished.ts";
import { atTime, atTimeAsync } from "../testing/items.ts";
import { exitedPid } from "../testing/fixtures.ts";
import { transition } from "../work-items/transition.ts";
import type { DispatchDeps } from "./dispatch-deps.ts";
import { dispatchReady } from "./dispatch.ts";
import { heartbeatPass } from "../daemon/host-heartbeats.ts";

const template = verbTemplate();
test.after(() => template.remove());

/** Room for every ready item on a host: three slots in the repository and in all. */
function roomy(config: Config): Config {
  return { ...config, repos: { "demo/widgets": { ...config.repos["demo/widgets"], max_sessions: 3 } }, worker: { ...config.worker, max_sessions: 3 } };
}

/**
 * A second host beside the world's: its own clone, state directory, store and host name, the
 * same forge and issues, onboarded and polled as the first was. Its sessions are stopped and
 * its store closed when `fn` ends.
 */
async function withSecondHost(t: TestForge, first: DispatchDeps, host: string, fn: (second: DispatchDeps) => Promise<void>): Promise<void> {
  const stateDir = join(t.tmp, `state-${host}`);
  const sessionRoot = join(stateDir, "sessions");
  const clone = join(t.tmp, `widgets-${host}`);
  git(t.tmp, "clone", "--quiet", join(t.dir, "git", "demo", "widgets.git"), clone);
  const config: Config = { ...first.config, repos: { "demo/widgets": { ...first.config.repos["demo/widgets"], path: clone } } };
  const store = await openStore(stateDir);
  try {
    const github = await connectGitHub(config, store, quickOptions());
    const approved = await currentFingerprint(github, { name: "demo/widgets", path: clone, base: "main" });
    recordApproval(store, "demo/widgets", clone, approved.fingerprint, approved.commit);
    const effects = wireEffects("live", { github: github.writer });
    await pollRepository({ store, reader: github, effects, rules: { author: "owner", label: "robot-army" }, host, paths: { "demo/widgets": clone } }, "demo/widgets");
    const env = { ...process.env, RA_STATE_DIR: stateDir, RA_SESSION_ROOT: sessionRoot };
    const second: DispatchDeps = { store, config, stateDir, sessionRoot, github, effects, host, launcher: launcherFor(config, { env, timeoutMs: 15_000 }) };
    try {
      await fn(second);
    } finally {
      for (const record of listRecords(sessionRoot)) await stopSession(sessionRoot, record).catch(() => {});
    }
  } finally {
    store.close();
  }
}

/** The claim on the forge: the reference's commit and what its message says; null when there is none. */
async function claimOnForge(t: TestForge, issue: number) {
  const { data: refs } = await t.owner.rest.git.listMatchingRefs({ owner: "demo", repo: "widgets", ref: claimRef(issue).replace(/^refs\//, "") });
  const found = refs.find((r) => r.ref === claimRef(issue));
  if (!found) return null;
  const { data: commit } = await t.owner.rest.git.getCommit({ owner: "demo", repo: "widgets", commit_sha: found.object.sha });
  return { sha: found.object.sha, tree: commit.tree.sha, parents: commit.parents.length, words: readClaimMessage(commit.message) };
}

test("two hosts dispatching the same issues at the same moment start each exactly once: the other host sees it claimed by the first", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const first = { ...deps, config: roomy(deps.config) };
    await withSecondHost(t, first, "otherhost", async (second) => {
      const [a, b] = await Promise.all([dispatchReady(first), dispatchReady(second)]);
      const started = [...a.outcomes.filter((o) => o.result === "active").map((o) => ["testhost", o.issue] as const), ...b.outcomes.filter((o) => o.result === "active").map((o) => ["otherhost", o.issue] as const)];
      assert.equal(started.map(([, issue]) => issue).sort(), [1, 2, 3], "every ready issue was started once, by one host or the other");
      for (const [host, issue] of started) {
        const claim = await claimOnForge(t, issue);
        assert.equal([claim?.words.host, claim?.tree, claim?.parents], [host, "4b825dc642cb6eb9a060e54bf8d69288fbee4904", 0], `#${issue}'s claim names ${host}, holds no files and has no parent`);
        const dispatched = (await comments(t, issue)).filter((c) => c.startsWith("robot-army dispatched"));
        assert.equal(dispatched.length, 1, `#${issue} was told of one dispatch`);
        assert.ok(dispatched[0].includes(`- Host: ${host}`), `#${issue}'s dispatch comment names ${host}`);
        // The other host waits for it, saying who holds it.
        const loser = host === "testhost" ? b : a;
        const waiting = loser.outcomes.find((o) => o.issue === issue)!;
        assert.is(waiting.result, "waiting");
        assert.match(waiting.reason!, `claimed by ${host} on GitHub (refs/robot-army/claims/${issue} in demo/widgets)`);
      }
      // Asked again, each host starts nothing: the other's claims stand, its own items run. A claim GitHub showed
      // less than a lease ago costs no request, and none of the gate's questions.
      const sent = () => [first.github.requestsSent(), second.github.requestsSent()];
      const spent = (before: number[]) => sent().map((n, i) => n - before[i]);
      let before = sent();
      const [again, againOther] = [await dispatchReady(first), await dispatchReady(second)];
      assert.equal([...again.outcomes, ...againOther.outcomes].filter((o) => o.result === "active"), []);
      const waitingFor = (outcomes: typeof again.outcomes) => outcomes.filter((o) => /^claimed by/.test(o.reason ?? "")).length;
      assert.equal(spent(before), [0, 0]);
      assert.is(waitingFor(again.outcomes) + waitingFor(againOther.outcomes), 3, "every issue waits on the host that did not start it");
      // A lease later, with no listing since, each item waiting for the other host costs one read of its claim's reference.
      const later = new Date(Date.now() + 11 * 60_000).toISOString();
      before = sent();
      const [late, lateOther] = await atTimeAsync(later, async () => [await dispatchReady(first), await dispatchReady(second)]);
      assert.equal(spent(before), [waitingFor(late.outcomes), waitingFor(lateOther.outcomes)]);
      for (const issue of [1, 2, 3]) {
        assert.is(queryAudit(store, { kind: "claim.create", item: issue }).filter((r) => r.phase === "intent").length + queryAudit(second.store, { kind: "claim.create", item: issue }).filter((r) => r.phase === "intent").length, 2, `#${issue}: one claim asked by each host, none again`);
      }
    });
  }));

test("a claim is held in a commit naming host, item, session and action; a host that holds it starts in it again without a new claim, and a finished item's claim is released for the next host", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const { outcomes } = await dispatchReady(deps);
    assert.is(outcomes[0].result, "active");
    const claim = await claimOnForge(t, 1);
    const [intent, outcome] = queryAudit(store, { kind: "claim.create", item: 1 });
    assert.equal([intent.phase, intent.body.ref, intent.body.host, intent.body.purpose], ["intent", "refs/robot-army/claims/1", "testhost", "dispatch"]);
    assert.equal([outcome.phase, outcome.body.ok, outcome.body.created, outcome.body.sha], ["outcome", true, true, claim!.sha]);
    assert.equal([claim!.words.host, claim!.words.item, claim!.words.action, claim!.words.purpose], ["testhost", 1, intent.actionId, "dispatch"]);
    assert.is(claim!.words.session, outcomes[0].session!.id, "the claim names the session it was made for");
    assert.equal([claimOf(store, 1)?.sha, claimOf(store, 1)?.mine], [claim!.sha, true]);

    // A copy of this state taken now holds the same record of the claim.
    const copyDir = join(t.tmp, "state-copy");
    mkdirSync(copyDir);
    assert.ok(await copyStore(deps.stateDir, join(copyDir, STORE_FILE)));

    // Held here and still at this store's commit: a restart moves it on, to a child of it, by fast-forward.
    assert.equal(await takeClaim(deps, getItem(store, 1)!, "restart"), { held: true });
    const moved = await claimOnForge(t, 1);
    const { data: movedCommit } = await t.owner.rest.git.getCommit({ owner: "demo", repo: "widgets", commit_sha: moved!.sha });
    assert.equal(movedCommit.parents.map((p) => p.sha), [claim!.sha], "the first claim is its parent");
    const [, , renewal, renewed] = queryAudit(store, { kind: "claim.create", item: 1 });
    assert.equal([renewal.body.from, renewal.body.purpose, renewed.body.moved, renewed.body.sha], [claim!.sha, "restart", true, moved!.sha]);
    assert.equal([moved!.words.action, moved!.words.purpose, claimOf(store, 1)?.sha], [renewal.actionId, "restart", moved!.sha]);

    // The copy, whose record names the first commit, cannot start it: the claim moved on, by an action it never wrote.
    const copy = await openStore(copyDir);
    try {
      const refused = await takeClaim({ ...deps, store: copy }, getItem(copy, 1)!, "resume");
      assert.equal(refused.held, false);
      assert.match((refused as { reason: string }).reason, "claimed by testhost (this host's name, but not this state: another robot-army, or an earlier copy of this one) on GitHub");
    } finally {
      copy.close();
    }
    assert.is((await claimOnForge(t, 1))?.sha, moved!.sha, "the copy moved nothing");

    // Nothing to release while the item is not finished.
    assert.equal(await releaseClaims(deps), []);
    transition(store, 1, "abandoned", { reason: "the owner gave up on it" });
    assert.equal(await releaseClaims(deps), [{ item: 1, repo: "demo/widgets", issue: 1, result: "released" }]);
    assert.is(await claimOnForge(t, 1), null, "the reference is gone from GitHub");
    const released = queryAudit(store, { kind: "claim.release", item: 1 });
    assert.equal(released.map((r) => [r.phase, r.body.ok ?? null]), [["intent", null], ["outcome", true]]);
    assert.equal(await releaseClaims(deps), [], "released once");

    // The issue is free for another host now.
    await withSecondHost(t, deps, "otherhost", async (second) => {
      assert.equal(await takeClaim(second, getItem(second.store, 1)!, "dispatch"), { held: true });
      assert.is((await claimOnForge(t, 1))?.words.host, "otherhost");
      // ...and this host, which released it, is refused: the claim is the other host's.
      const refused = await takeClaim(deps, getItem(store, 1)!, "resume");
      assert.equal(refused.held, false);
      assert.match((refused as { reason: string }).reason, /^claimed by otherhost on GitHub/);
      assert.equal([claimOf(store, 1)?.mine, claimOf(store, 1)?.host], [false, "otherhost"]);
    });
  }));

test("a claim whose release found another host's claim in its place leaves that claim alone", () =>
  withWorld(template, async ({ t, store, deps }) => {
    await dispatchReady(deps);
    const mine = (await claimOnForge(t, 1))!.sha;
    // Another host's claim replaces this one (as a takeover would).
    const { data: other } = await t.owner.rest.git.createCommit({ owner: "demo", repo: "widgets", message: "robot-army claim demo/widgets#1\n\nhost: elsewhere\nitem: 9\naction: x\npurpose: dispatch\nat: 2026-01-15T10:00:00Z\n", tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", parents: [mine] });
    await t.owner.rest.git.updateRef({ owner: "demo", repo: "widgets", ref: "robot-army/claims/1", sha: other.sha });
    transition(store, 1, "abandoned", { reason: "the owner gave up on it" });
    assert.equal(await releaseClaims(deps), [{ item: 1, repo: "demo/widgets", issue: 1, result: "not ours" }]);
    assert.is((await claimOnForge(t, 1))?.sha, other.sha, "the other host's claim stands");
    assert.equal(queryAudit(store, { kind: "claim.release", item: 1 }), [], "nothing was deleted");
  }));

test("a claim a crash cut short before its outcome is found by its action and used; one under this host's name that this store never made is not", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const item = getItem(store, 1)!;
    // The intent this store wrote before it crashed, and the claim its request made on GitHub.
    appendAudit(store, { kind: "claim.create", phase: "intent", actionId: "cut-short-claim", repo: "demo/widgets", item: 1, body: { issue: 1, ref: claimRef(1), host: "testhost", purpose: "dispatch" } });
    const message = (action: string) => `robot-army claim demo/widgets#1\n\nhost: testhost\nitem: 1\naction: ${action}\npurpose: dispatch\nat: 2026-01-15T10:00:00Z\n`;
    const { data: commit } = await t.owner.rest.git.createCommit({ owner: "demo", repo: "widgets", message: message("cut-short-claim"), tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", parents: [] });
    await t.owner.rest.git.createRef({ owner: "demo", repo: "widgets", ref: claimRef(1), sha: commit.sha });
    assert.equal(await takeClaim(deps, item, "dispatch"), { held: true });
    assert.equal([claimOf(store, 1)?.mine, claimOf(store, 1)?.action_id, claimOf(store, 1)?.sha], [true, "cut-short-claim", commit.sha]);

    // Issue 2: a claim under this very host name, whose action this store never wrote (a restored copy of the state, or a second robot-army).
    const { data: stale } = await t.owner.rest.git.createCommit({ owner: "demo", repo: "widgets", message: message("not-in-this-store").replace("#1", "#2").replace("item: 1", "item: 2"), tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", parents: [] });
    await t.owner.rest.git.createRef({ owner: "demo", repo: "widgets", ref: claimRef(2), sha: stale.sha });
    const refused = await takeClaim(deps, getItem(store, 2)!, "dispatch");
    assert.equal(refused.held, false);
    assert.match((refused as { reason: string }).reason, "claimed by testhost (this host's name, but not this state: another robot-army, or an earlier copy of this one) on GitHub");
  }));

test("a claim made just before a crash, with no start after it, is found by the sweep, kept on record and released once its item is finished", () =>
  withWorld(template, async ({ t, store, deps }) => {
    // The crashed process's intent (its writer gone), and the claim its request made on GitHub; no row, no outcome.
    atTime("2026-01-15T10:00:00Z", () => appendAudit(store, {
      kind: "claim.create", phase: "intent", actionId: "cut-before-row", repo: "demo/widgets", item: 1,
      body: { issue: 1, ref: claimRef(1), host: "testhost", purpose: "dispatch", writer: { pid: exitedPid(), started_at: null, start_id: null } },
    }));
    const message = "robot-army claim demo/widgets#1\n\nhost: testhost\nitem: 1\naction: cut-before-row\npurpose: dispatch\nat: 2026-01-15T10:00:00Z\n";
    const { data: commit } = await t.owner.rest.git.createCommit({ owner: "demo", repo: "widgets", message, tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", parents: [] });
    await t.owner.rest.git.createRef({ owner: "demo", repo: "widgets", ref: claimRef(1), sha: commit.sha });
    assert.is(claimOf(store, 1), undefined);
    const sweep = await atTimeAsync("2026-01-15T10:05:00Z", () => sweepUnfinished({ store, config: deps.config, sessionRoot: deps.sessionRoot, github: deps.github }));
    assert.is(sweep.settled, 1);
    assert.equal([claimOf(store, 1)?.mine, claimOf(store, 1)?.sha, claimOf(store, 1)?.action_id], [true, commit.sha, "cut-before-row"]);
    transition(store, 1, "abandoned", { reason: "the owner gave up on it" });
    assert.equal(await releaseClaims(deps), [{ item: 1, repo: "demo/widgets", issue: 1, result: "released" }]);
    assert.is(await claimOnForge(t, 1), null, "not held for ever by nobody");
  }));

/** A claim on issue 1 made on GitHub as a host named `host` makes it, with no worker behind it; its commit. */
async function claimAs(t: TestForge, host: string, issue = 1): Promise<string> {
  const message = `robot-army claim demo/widgets#${issue}\n\nhost: ${host}\nitem: 9\naction: ${host}-action\npurpose: dispatch\nat: 2026-01-15T10:00:00Z\n`;
  const { data } = await t.owner.rest.git.createCommit({ owner: "demo", repo: "widgets", message, tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", parents: [] });
  await t.owner.rest.git.createRef({ owner: "demo", repo: "widgets", ref: claimRef(issue), sha: data.sha });
  return data.sha;
}

/** A heartbeat for `host` as its robot-army writes one (created once; it then stands still: the host is gone). */
async function heartbeatAs(t: TestForge, host: string): Promise<void> {
  const { data } = await t.owner.rest.git.createCommit({ owner: "demo", repo: "widgets", message: `robot-army heartbeat ${host}\n\nhost: ${host}\naction: b\nat: c\n`, tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", parents: [] });
  await t.owner.rest.git.createRef({ owner: "demo", repo: "widgets", ref: `refs/robot-army/hosts/${host}`, sha: data.sha });
}

test("a gone host's claim, with nothing of it pushed, is taken over by a fast-forward once its heartbeat stood still past the lease, and the issue is told which host it replaces", () =>
  withWorld(template, async ({ t, store, deps: narrow }) => {
    const deps = { ...narrow, config: roomy(narrow.config) };
    const stale = await claimAs(t, "deadhost");
    await heartbeatAs(t, "deadhost");
    const hb = { ...deps, report: () => {} };
    await atTimeAsync("2026-01-15T10:00:00Z", async () => {
      await heartbeatPass(hb);
      const { outcomes } = await dispatchReady(deps);
      assert.match(outcomes.find((o) => o.issue === 1)!.reason!, /^claimed by deadhost on GitHub/);
    });
    // Within the lease (10m) deadhost is not gone yet, however long its heartbeat has stood still elsewhere.
    await atTimeAsync("2026-01-15T10:09:00Z", async () => {
      await heartbeatPass(hb);
      const { outcomes } = await dispatchReady(deps);
      assert.match(outcomes.find((o) => o.issue === 1)!.reason!, /^claimed by deadhost on GitHub/);
    });
    // At 10:12 this machine last listed it at 10:09: standing still for 9 minutes as far as it knows, not past the lease.
    await atTimeAsync("2026-01-15T10:12:00Z", async () => {
      await heartbeatPass(hb);
      const { outcomes } = await dispatchReady(deps);
      assert.match(outcomes.find((o) => o.issue === 1)!.reason!, /^claimed by deadhost on GitHub/);
    });
    await atTimeAsync("2026-01-15T10:13:00Z", async () => {
      await heartbeatPass(hb);
      const { outcomes } = await dispatchReady(deps);
      assert.is(outcomes.find((o) => o.issue === 1)?.result, "active", outcomes.find((o) => o.issue === 1)?.reason ?? "");
    });
    const claim = await claimOnForge(t, 1);
    const { data: commit } = await t.owner.rest.git.getCommit({ owner: "demo", repo: "widgets", commit_sha: claim!.sha });
    assert.equal([claim!.words.host, claim!.words.purpose, commit.parents.map((p) => p.sha)], ["testhost", "takeover", [stale]], "moved on from the gone host's commit");
    const said = await comments(t, 1);
    assert.ok(said.includes("robot-army on testhost takes this issue over from deadhost, whose heartbeat stopped for longer than its lease; nothing of deadhost's was pushed for it."), said.join("\n---\n"));
    assert.is(said.filter((c) => c.startsWith("robot-army dispatched")).length, 1);
    const [intent] = queryAudit(store, { kind: "claim.create", item: 1 }).filter((r) => r.body.purpose === "takeover");
    assert.equal([intent.body.from, intent.body.replaces], [stale, "deadhost"]);
  }));

test("another host's claims are confirmed by the heartbeat's one listing, so dispatch asks nothing of them; one released there is read again and started here", () =>
  withWorld(template, async ({ t, deps: narrow }) => {
    const deps = { ...narrow, config: roomy(narrow.config) };
    await claimAs(t, "laptop", 1);
    await claimAs(t, "laptop", 2);
    await heartbeatAs(t, "laptop");
    const hb = { ...deps, report: () => {} };
    const reads = async () => {
      const { by_route } = (await t.hook("GET", "/_forge/stats")).body as { by_route: Record<string, { requests: number }> };
      return ["git/ref/{ref+}", "git/matching-refs/{ref+}", "git/commits/{commit_sha}"].map((route) => by_route[`GET /repos/{owner}/{repo}/${route}`]?.requests ?? 0);
    };
    const waits = (outcomes: Array<{ issue: number; reason: string | null }>) => outcomes.filter((o) => /^claimed by laptop/.test(o.reason ?? "")).map((o) => o.issue);
    await atTimeAsync("2026-01-15T10:00:00Z", async () => assert.equal(waits((await dispatchReady(deps)).outcomes), [1, 2]));
    // A lease later, the heartbeat lists every claim in one request: both still stand, and dispatch reads neither.
    await atTimeAsync("2026-01-15T10:11:00Z", () => heartbeatPass(hb));
    await t.hook("POST", "/_forge/reset-stats");
    await atTimeAsync("2026-01-15T10:12:00Z", async () => assert.equal(waits((await dispatchReady(deps)).outcomes), [1, 2]));
    assert.equal(await reads(), [0, 0, 0], "no claim read, nothing listed, no heartbeat read of a host alive");
    // A confirmation ahead of this clock (the clock stepped back since) is not taken for fresh: the claim is read.
    await atTimeAsync("2026-01-15T10:00:00Z", async () => assert.equal(waits((await dispatchReady(deps)).outcomes), [1, 2]));
    assert.equal((await reads())[0], 2, "both claims read again");
    // laptop releases #2. The next listing marks it to be read again; the pass after reads it alone, and starts it here.
    await t.owner.rest.git.deleteRef({ owner: "demo", repo: "widgets", ref: claimRef(2).replace(/^refs\//, "") });
    await atTimeAsync("2026-01-15T10:15:00Z", () => heartbeatPass(hb));
    await t.hook("POST", "/_forge/reset-stats");
    const { outcomes } = await atTimeAsync("2026-01-15T10:16:00Z", () => dispatchReady(deps));
    assert.equal([waits(outcomes), outcomes.find((o) => o.issue === 2)?.result], [[1], "active"]);
    assert.is((await claimOnForge(t, 2))!.words.host, "testhost");
    assert.ok((await reads())[0] >= 1, "#2's claim was read again");
  }));

test("a takeover comment GitHub refuses is on record as failed, and the start goes on: the claim taken over is used", () =>
  withWorld(template, async ({ t, store, deps: narrow }) => {
    const deps = { ...narrow, config: roomy(narrow.config) };
    await claimAs(t, "deadhost");
    await heartbeatAs(t, "deadhost");
    const hb = { ...deps, report: () => {} };
    await atTimeAsync("2026-01-15T10:00:00Z", async () => {
      await heartbeatPass(hb);
      await dispatchReady(deps);
    });
    await t.hook("POST", "/_forge/faults", { method: "POST", path: "/repos/demo/widgets/issues/1/comments", status: 422 });
    await atTimeAsync("2026-01-15T10:11:00Z", async () => {
      await heartbeatPass(hb);
      const { outcomes } = await dispatchReady(deps);
      assert.equal(outcomes.map((o) => [o.issue, o.result]), [[1, "active"]]);
    });
    const said = await comments(t, 1);
    assert.equal([said.filter((c) => c.includes("takes this issue over")).length, said.filter((c) => c.startsWith("robot-army dispatched")).length], [0, 1], "the dispatch comment, not the refused one");
    const records = queryAudit(store, { kind: "github.comment", item: 1 });
    const intent = records.find((r) => r.body.purpose === "takeover")!;
    assert.equal(records.filter((r) => r.actionId === intent.actionId).map((r) => [r.phase, r.body.ok ?? null]), [["intent", null], ["outcome", false]]);
    assert.is((await claimOnForge(t, 1))!.words.host, "testhost");
  }));

test("a gone host whose branch of the issue is on GitHub is not taken over: the item waits, interrupted on that host, for the owner", () =>
  withWorld(template, async ({ t, deps }) => {
    await claimAs(t, "deadhost");
    await heartbeatAs(t, "deadhost");
    const clone = deps.config.repos["demo/widgets"].path;
    git(clone, "push", "--quiet", "origin", "HEAD:refs/heads/robot-army/issue-1-add-a-verbose-flag");
    const hb = { ...deps, report: () => {} };
    await atTimeAsync("2026-01-15T10:00:00Z", async () => {
      await heartbeatPass(hb);
      await dispatchReady(deps);
    });
    await atTimeAsync("2026-01-15T10:11:00Z", async () => {
      await heartbeatPass(hb);
      const { outcomes } = await dispatchReady(deps);
      const one = outcomes.find((o) => o.issue === 1)!;
      assert.is(one.result, "waiting");
      assert.is(one.reason, 'interrupted on deadhost: its heartbeat stopped at 2026-01-15T10:00:00Z, and the branch robot-army/issue-1-add-a-verbose-flag is on GitHub with what it pushed; resume that work by hand, or "robot-army unclaim 1" to start afresh here');
    });
    assert.is((await claimOnForge(t, 1))?.words.host, "deadhost", "its claim stands");
  }));

test("a partition: the host cut off past the lease keeps its running worker's issue (interrupted on it, for the owner) and loses a claim with no worker behind it; back, it kills nothing, starts nothing twice, and says so", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const events: string[] = [];
    const report = (e: { line: string }) => void events.push(e.line);
    await withSecondHost(t, deps, "otherhost", async (narrowSecond) => {
      const second = { ...narrowSecond, config: roomy(narrowSecond.config) };
      // testhost starts issue 1 (its one slot) and holds issue 2's claim with no worker yet; it beats, naming issue 1.
      await atTimeAsync("2026-01-15T10:00:00Z", async () => {
        assert.is((await dispatchReady(deps)).outcomes.find((o) => o.issue === 1)?.result, "active");
        assert.equal(await takeClaim(deps, getItem(store, 2)!, "dispatch"), { held: true });
        await heartbeatPass({ ...deps, report });
        await heartbeatPass({ ...second, report });
        const seen = (await dispatchReady(second)).outcomes;
        assert.match(seen.find((o) => o.issue === 1)!.reason!, /^claimed by testhost/);
        assert.match(seen.find((o) => o.issue === 2)!.reason!, /^claimed by testhost/);
      });
      // testhost is cut off: its heartbeat does not move. Past the lease otherhost takes over issue 2, never issue 1.
      await atTimeAsync("2026-01-15T10:11:00Z", async () => {
        await heartbeatPass({ ...second, report });
        const { outcomes } = await dispatchReady(second);
        assert.is(outcomes.find((o) => o.issue === 1)?.reason, 'interrupted on testhost: its heartbeat stopped at 2026-01-15T10:00:00Z, and its last heartbeat names a worker of this issue there; resume that work by hand, or "robot-army unclaim 1" to start afresh here');
        assert.is(outcomes.find((o) => o.issue === 2)?.result, "active");
      });
      // testhost is back: it finds issue 2's claim taken, keeps issue 1's and its worker, and starts nothing for issue 2.
      await atTimeAsync("2026-01-15T10:12:00Z", async () => {
        assert.equal(await heartbeatPass({ ...deps, report }), { beats: 1, lost: 1, failed: 0 });
        const { outcomes } = await dispatchReady(deps);
        assert.match(outcomes.find((o) => o.issue === 2)?.reason ?? "", /^claimed by otherhost/);
      });
      assert.is(getItem(store, 1)!.state, "active");
      const mine = listRecords(deps.sessionRoot).filter((r) => r.tags.ra_item === "1");
      assert.ok(mine.length === 1 && sessionState(deps.sessionRoot, mine[0]) === "running", "its worker still runs: nothing was killed");
      assert.ok(events.includes("anomaly: claim on demo/widgets#2 (item 2) lost: it is now held by otherhost"), events.join("\n"));
      assert.equal((await restartRefused(deps, store)).held, true, "issue 1's claim is still this host's");
      for (const issue of [1, 2]) assert.is((await comments(t, issue)).filter((c) => c.startsWith("robot-army dispatched")).length, 1, `#${issue} started once`);
    });
  }));

/** What a restart of item 1 would get of its claim (moving it on when this host holds it). */
function restartRefused(deps: DispatchDeps, store: DispatchDeps["store"]) {
  return takeClaim(deps, getItem(store, 1)!, "restart");
}

test("two hosts taking over the same gone host's claim at the same moment: exactly one wins, every time", () =>
  withWorld(template, async ({ t, store, deps }) => {
    await withSecondHost(t, deps, "otherhost", async (second) => {
      for (let round = 1; round <= 10; round++) {
        const stale = await claimAs(t, "deadhost");
        // Each host has seen the gone host's claim (and is refused it).
        for (const host of [deps, second]) assert.equal((await takeClaim(host, getItem(host.store, 1)!, "dispatch")).held, false);
        const answers = await Promise.all([deps, second].map((host) => takeClaim(host, getItem(host.store, 1)!, "dispatch", { takeover: { from: stale, host: "deadhost" } })));
        assert.equal(answers.filter((a) => a.held).length, 1, `round ${round}: one winner`);
        const winner = answers[0].held ? "testhost" : "otherhost";
        assert.is((await claimOnForge(t, 1))?.words.host, winner);
        const loser = answers[0].held ? answers[1] : answers[0];
        assert.match((loser as { reason: string }).reason, `claimed by ${winner} on GitHub`);
        await t.owner.rest.git.deleteRef({ owner: "demo", repo: "widgets", ref: "robot-army/claims/1" });
      }
      void store;
    });
  }));

test("below live a claim is simulated: audited as such, nothing written to GitHub, no claim kept", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const effects = wireEffects("no-remote", { github: deps.effects.github });
    assert.equal(await takeClaim({ ...deps, effects }, getItem(store, 1)!, "dispatch"), { held: true });
    const [intent, outcome] = queryAudit(store, { kind: "claim.create", item: 1 });
    assert.equal([intent.simulated, outcome.simulated, outcome.body.ok], [true, true, true]);
    assert.is(await claimOnForge(t, 1), null);
    assert.is(claimOf(store, 1), undefined);
  }));

test("when GitHub cannot be asked for the claim the start waits, saying why", () =>
  withWorld(template, async ({ store, deps }) => {
    const unreachable = { ...deps.github, readRef: async () => { throw new Error("connect ECONNREFUSED 127.0.0.1:9"); } };
    const writer = { ...deps.effects.github, createClaim: async () => { throw new Error("connect ECONNREFUSED 127.0.0.1:9"); } };
    const { outcomes } = await dispatchReady({ ...deps, github: unreachable, effects: { ...deps.effects, github: writer } });
    assert.equal(outcomes[0].result, "waiting");
    assert.match(outcomes[0].reason!, "its claim on GitHub could not be made or read (connect ECONNREFUSED 127.0.0.1:9); the start waits until it can be");
    assert.is(getItem(store, 1)!.state, "ready");
    assert.equal(listRecords(deps.sessionRoot), [], "nothing was started");
  }));

test.run();
