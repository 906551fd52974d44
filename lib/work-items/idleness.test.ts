import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openJournal } from "../episodes/journal.ts";
import { setStatus, startEpisode } from "../episodes/lifecycle.ts";
import { openFile } from "../episodes/open-episodes.ts";
import { repoTemplate, withTempDir } from "../testing/fixtures.ts";
import type { StoredSession } from "./sessions.ts";
import { noRegistryLine } from "../worker-profiles.ts";
import { readRegistry, workerIdleness } from "./idleness.ts";

const template = repoTemplate();
test.after(() => template.remove());

const STARTED = new Date("2026-01-15T10:00:00Z");
const IDLE_AT = new Date("2026-01-15T10:30:00Z");
/** 47 seconds after the worker went idle. */
const PASS = new Date("2026-01-15T10:30:47Z");

function sessionIn(worktree: string, key = "item-3-2"): StoredSession {
  return {
    id: "3f2a9c4e-1b7d-4e2a-9c1f-0a2b3c4d5e6f", item: 3, name: "ra-widgets-3-2", host: "testhost", launcher: "process", marker: "ra-widgets-3-2",
    worktree, branch: "robot-army/issue-3", started_at: "2026-01-15T10:00:00Z", simulated: false, attempt: 2, episode_key: key,
    ended_at: null, end_reason: null, exit_code: null, terminal: null, tabs_swept_at: null, profile: null,
  };
}

/** A worktree whose worker opened its episode and went idle at IDLE_AT. */
function withIdleWorker(fn: (worktree: string, file: string) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    const worktree = template.copy(dir);
    const journal = await openJournal(worktree, { forWrite: true });
    await startEpisode(journal, { key: "item-3-2", clientPid: process.pid, now: STARTED });
    await setStatus(journal, { key: "item-3-2", status: "idle", now: IDLE_AT });
    await fn(worktree, openFile(journal, "item-3-2"));
  });
}

/** Rewrites one line of the open file (`status: idle` -> `status: busy`, say). */
function edit(file: string, from: RegExp, to: string): void {
  const text = readFileSync(file, "utf8");
  assert.match(text, from);
  writeFileSync(file, text.replace(from, to));
}

async function why(session: StoredSession, at = PASS): Promise<string> {
  const idleness = await workerIdleness(session, "claude", at);
  assert.is(idleness.idle, false, JSON.stringify(idleness));
  return (idleness as { why: string }).why;
}

test("an episode idle since a valid time is idle, for the seconds since then", () =>
  withIdleWorker(async (worktree) => {
    assert.equal(await workerIdleness(sessionIn(worktree), "claude", PASS), { idle: true, since: "2026-01-15T10:30:00Z", seconds: 47 });
    assert.equal(await workerIdleness(sessionIn(worktree), "demo", IDLE_AT), { idle: true, since: "2026-01-15T10:30:00Z", seconds: 0 });
  }));

test("it reads the episode of the key the session was given, not the item's first key", () =>
  withIdleWorker(async (worktree) => {
    assert.match(await why(sessionIn(worktree, "item-3")), 'no open episode "item-3" in');
  }));

test("busy is not idle, nor is any status that is not exactly idle", () =>
  withIdleWorker(async (worktree, file) => {
    const journal = await openJournal(worktree, { forWrite: true });
    await setStatus(journal, { key: "item-3-2", status: "busy", now: IDLE_AT });
    assert.is(await why(sessionIn(worktree)), 'episode "item-3-2" is "busy", not idle');
    edit(file, /^status: busy$/m, "status: Idle");
    assert.match(await why(sessionIn(worktree)), 'the open episode "item-3-2"');
  }));

