import { test } from "uvu";
import * as assert from "uvu/assert";
import { wireEffects } from "../effects.ts";
import type { DaemonEvent } from "../events.ts";
import { listRecords } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import { listAnomalies } from "../store/anomalies.ts";
import { appendAudit, queryAudit } from "../store/audit.ts";
import { atTimeAsync } from "../testing/items.ts";
import type { TestForge } from "../testing/forge.ts";
import { verbTemplate, withWorld } from "../testing/verbs.ts";
import { dispatchReady } from "../dispatch/dispatch.ts";
import { claimOf, claimRef, takeClaim } from "../work-items/issue-claims.ts";
import { getItem } from "../work-items/queries.ts";
import { heartbeatPass, hostRef, hostsSeen } from "./host-heartbeats.ts";
import { sweepUnfinished } from "./unfinished.ts";
import { exitedPid } from "../testing/fixtures.ts";
import type { HeartbeatDeps } from "./host-heartbeats.ts";

const template = verbTemplate();
test.after(() => template.remove());

const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const repo = { owner: "demo", repo: "widgets" };

async function refSha(t: TestForge, ref: string): Promise<string | null> {
  const { data } = await t.owner.rest.git.listMatchingRefs({ ...repo, ref: ref.replace(/^refs\//, "") });
  return data.find((r) => r.ref === ref)?.object.sha ?? null;
}

/** Another host's heartbeat written as its robot-army writes it: created, or moved on by a fast-forward. */
async function otherBeat(t: TestForge, host: string): Promise<string> {
  const from = await refSha(t, hostRef(host));
  const { data } = await t.owner.rest.git.createCommit({ ...repo, message: `robot-army heartbeat ${host}\n\nhost: ${host}\naction: x\nat: y\n`, tree: EMPTY_TREE, parents: from ? [from] : [] });
  if (from) await t.owner.rest.git.updateRef({ ...repo, ref: hostRef(host).replace(/^refs\//, ""), sha: data.sha });
  else await t.owner.rest.git.createRef({ ...repo, ref: hostRef(host), sha: data.sha });
  return data.sha;
}

test("the heartbeat is advanced by a fast-forward every third of the lease, and other hosts are judged gone by this machine's clock alone", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const events: DaemonEvent[] = [];
    const hb: HeartbeatDeps = { ...deps, report: (e) => void events.push(e) };
    await otherBeat(t, "laptop");
    await otherBeat(t, "desktop");
    const first = await atTimeAsync("2026-01-15T10:00:00Z", () => heartbeatPass(hb));
    assert.equal(first, { beats: 1, lost: 0, failed: 0 });
    const one = await refSha(t, hostRef("testhost"));
    assert.ok(one, "this host's heartbeat reference was made");
    const { data: commit } = await t.owner.rest.git.getCommit({ ...repo, commit_sha: one! });
    assert.equal([commit.tree.sha, commit.parents.length], [EMPTY_TREE, 0]);
    assert.match(commit.message, /^robot-army heartbeat testhost\n\nhost: testhost\naction: [0-9a-f-]{36}\nat: 2026-01-15T10:00:00Z\nlease_ms: 600000\nworking: -\n$/);
    assert.equal(queryAudit(store, { kind: "host.heartbeat" }).map((r) => [r.phase, r.body.ok ?? null]), [["intent", null], ["outcome", true]]);

    // Within a third of the lease (10m by default) nothing is asked or written.
    const sent = deps.github.requestsSent();
    assert.equal(await atTimeAsync("2026-01-15T10:03:00Z", () => heartbeatPass(hb)), { beats: 0, lost: 0, failed: 0 });
    assert.is(deps.github.requestsSent(), sent);

    // laptop beats on, desktop stops. Past the interval this host's heartbeat moves on to a child of the last.
    await otherBeat(t, "laptop");
    await atTimeAsync("2026-01-15T10:04:00Z", () => heartbeatPass(hb));
    const two = await refSha(t, hostRef("testhost"));
    const { data: next } = await t.owner.rest.git.getCommit({ ...repo, commit_sha: two! });
    assert.equal(next.parents.map((p) => p.sha), [one]);
    const seen = () => hostsSeen(store, deps.config, "testhost").map((h) => [h.host, h.this_host, h.moved_at, h.gone]);
    assert.equal(seen(), [
      ["testhost", true, "2026-01-15T10:04:00Z", false],
      ["desktop", false, "2026-01-15T10:00:00Z", false],
      ["laptop", false, "2026-01-15T10:04:00Z", false],
    ], "listed standing still for 4 minutes: not past the lease");
    // Listed again past the lease (10m): desktop stood still since 10:00 as this machine saw it, laptop moved.
    await otherBeat(t, "laptop");
    await atTimeAsync("2026-01-15T10:11:00Z", () => heartbeatPass(hb));
    assert.equal(seen(), [
      ["testhost", true, "2026-01-15T10:11:00Z", false],
      ["desktop", false, "2026-01-15T10:00:00Z", true],
      ["laptop", false, "2026-01-15T10:11:00Z", false],
    ], "desktop's heartbeat stood still from 10:00 to 10:11 as this machine listed it: gone");
    assert.equal(events, []);
  }));

test("a claim another host moved is lost: its worker here is left running, nothing more starts for it, and the owner is told", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const events: DaemonEvent[] = [];
    const hb: HeartbeatDeps = { ...deps, report: (e) => void events.push(e) };
    await dispatchReady(deps);
    const mine = claimOf(store, 1)!;
    // Another host takes the claim over: a child of this host's commit, moved by fast-forward.
    const { data: taken } = await t.owner.rest.git.createCommit({ ...repo, message: "robot-army claim demo/widgets#1\n\nhost: laptop\nitem: 5\naction: takeover\npurpose: dispatch\nat: z\n", tree: EMPTY_TREE, parents: [mine.sha] });
    await t.owner.rest.git.updateRef({ ...repo, ref: "robot-army/claims/1", sha: taken.sha });
    assert.equal(await heartbeatPass(hb), { beats: 1, lost: 1, failed: 0 });
    assert.equal([claimOf(store, 1)?.mine, claimOf(store, 1)?.host, claimOf(store, 1)?.sha], [false, "laptop", taken.sha]);
    const [lost] = listAnomalies(store, { open: true }).filter((a) => a.kind === "claim_lost");
    assert.is(lost.detail, "the claim on demo/widgets#1 (item 1) was lost: it is now held by laptop; its worker here, if any, is left running, and nothing more is started for it here");
    assert.equal(events.map((e) => e.line), ["anomaly: claim on demo/widgets#1 (item 1) lost: it is now held by laptop"]);
    assert.ok(listRecords(deps.sessionRoot).some((r) => sessionState(deps.sessionRoot, r) === "running"), "the worker still runs: nothing was killed");
    assert.is(getItem(store, 1)!.state, "active");
    const again = await takeClaim(deps, getItem(store, 1)!, "restart");
    assert.equal(again.held, false, "nothing more starts for it here");
    assert.is(await refSha(t, claimRef(1)), taken.sha, "the other host's claim stands");
  }));

test("a heartbeat of this host's name that another writer advanced is told as two daemons sharing the name; one this store moved just before a crash is not", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const events: DaemonEvent[] = [];
    const hb: HeartbeatDeps = { ...deps, report: (e) => void events.push(e) };
    await atTimeAsync("2026-01-15T10:00:00Z", () => heartbeatPass(hb));
    // This store moved its heartbeat and crashed before keeping the new commit on record: its intent is here.
    appendAudit(store, { kind: "host.heartbeat", phase: "intent", actionId: "beat-before-crash", repo: "demo/widgets", body: { ref: hostRef("testhost"), host: "testhost" } });
    const from = await refSha(t, hostRef("testhost"));
    const { data: own } = await t.owner.rest.git.createCommit({ ...repo, message: "robot-army heartbeat testhost\n\nhost: testhost\naction: beat-before-crash\nat: y\n", tree: EMPTY_TREE, parents: [from!] });
    await t.owner.rest.git.updateRef({ ...repo, ref: hostRef("testhost").replace(/^refs\//, ""), sha: own.sha });
    await atTimeAsync("2026-01-15T10:04:00Z", () => heartbeatPass(hb));
    assert.equal(listAnomalies(store, { open: true }), [], "its own beat");
    // Another daemon under this name moves it on.
    await otherBeat(t, "testhost");
    await atTimeAsync("2026-01-15T10:08:00Z", () => heartbeatPass(hb));
    assert.equal(listAnomalies(store, { open: true }).map((a) => [a.kind, a.detail]), [[
      "host_name_shared",
      "the heartbeat of host testhost in demo/widgets was advanced by another writer: two robot-army daemons use this host's name; give each machine its own ([daemon] host)",
    ]]);
    assert.equal(events.map((e) => e.line), ["anomaly: another robot-army advances this host's heartbeat (testhost) in demo/widgets"]);
  }));

test("a heartbeat a crash cut short after it moved is settled made, even once later beats moved it on", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const hb: HeartbeatDeps = { ...deps, report: () => {} };
    await atTimeAsync("2026-01-15T10:00:00Z", () => heartbeatPass(hb));
    const from = await refSha(t, hostRef("testhost"));
    // The crashed process's intent, and the beat its request made.
    await atTimeAsync("2026-01-15T10:04:00Z", async () => appendAudit(store, {
      kind: "host.heartbeat", phase: "intent", actionId: "cut-beat", repo: "demo/widgets",
      body: { ref: hostRef("testhost"), host: "testhost", from, writer: { pid: exitedPid(), started_at: null, start_id: null } },
    }));
    const { data: cut } = await t.owner.rest.git.createCommit({ ...repo, message: "robot-army heartbeat testhost\n\nhost: testhost\naction: cut-beat\nat: x\n", tree: EMPTY_TREE, parents: [from!] });
    await t.owner.rest.git.updateRef({ ...repo, ref: hostRef("testhost").replace(/^refs\//, ""), sha: cut.sha });
    // The restarted daemon beats on before the sweep may read it.
    await atTimeAsync("2026-01-15T10:08:00Z", () => heartbeatPass(hb));
    assert.not.equal(await refSha(t, hostRef("testhost")), cut.sha);
    const sweep = await atTimeAsync("2026-01-15T10:10:00Z", () => sweepUnfinished({ store, config: deps.config, sessionRoot: deps.sessionRoot, github: deps.github }));
    assert.is(sweep.settled, 1);
    const [outcome] = queryAudit(store, { kind: "host.heartbeat" }).filter((r) => r.actionId === "cut-beat" && r.phase === "outcome");
    assert.equal([outcome.body.ok, outcome.body.found, outcome.body.sha], [true, "made", cut.sha]);
    assert.equal(listAnomalies(store, { open: true }), [], "its own beat, not another writer's");
  }));

test("the rate limit all hosts spend: under a quarter left the heartbeat stretches to half the lease; under the floor it still beats, and claims are still taken, while every other call waits for the reset", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const hb: HeartbeatDeps = { ...deps, report: () => {} };
    // The other hosts of this user spent all but 1,000 of its 5,000 requests: this host learns it from its next answer.
    await t.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 1000 });
    assert.equal(await atTimeAsync("2026-01-15T10:00:00Z", () => heartbeatPass(hb)), { beats: 1, lost: 0, failed: 0 });
    // A third of the lease (3m20s) passed, not half (5m): a tight limit stretches the interval.
    assert.equal(await atTimeAsync("2026-01-15T10:04:00Z", () => heartbeatPass(hb)), { beats: 0, lost: 0, failed: 0 });
    assert.equal(await atTimeAsync("2026-01-15T10:05:00Z", () => heartbeatPass(hb)), { beats: 1, lost: 0, failed: 0 });

    // Under the floor (50 left): ordinary calls are deferred, nothing sent; the heartbeat and a claim spend the reserve.
    await t.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 20 });
    await atTimeAsync("2026-01-15T10:10:00Z", () => heartbeatPass(hb));
    assert.ok(deps.github.rateLimit()!.deferredUntil, "calls are deferred");
    const sent = deps.github.requestsSent();
    const deferred = await deps.github.getIssue("demo/widgets", 1).then(() => null, (e: Error) => e);
    assert.is(deferred?.name, "RateLimitDeferred");
    assert.is(deps.github.requestsSent(), sent, "an ordinary call sent nothing");
    const beat = await refSha(t, hostRef("testhost"));
    assert.equal(await atTimeAsync("2026-01-15T10:15:00Z", () => heartbeatPass(hb)), { beats: 1, lost: 0, failed: 0 });
    assert.not.equal(await refSha(t, hostRef("testhost")), beat, "the heartbeat moved on");
    const { held } = await takeClaim(deps, { ...getItem(store, 1)!, state: "ready" }, "dispatch");
    assert.ok(held, "the claim was taken");
    assert.is(await refSha(t, claimRef(1)), claimOf(store, 1)!.sha);

    // A used-up limit holds back the reserve too: GitHub would refuse it.
    await t.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 0 });
    await atTimeAsync("2026-01-15T10:20:00Z", () => heartbeatPass(hb));
    const spent = deps.github.requestsSent();
    assert.equal(await atTimeAsync("2026-01-15T10:25:00Z", () => heartbeatPass(hb)), { beats: 0, lost: 0, failed: 1 });
    assert.is(deps.github.requestsSent(), spent, "nothing sent once it is used up");
  }));

test("below live nothing is asked or written", () =>
  withWorld(template, async ({ t, deps }) => {
    const effects = wireEffects("no-remote", { github: deps.effects.github });
    const sent = deps.github.requestsSent();
    assert.equal(await heartbeatPass({ ...deps, effects, report: () => {} }), { beats: 0, lost: 0, failed: 0 });
    assert.is(deps.github.requestsSent(), sent);
    assert.is(await refSha(t, hostRef("testhost")), null);
  }));

test.run();
