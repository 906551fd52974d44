import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { listRecords } from "../../sessions/records.ts";
import { feedbackOf, keepFeedback } from "../../intake/feedback.ts";
import { queryAudit } from "../../store/audit.ts";
import { rejects } from "../../testing/rejects.ts";
import { getItem } from "../../work-items/queries.ts";
import { hold, pause } from "../controls.ts";
import { dispatchReady } from "../dispatch.ts";
import { sessionsOf } from "../../work-items/sessions.ts";
import { relaunchItem, RelaunchFailedError } from "./relaunch.ts";
import { relaunchCommand } from "./relaunch-command.ts";
import { PreconditionError } from "../../errors.ts";
import { findRepo, loadForgeData, saveForgeData } from "../../forge/state.ts";
import { comments, stopAll, verbTemplate, withWorld } from "../../testing/verbs.ts";

const template = verbTemplate();
const restart = relaunchCommand("restart", "Restart", "");
test.after(() => template.remove());

test("resume starts the worker with its resume option in the same worktree; the comment says attempt 2 and Continues", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const first = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    const outcome = await relaunchItem(deps, 1, { how: "resume" });
    assert.equal([outcome.result, outcome.attempt, outcome.earlier], ["active", 2, first.id]);
    const session = outcome.session!;
    assert.equal([session.name, session.worktree, session.branch], ["ra-widgets-1-2", first.worktree, first.branch]);
    assert.is(getItem(store, 1)!.state, "active");
    const record = listRecords(deps.sessionRoot).find((r) => r.id === session.id)!;
    assert.equal(record.args.slice(-1), ["--resumed"]);
    // The launch's intent keeps what the item's move to active records (the session it continues), so a worker adopted
    // after a crash cut this start short says it too, and the launcher's timeout, which a launch cut short is waited for.
    const launch = queryAudit(store, { kind: "session.launch", item: 1 }).filter((r) => r.phase === "intent").at(-1)!;
    assert.equal([launch.body.active_details, launch.body.settle_after_seconds], [{ earlier: first.id }, 15]);
    // The first session's row is closed from its own exit record, not left open for the daemon.
    assert.equal(sessionsOf(store, 1).map((r) => [r.attempt, r.end_reason]), [[1, "killed"], [2, null]]);
    // The claim on GitHub moved on to a commit naming the new session.
    const { data: claim } = await t.owner.rest.git.getRef({ owner: "demo", repo: "widgets", ref: "robot-army/claims/1" });
    const { data: commit } = await t.owner.rest.git.getCommit({ owner: "demo", repo: "widgets", commit_sha: claim.object.sha });
    assert.match(commit.message, `\nsession: ${session.id}\n`);
    const body = (await comments(t, 1)).find((c) => c.startsWith("robot-army reassigned"))!;
    assert.equal(body.split("\n"), [
      "robot-army reassigned this issue to a new session (attempt 2).", "",
      "- Host: testhost", "- Session: ra-widgets-1-2", `- Session id: ${session.id}`, `- Branch: ${first.branch}`, `- Worktree: ${first.worktree}`, "",
      `Continues: ${first.id}`, "That session's context was restored.",
    ]);
  }));

test("restart starts afresh without the resume option; the comment says Supersedes", () =>
  withWorld(template, async ({ t, deps }) => {
    const first = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    const outcome = await relaunchItem(deps, 1, { how: "restart" });
    const record = listRecords(deps.sessionRoot).find((r) => r.id === outcome.session!.id)!;
    assert.not.ok(record.args.includes("--resumed"));
    const body = (await comments(t, 1)).find((c) => c.startsWith("robot-army reassigned"))!;
    assert.equal(body.split("\n").slice(-2), [`Supersedes: ${first.id}`, "The new session starts without that session's context."]);
    assert.ok(body.includes("(attempt 2)"));
  }));

