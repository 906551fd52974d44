import { test } from "uvu";
import * as assert from "uvu/assert";
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { applyHook } from "../episodes/hook.ts";
import { openJournal } from "../episodes/journal.ts";
import { endEpisode, startEpisode } from "../episodes/lifecycle.ts";
import { itemReport } from "../reports/item.ts";
import { queryAudit } from "../store/audit.ts";
import type { AuditRecord } from "../store/audit.ts";
import { withCleanupWorld } from "../testing/cleanup-world.ts";
import type { CleanupWorld } from "../testing/cleanup-world.ts";
import { git } from "../testing/fixtures.ts";
import { getItem } from "../work-items/queries.ts";
import { endSession, sessionsOf } from "../work-items/sessions.ts";
import { cleanupItem } from "./cleanup.ts";
import type { CleanupDeps } from "./cleanup.ts";
import { uncommittedWork } from "./own-records.ts";
import { archiveDir, archiveEvidence } from "./record-archive.ts";
import { removeItemWorktree } from "./remove-item.ts";

const NOW = new Date("2026-01-15T10:00:00Z");
const noAnswer = async () => ({ unanswered: "no stdin" as const });

/** A done item of issue `issue` whose worker, in a real worktree, has ended (its row closed `retired`). */
function doneItem(w: CleanupWorld, issue: number): { id: number; path: string; branch: string; key: string } {
  const branch = `robot-army/issue-${issue}`;
  const path = w.addWorktree(`issue-${issue}`, branch);
  const id = w.claim(issue, path, branch, "done");
  const [session] = sessionsOf(w.store, id);
  endSession(w.store, session.id, "retired");
  return { id, path, branch, key: session.episode_key };
}

/** What Claude Code's hooks do over a session: SessionStart opens the episode, SessionEnd ends it into a record left uncommitted. */
async function agentSession(path: string, key: string): Promise<string> {
  const journal = await openJournal(path, { forWrite: true });
  await applyHook(journal, { key, action: "start", clientPid: process.pid, now: NOW });
  await applyHook(journal, { key, action: "end", clientPid: process.pid, now: new Date(NOW.getTime() + 60_000) });
  const [name] = readdirSync(journal.recordsDir);
  return join(".ai/repo/sessions", name);
}

function deps(w: CleanupWorld): CleanupDeps {
  return { store: w.store, config: w.config, stateDir: w.stateDir, effects: w.effects };
}

function effects(w: CleanupWorld, item: number): string[] {
  return queryAudit(w.store, { item }).filter((r) => r.phase !== "fact").map((r) => `${r.kind}:${r.phase}`);
}

test("a worktree whose only uncommitted file is the record its agent's SessionEnd hook left is reclaimed: the record archived first (0600, folder 0700) and listed", () =>
  withCleanupWorld(async (w) => {
    const { id, path, branch, key } = doneItem(w, 1);
    const record = await agentSession(path, key);
    const written = readFileSync(join(path, record));
    const decision = await cleanupItem(deps(w), id, { by: "cleanup" });
    assert.is(decision.record.state, "done");
    assert.match(decision.record.reason, `worktree removed; 1 episode record robot-army wrote archived in ${archiveDir(w.stateDir, id)}`);
    assert.not.ok(existsSync(path), "the worktree is reclaimed");
    assert.is(git(w.clone, "branch", "--list", branch), "");
    const copy = join(w.stateDir, "archive", `item-${id}`, basename(record));
    assert.equal(readFileSync(copy), written, "the archive holds the record byte for byte");
    assert.is(statSync(copy).mode & 0o777, 0o600);
    assert.is(statSync(dirname(copy)).mode & 0o777, 0o700);
    assert.is(statSync(join(w.stateDir, "archive")).mode & 0o777, 0o700);
    // Copied and verified before anything was removed, and audited.
    assert.equal(effects(w, id).slice(0, 4), ["records.archive:intent", "records.archive:outcome", "worktree.remove:intent", "worktree.remove:outcome"]);
    const listed = itemReport(w.store, w.config, getItem(w.store, id)!).archived_records;
    assert.equal(listed.map(({ file, archive, kept }) => ({ file, archive, kept })), [{ file: record, archive: copy, kept: true }]);
  }));

test("the record beside another untracked file: retained as git says, the record left where it was and nothing archived", () =>
  withCleanupWorld(async (w) => {
    const { id, path, key } = doneItem(w, 2);
    const record = await agentSession(path, key);
    writeFileSync(join(path, "notes.txt"), "only here\n");
    const { record: decision } = await cleanupItem(deps(w), id, { by: "pass" });
    assert.is(decision.state, "retained");
    assert.match(decision.reason, "contains modified or untracked files");
    assert.ok(existsSync(join(path, record)), "the record is still in the worktree");
    assert.ok(existsSync(join(path, "notes.txt")));
    assert.not.ok(existsSync(archiveDir(w.stateDir, id)));
    assert.equal(queryAudit(w.store, { kind: "records.archive" }), []);
  }));

