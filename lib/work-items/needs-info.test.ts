import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { openJournal } from "../episodes/journal.ts";
import { endEpisode, setStatus, startEpisode } from "../episodes/lifecycle.ts";
import { openFile } from "../episodes/open-episodes.ts";
import { git, withTempDir } from "../testing/fixtures.ts";
import { atTimeAsync, makeItem, withStore } from "../testing/items.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { ANSWERED_REASON, ANSWERED_WAITING_REASON, followNeedsInfo } from "./needs-info.ts";
import { getItem } from "./queries.ts";
import { endSession, recordSession } from "./sessions.ts";
import { transition } from "./transition.ts";

const HOST = "testhost";
const T = (minute: number) => new Date(`2026-01-15T10:${String(minute).padStart(2, "0")}:00Z`);

/** A store, a folder for worktrees, and the default config (profile demo: its registry is read). */
function inWorld(fn: (store: Store, dir: string, config: Config) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => withStore(async (store) => fn(store, dir, await defaultConfig())));
}

/** An active item with an open session row on `host`, its worktree a real repository with the worker's episode open, busy. */
async function activeWorker(store: Store, dir: string, issue: number, options: { host?: string; attempt?: number } = {}) {
  const item = makeItem(store, { issue, state: "active" });
  const worktree = join(dir, `issue-${issue}-${options.attempt ?? 1}`);
  mkdirSync(worktree, { recursive: true });
  git(worktree, "init", "--quiet");
  const row = recordSession(store, {
    id: `00000000-0000-4000-8000-00000000000${issue}${options.attempt ?? 1}`, item: item.id, name: `ra-widgets-${issue}`, host: options.host ?? HOST,
    launcher: "process", marker: `ra-widgets-${issue}`, worktree, branch: `robot-army/issue-${issue}`, started_at: "2026-01-15T09:00:00Z", simulated: false,
  });
  const journal = await openJournal(worktree, { forWrite: true });
  await startEpisode(journal, { key: row.episode_key, clientPid: process.pid, now: T(0) });
  return { item, row, journal };
}

const pass = (store: Store, config: Config, minute: number) => atTimeAsync(T(minute).toISOString(), () => followNeedsInfo({ store, config, host: HOST }));

test("a worker's needs_info moves its active item to needs_info with the question; busy again brings it back to active", () =>
  inWorld(async (store, dir, config) => {
    const { item, row, journal } = await activeWorker(store, dir, 3);
    assert.equal(await pass(store, config, 1), { asked: 0, answered: 0, events: [] }, "a busy worker changes nothing");
    await setStatus(journal, { key: row.episode_key, status: "needs_info", reason: "which database?", now: T(2) });
    const asked = await pass(store, config, 3);
    assert.equal([asked.asked, asked.answered], [1, 0]);
    assert.is(asked.events[0].line, `item ${item.id} (demo/widgets#3) needs you: worker asks: which database?; "robot-army attach ${item.id}" to answer`);
    assert.equal([getItem(store, item.id)!.state, getItem(store, item.id)!.reason], ["needs_info", "worker asks: which database?"]);
    const [record] = queryAudit(store, { kind: "state.work_item", item: item.id }).slice(-1);
    assert.equal(record.body, { issue: 3, from: "active", to: "needs_info", reason: "worker asks: which database?", session: row.id, episode: row.episode_key, asked_at: "2026-01-15T10:02:00Z" });
    assert.equal((await pass(store, config, 4)).events, [], "asked once: the next pass changes nothing");
    // The worker's turn ends: it still waits for the answer.
    await setStatus(journal, { key: row.episode_key, status: "idle", now: T(5) });
    assert.equal((await pass(store, config, 6)).events, []);
    assert.is(getItem(store, item.id)!.state, "needs_info");
    await setStatus(journal, { key: row.episode_key, status: "busy", now: T(7) });
    const answered = await pass(store, config, 8);
    assert.equal([answered.asked, answered.answered, answered.events[0].line], [0, 1, `item ${item.id} (demo/widgets#3) is active again: ${ANSWERED_REASON}`]);
    assert.equal([getItem(store, item.id)!.state, getItem(store, item.id)!.reason], ["active", ANSWERED_REASON]);
  }));

test("answered and back to idle before the pass saw it busy: the question is answered, the item active", () =>
  inWorld(async (store, dir, config) => {
    const { item, row, journal } = await activeWorker(store, dir, 4);
    await setStatus(journal, { key: row.episode_key, status: "needs_info", reason: "may I drop the table?", now: T(1) });
    await pass(store, config, 2);
    await setStatus(journal, { key: row.episode_key, status: "busy", now: T(3) });
    await setStatus(journal, { key: row.episode_key, status: "idle", now: T(4) });
    const answered = await pass(store, config, 5);
    assert.is(answered.answered, 1);
    // Not "active again": the worker does not work, it waits at its prompt, and the line says so.
    assert.is(answered.events[0].line, `item ${item.id} (demo/widgets#4) was answered: ${ANSWERED_WAITING_REASON}`);
    assert.equal([getItem(store, item.id)!.state, getItem(store, item.id)!.reason], ["active", ANSWERED_WAITING_REASON]);
  }));