test("with no earlier session on record (a rebuilt database) it is attempt 1, as the comment says, and the name moves past the one on record", () =>
  withWorld(template, async ({ t, store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    store.statement("DELETE FROM sessions").run();
    const outcome = await relaunchItem(deps, 1, { how: "resume" });
    // The attempt counts the sessions on record (none), so it agrees with "no earlier session"; only the name moved on.
    assert.equal([outcome.attempt, outcome.earlier, outcome.session!.name], [1, null, "ra-widgets-1-2"]);
    assert.equal(sessionsOf(store, 1).map((row) => row.attempt), [1]);
    assert.ok(listRecords(deps.sessionRoot).some((r) => r.name === "ra-widgets-1"), "the old session's record is kept");
    const body = (await comments(t, 1)).find((c) => c.startsWith("robot-army reassigned"))!;
    assert.ok(body.includes("(attempt 1)"));
    assert.is(body.split("\n").at(-1), "No earlier session is on record; the worker was started with its resume option in the same worktree.");
    assert.not.ok(body.includes("Continues:"));
  }));

test("a headless worker's feedback is given in its next attempt's prompt, once: the launch carries it and it is marked given", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    keepFeedback(store, "demo/widgets", {
      item: 1, finished: false, source: "comment", github_id: "991", pull_request: null, author: "owner",
      what: "commented on issue #1", body: "Use the new API, please.", url: "https://forge.test/demo/widgets/issues/1#issuecomment-991", created_at: "2026-01-15T10:00:00Z",
    });
    const outcome = await relaunchItem(deps, 1, { how: "restart" });
    const record = listRecords(deps.sessionRoot).find((r) => r.id === outcome.session!.id)!;
    assert.ok(record.env.RA_PROMPT_FILE, "a fresh attempt is given its prompt");
    const prompt = readFileSync(record.env.RA_PROMPT_FILE, "utf8");
    assert.match(prompt, "## Feedback on this work");
    assert.match(prompt, "@owner commented on issue #1 (2026-01-15T10:00:00Z, https://forge.test/demo/widgets/issues/1#issuecomment-991):\n\n> Use the new API, please.");
    const [given] = feedbackOf(store, 1);
    assert.equal([given.delivered_how, given.delivered_session], ["prompt", outcome.session!.id]);
    const launch = queryAudit(store, { kind: "session.launch", item: 1 }).filter((r) => r.phase === "intent").at(-1)!;
    assert.is(given.delivery_action, launch.actionId, "carried by that launch");
    // The next attempt does not give it again.
    await stopAll(deps);
    await relaunchItem(deps, 1, { how: "restart" });
    const again = listRecords(deps.sessionRoot).at(-1)!;
    assert.not.match(readFileSync(again.env.RA_PROMPT_FILE, "utf8"), "## Feedback on this work");
  }));

test("resume and restart refuse while a live session works for the item, and change nothing", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    for (const how of ["resume", "restart"] as const) {
      await rejects(relaunchItem(deps, 1, { how, force: true }), Error, /ra-widgets-1.*still running/);
    }
    assert.is(getItem(store, 1)!.state, "active");
    assert.is(sessionsOf(store, 1).length, 1);
  }));

test("of two resumes racing on one item, one starts it and the other says another command is starting it", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    const results = await Promise.allSettled([relaunchItem(deps, 1, { how: "resume" }), relaunchItem(deps, 1, { how: "resume" })]);
    // Which of the two wins is the runtime's to schedule: exactly one starts it, the other refuses.
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    assert.equal([won.length, lost.length], [1, 1]);
    assert.is((won[0] as PromiseFulfilledResult<{ result: string }>).value.result, "active");
    const error = lost[0].reason;
    assert.instance(error, PreconditionError);
    assert.ok([
      "Work item 1 is being started by another command (it is dispatching); nothing was started",
      "Work item 1 was started by another command meanwhile (it is active); nothing was started",
    ].includes(error.message), error.message);
    assert.is(getItem(store, 1)!.state, "active");
    assert.equal(sessionsOf(store, 1).map((row) => row.attempt), [1, 2], "one new session, not two");
  }));

test("a resume whose checks passed before another command started the item refuses, and does not interrupt it", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    // The second waits at its last check (the repository's settings, asked live) until the first has run to the end.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const github = deps.github;
    const slow = Object.assign(Object.create(github), { getRepository: async (name: string) => (await released, github.getRepository(name)) });
    const second = relaunchItem({ ...deps, github: slow }, 1, { how: "restart" });
    const first = await relaunchItem(deps, 1, { how: "resume" });
    assert.is(first.result, "active");
    release();
    await rejects(second, PreconditionError, "Work item 1 was started by another command meanwhile (it is active); nothing was started");
    assert.is(getItem(store, 1)!.state, "active");
    assert.equal(sessionsOf(store, 1).map((row) => [row.attempt, row.ended_at === null]), [[1, false], [2, true]]);
  }));