test("a record whose content is not what robot-army wrote, or one that is staged, is the owner's work: retained", () =>
  withCleanupWorld(async (w) => {
    const tampered = doneItem(w, 3);
    const file = await agentSession(tampered.path, tampered.key);
    appendFileSync(join(tampered.path, file), "one more line\n");
    assert.equal((await uncommittedWork(tampered.path, [tampered.key])).others, [`${file} (untracked: its content is not what robot-army wrote (its hash differs from the ledger's))`]);
    assert.is((await cleanupItem(deps(w), tampered.id, { by: "cleanup" })).record.state, "retained");
    assert.ok(existsSync(join(tampered.path, file)));

    const staged = doneItem(w, 4);
    const stagedFile = await agentSession(staged.path, staged.key);
    git(staged.path, "add", stagedFile);
    assert.is((await cleanupItem(deps(w), staged.id, { by: "cleanup" })).record.state, "retained");
    assert.ok(existsSync(join(staged.path, stagedFile)));
    assert.equal(queryAudit(w.store, { kind: "records.archive" }), []);
  }));

test("a file in .ai/repo/sessions/ that is no record of this item's episodes keeps the worktree: another key's record, a look-alike", () =>
  withCleanupWorld(async (w) => {
    const other = doneItem(w, 5);
    // A record robot-army did write, but for a key that is not the item's.
    const journal = await openJournal(other.path, { forWrite: true });
    await startEpisode(journal, { key: "item-99", clientPid: process.pid, now: NOW });
    const { recordFile } = await endEpisode(journal, { key: "item-99", outcome: "done", now: NOW });
    const { record } = await cleanupItem(deps(w), other.id, { by: "cleanup" });
    assert.is(record.state, "retained");
    assert.ok(existsSync(recordFile));

    // Named and shaped like a record of the item's key, but no ledger line says robot-army wrote it.
    const lookAlike = doneItem(w, 6);
    const name = "2026-01-15T10-00-00Z--7c9e6679-7425-40de-944b-e07fc1f90ae7.md";
    const sessions = join(lookAlike.path, ".ai", "repo", "sessions");
    mkdirSync(sessions, { recursive: true });
    writeFileSync(join(sessions, name), `---\nid: 7c9e6679-7425-40de-944b-e07fc1f90ae7\nkey: ${lookAlike.key}\n---\n`);
    const found = await uncommittedWork(lookAlike.path, [lookAlike.key]);
    assert.equal(found.records, []);
    assert.equal(found.others, [`.ai/repo/sessions/${name} (untracked: no ledger line of this item's episodes says robot-army wrote it)`]);
    assert.is((await cleanupItem(deps(w), lookAlike.id, { by: "cleanup" })).record.state, "retained");
    assert.ok(existsSync(join(sessions, name)));
  }));

test("worktree remove <id> does the same: the hook's record alone is archived and the worktree removed, no --force asked", () =>
  withCleanupWorld(async (w) => {
    const { id, path, key } = doneItem(w, 7);
    const file = await agentSession(path, key);
    const removed = await removeItemWorktree(deps(w), id, { force: false, ask: noAnswer });
    assert.is(removed.record?.state, "done");
    assert.equal(removed.removal?.archived?.map((r) => r.file), [file]);
    assert.not.ok(existsSync(path));
    assert.ok(existsSync(join(archiveDir(w.stateDir, id), basename(file))));

    // Beside another file it is retained unforced; forced (the directory's name typed), the record is archived before the rest goes.
    const second = doneItem(w, 8);
    const secondFile = await agentSession(second.path, second.key);
    writeFileSync(join(second.path, "notes.txt"), "only here\n");
    const kept = await removeItemWorktree(deps(w), second.id, { force: false, ask: noAnswer });
    assert.is(kept.record?.state, "retained");
    assert.ok(existsSync(join(second.path, secondFile)));
    const questions: string[] = [];
    const forced = await removeItemWorktree(deps(w), second.id, { force: true, ask: async (q) => (questions.push(q), { line: "issue-8" }) });
    assert.match(questions[0], "uncommitted or untracked work");
    assert.is(forced.record?.state, "done");
    assert.not.ok(existsSync(second.path));
    assert.ok(existsSync(join(archiveDir(w.stateDir, second.id), basename(secondFile))), "the forced removal lost no record");
  }));

test("an archive cut short is read back from the archive and the worktree: archived, not archived, or the owner told to look", () =>
  withCleanupWorld(async (w) => {
    const { id, path, key } = doneItem(w, 9);
    const file = await agentSession(path, key);
    const sha256 = (await uncommittedWork(path, [key])).records[0].sha256;
    const archive = join(archiveDir(w.stateDir, id), basename(file));
    const intent = { kind: "records.archive", body: { path, records: [{ file, sha256, archive }] } } as unknown as AuditRecord;
    assert.equal(archiveEvidence(intent), { settled: true, ok: false, found: "not archived", facts: { path, archived: 0, records: 1 } });
    await cleanupItem(deps(w), id, { by: "cleanup" });
    assert.equal(archiveEvidence(intent), { settled: true, ok: true, found: "archived", facts: { path, archived: 1, records: 1 } });
    writeFileSync(archive, "damaged\n");
    const lost = archiveEvidence(intent);
    assert.is(lost.settled, false);
    assert.match((lost as { check: string }).check, "is neither whole in the archive");
  }));

test.run();