test("a worker waiting for its owner (needs_info) is not idle, even once its turn ends; the registry says what it asks", () =>
  withIdleWorker(async (worktree) => {
    const journal = await openJournal(worktree, { forWrite: true });
    await setStatus(journal, { key: "item-3-2", status: "needs_info", reason: "which database?", now: IDLE_AT });
    await setStatus(journal, { key: "item-3-2", status: "idle", now: PASS });
    assert.is(await why(sessionIn(worktree), new Date("2026-01-15T12:00:00Z")), 'episode "item-3-2" is "needs_info", not idle');
    assert.equal(await readRegistry(sessionIn(worktree), "claude"), { known: true, status: "needs_info", changedAt: "2026-01-15T10:30:00Z", reason: "which database?", agentSession: null });
    assert.equal(await readRegistry(sessionIn(worktree), "generic"), { known: false, why: noRegistryLine("generic") });
    assert.match(JSON.stringify(await readRegistry(sessionIn(worktree, "item-3"), "claude")), 'no open episode \\"item-3\\"');
  }));

test("a malformed, absent or future status_changed_at is not idle", () =>
  withIdleWorker(async (worktree, file) => {
    edit(file, /^status_changed_at: .*$/m, "status_changed_at: half an hour ago");
    assert.is(await why(sessionIn(worktree)), 'episode "item-3-2" is idle since "half an hour ago", which is not a time');
    edit(file, /^status_changed_at: .*$/m, "status_changed_at: 2026-02-30T99:00:00Z");
    assert.match(await why(sessionIn(worktree)), "which is not a time");
    edit(file, /^status_changed_at: .*$/m, "");
    assert.match(await why(sessionIn(worktree)), 'the open episode "item-3-2"');
    writeFileSync(file, readFileSync(file, "utf8") + "status_changed_at: 2026-01-15T10:31:00Z\n");
    assert.is(await why(sessionIn(worktree)), 'episode "item-3-2" is idle since 2026-01-15T10:31:00Z, which is in the future');
  }));

test("a missing episode, a missing journal or worktree, and an unreadable or damaged file are not idle", () =>
  withIdleWorker(async (worktree, file) => {
    writeFileSync(file, "status: idle\nstatus_changed_at: [");
    assert.match(await why(sessionIn(worktree)), 'the open episode "item-3-2"');
    rmSync(file);
    mkdirSync(file);
    assert.match(await why(sessionIn(worktree)), 'the open episode "item-3-2" cannot be read');
    rmSync(file, { recursive: true });
    assert.match(await why(sessionIn(worktree)), 'no open episode "item-3-2"');
    rmSync(join(worktree, ".ai"), { recursive: true });
    assert.match(await why(sessionIn(worktree)), 'no open episode "item-3-2"');
    assert.match(await why(sessionIn(join(worktree, "gone"))), 'no open episode "item-3-2"');
  }));

test("an open file or journal folder that is a symbolic link is never followed: not idle", () =>
  withIdleWorker(async (worktree, file) => {
    const elsewhere = join(worktree, "..", "idle-episode.yaml");
    writeFileSync(elsewhere, readFileSync(file, "utf8"));
    rmSync(file);
    symlinkSync(elsewhere, file);
    assert.match(await why(sessionIn(worktree)), "is a symbolic link");
    const state = join(worktree, ".ai", "local", "state");
    rmSync(state, { recursive: true });
    symlinkSync(join(worktree, ".."), state);
    assert.match(await why(sessionIn(worktree)), "cannot be read");
  }));

test("a generic worker is never taken for idle, whatever its journal says; claude, codex and demo are read", () =>
  withIdleWorker(async (worktree) => {
    const generic = await workerIdleness(sessionIn(worktree), "generic", PASS);
    assert.equal([generic.idle, !generic.idle && generic.why], [false, noRegistryLine("generic")]);
    // Codex's hooks report the start of a turn as well as its end: its registry is read like Claude Code's.
    for (const profile of ["claude", "codex", "demo"] as const) assert.is((await workerIdleness(sessionIn(worktree), profile, PASS)).idle, true);
  }));

test.run();