test("resume and restart refuse, before any change, when the worker program is not there", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    const missing = { ...deps, config: { ...deps.config, worker: { ...deps.config.worker, binary: "/nonexistent-robot-army-test/agent" } } };
    for (const how of ["resume", "restart"] as const) {
      await rejects(relaunchItem(missing, 1, { how, force: true }), Error, /^Work item 1: the worker program \/nonexistent-robot-army-test\/agent does not exist \(worker\.binary\); nothing was started$/);
    }
    assert.is(getItem(store, 1)!.state, "active");
    assert.is(sessionsOf(store, 1).length, 1);
  }));

test("the pause and a hold refuse unless forced", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    pause(store, { reason: "lunch" });
    await rejects(relaunchItem(deps, 1, { how: "resume" }), Error, /paused.*--force/);
    store.statement("DELETE FROM controls").run();
    hold(store, { item: 1 });
    await rejects(relaunchItem(deps, 1, { how: "restart" }), Error, /held.*--force/);
    assert.is(getItem(store, 1)!.state, "active");
    assert.is((await relaunchItem(deps, 1, { how: "restart", force: true })).result, "active");
  }));

test("a full repository cap refuses unless forced", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    store.statement("UPDATE work_items SET state = 'interrupted' WHERE id = 1").run();
    const second = (await dispatchReady(deps)).outcomes.find((o) => o.result === "active")!;
    assert.is(second.issue, 2);
    await rejects(relaunchItem(deps, 1, { how: "resume" }), Error, /demo\/widgets runs 1 of 1.*--force/);
    assert.is(getItem(store, 1)!.state, "interrupted");
    assert.is((await relaunchItem(deps, 1, { how: "resume", force: true })).result, "active");
  }));

test("a repository that needs reapproval refuses resume and restart, with and without --force, and nothing is started or told", () =>
  withWorld(template, async ({ t, store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    makePrivate(t.dir);
    for (const how of ["resume", "restart"] as const) {
      for (const force of [false, true]) {
        await rejects(relaunchItem(deps, 1, { how, force }), PreconditionError, /^Work item 1: repository demo\/widgets needs reapproval; "robot-army onboard demo\/widgets --reapprove"; nothing was started$/);
      }
    }
    assert.is(getItem(store, 1)!.state, "active");
    assert.is(sessionsOf(store, 1).length, 1);
    assert.equal(listRecords(deps.sessionRoot).map((r) => r.name), ["ra-widgets-1"]);
    assert.not.ok((await comments(t, 1)).some((c) => c.startsWith("robot-army reassigned") || c.startsWith("robot-army could not start")));
  }));

test("a relaunch whose worker cannot start fails the item once, and the command exits 1 through the top-level catch", () =>
  withWorld(template, async ({ t, store, deps }) => {
    await dispatchReady(deps);
    await stopAll(deps);
    // A relative program is left to the launch to find (it runs from the worktree), so only the launch can fail on it.
    const broken = { ...deps, config: { ...deps.config, worker: { ...deps.config.worker, binary: "./no-such-agent" } } };
    const written: string[] = [];
    const error = (await rejects(restart.run({ item: 1, force: false }, { ...broken, write: (text) => written.push(text) }), RelaunchFailedError, /^Work item 1: the new session could not start: /)) as RelaunchFailedError;
    assert.equal([error.exitCode, error.outcome.result, error.outcome.attempt, error.outcome.earlier], [1, "failed", 2, sessionsOf(store, 1)[0].id]);
    assert.equal(written, [], "nothing is printed by hand: the top-level catch reports it");
    assert.is(getItem(store, 1)!.state, "failed");
    const failures = (await comments(t, 1)).filter((c) => c.startsWith("robot-army could not start"));
    assert.is(failures.length, 1, "one failed attempt, one comment");
  }));

test("the command's run says where the new session runs through deps.write, its attempt agreeing with the earlier it names", () =>
  withWorld(template, async ({ deps }) => {
    const first = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    const written: string[] = [];
    assert.is(await restart.run({ item: 1, force: false }, { ...deps, write: (text) => written.push(text) }), 0);
    const lines = written.join("").split("\n");
    assert.match(lines[0], /^work item 1: restarted as attempt 2 in session ra-widgets-1-2 \(/);
    assert.is(lines[3], `  earlier : ${first.id}`);
  }));

/** Makes demo/widgets private on the forge, so its settings differ from the approved fingerprint. */
function makePrivate(forgeDir: string): void {
  const data = loadForgeData(forgeDir);
  findRepo(data, "demo", "widgets")!.private = true;
  saveForgeData(forgeDir, data);
}

test.run();