test("answered and asked again between two passes: the item is answered and asked again with the new question; a question from the future is never asked again", () =>
  inWorld(async (store, dir, config) => {
    const { item, row, journal } = await activeWorker(store, dir, 5);
    await setStatus(journal, { key: row.episode_key, status: "needs_info", reason: "which database?", now: T(1) });
    await pass(store, config, 2);
    await setStatus(journal, { key: row.episode_key, status: "busy", now: T(3) });
    await setStatus(journal, { key: row.episode_key, status: "needs_info", reason: "and which port?", now: T(4) });
    const again = await pass(store, config, 5);
    assert.equal([again.answered, again.asked, again.events.map((e) => e.event)], [1, 1, ["needs_info_answered", "needs_info"]]);
    assert.equal([getItem(store, item.id)!.state, getItem(store, item.id)!.reason], ["needs_info", "worker asks: and which port?"]);
    assert.equal((await pass(store, config, 6)).events, [], "the same question is asked once");
    await setStatus(journal, { key: row.episode_key, status: "needs_info", reason: "from a clock ahead", now: T(30) });
    assert.equal((await pass(store, config, 7)).events, [], "a question dated after now is not taken for a new one");
    assert.equal((await pass(store, config, 8)).events, []);
  }));

test("unknown changes nothing: an unreadable or missing registry, a profile with none, another host's row, an older session, a closed row", () =>
  inWorld(async (store, dir, config) => {
    // Unreadable: the open file is damaged.
    const damaged = await activeWorker(store, dir, 1);
    writeFileSync(openFile(damaged.journal, damaged.row.episode_key), "status: needs_info\nneeds_info_reason: [");
    // Asked, then unreadable while the item waits: it stays needs_info.
    const waiting = await activeWorker(store, dir, 2);
    await setStatus(waiting.journal, { key: waiting.row.episode_key, status: "needs_info", reason: "which port?", now: T(1) });
    assert.is((await pass(store, config, 2)).asked, 1);
    await endEpisode(waiting.journal, { key: waiting.row.episode_key, outcome: "done", now: T(3) });
    // Another machine's row, and a worker whose row is closed.
    const elsewhere = await activeWorker(store, dir, 5, { host: "otherhost" });
    await setStatus(elsewhere.journal, { key: elsewhere.row.episode_key, status: "needs_info", reason: "?", now: T(1) });
    const closed = await activeWorker(store, dir, 6);
    await setStatus(closed.journal, { key: closed.row.episode_key, status: "needs_info", reason: "?", now: T(1) });
    endSession(store, closed.row.id, "lost");
    // An older attempt's worker asking says nothing of the newer one's item.
    const older = await activeWorker(store, dir, 7);
    await setStatus(older.journal, { key: older.row.episode_key, status: "needs_info", reason: "?", now: T(1) });
    recordSession(store, { ...older.row, id: "00000000-0000-4000-8000-000000000072", name: "ra-widgets-7-2", worktree: join(dir, "elsewhere"), episode_key: undefined });
    const result = await pass(store, config, 4);
    assert.equal([result.asked, result.answered, result.events], [0, 0, []]);
    const states = [damaged, waiting, elsewhere, closed, older].map((w) => getItem(store, w.item.id)!.state);
    assert.equal(states, ["active", "needs_info", "active", "active", "active"]);
    // A profile with no registry (generic) is never read.
    const generic = await activeWorker(store, dir, 8);
    await setStatus(generic.journal, { key: generic.row.episode_key, status: "needs_info", reason: "?", now: T(1) });
    const genericConfig = { ...config, worker: { ...config.worker, profile: "generic" as const } };
    assert.is((await pass(store, genericConfig, 5)).asked, 0);
    assert.is((await pass(store, config, 5)).asked, 1, "read with a profile that has one");
  }));

test("an item that moved meanwhile is left as it is: only active items are asked for, only needs_info ones answered", () =>
  inWorld(async (store, dir, config) => {
    const { item, row, journal } = await activeWorker(store, dir, 9);
    transition(store, item.id, "awaiting_review", { reason: "pull request opened" });
    await setStatus(journal, { key: row.episode_key, status: "needs_info", reason: "?", now: T(1) });
    assert.is((await pass(store, config, 2)).asked, 0);
    assert.is(getItem(store, item.id)!.state, "awaiting_review");
  }));

test.run();
