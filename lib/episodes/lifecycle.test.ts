import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { PreconditionError, UsageError } from "../errors.ts";
import { commitFile, git, repoTemplate, withTempDir } from "../testing/fixtures.ts";
import { identify } from "../processes.ts";
import { openJournal } from "./journal.ts";
import type { Journal } from "./journal.ts";
import { readLedger } from "./ledger.ts";
import { listOpen } from "./open-episodes.ts";
import { latestRecords } from "./records.ts";
import { JournalLinkError } from "./_journal-file.ts";
import { NEEDS_INFO_REASON_MAX, endEpisode, needsInfoReason, requireOpen, setStatus, startEpisode } from "./lifecycle.ts";
import { openFile } from "./open-episodes.ts";
import { rejects } from "../testing/rejects.ts";

const T0 = new Date("2026-01-15T10:00:00Z");
const T1 = new Date("2026-01-15T10:20:00Z");
const T2 = new Date("2026-01-15T11:45:30Z");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// Building a repository takes several git calls; each test works in a copy of this one.
const template = repoTemplate();
test.after(() => template.remove());

/** A real repository (one commit on main) and its journal, removed afterwards. */
function inRepo(fn: (repo: string, journal: Journal) => Promise<void>, options: { empty?: boolean } = {}): Promise<void> {
  return withTempDir(async (dir) => {
    const repo = options.empty ? join(dir, "repo") : template.copy(dir);
    if (options.empty) git(dir, "init", "--quiet", "--initial-branch=main", repo);
    await fn(repo, await openJournal(repo, { forWrite: true }));
  });
}


function frontMatter(file: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(readFileSync(file, "utf8"));
  assert.ok(match, `front matter in ${file}`);
  return parse(match![1]);
}

test("start writes the open file with everything that identifies the episode", () =>
  inRepo(async (repo, journal) => {
    const episode = await startEpisode(journal, { key: "issue-7", clientPid: process.pid, now: T0 });
    const file = join(repo, ".ai/local/state/sessions-open/issue-7.yaml");
    assert.is(openFile(journal, "issue-7"), file);
    const onDisk = parse(readFileSync(file, "utf8"));
    assert.equal(onDisk, episode);
    assert.match(episode.id, UUID);
    assert.equal({ ...episode, id: "" }, {
      schema: 1,
      id: "",
      key: "issue-7",
      host: hostname(),
      client: identify(process.pid),
      started_at: "2026-01-15T10:00:00Z",
      branch: "main",
      start_head: git(repo, "rev-parse", "HEAD"),
      status: "busy",
      status_changed_at: "2026-01-15T10:00:00Z",
    });
    assert.ok(episode.client.started_at, "the client is known by its start time too");
  }));

test("start logs episode.start stamped with the episode's id", () =>
  inRepo(async (repo, journal) => {
    const episode = await startEpisode(journal, { key: "issue-7", clientPid: process.pid, now: T0 });
    assert.equal(await readLedger(journal), {
      events: [{
        at: "2026-01-15T10:00:00Z", episode: episode.id, key: "issue-7", kind: "episode.start",
        data: { branch: "main", head: git(repo, "rev-parse", "HEAD"), client_pid: process.pid },
      }],
      unreadable: [],
    });
  }));

test("start on a detached HEAD records no branch", () =>
  inRepo(async (repo, journal) => {
    git(repo, "switch", "--quiet", "--detach");
    const episode = await startEpisode(journal, { key: "k", clientPid: process.pid, now: T0 });
    assert.is(episode.branch, null);
    assert.is(episode.start_head, git(repo, "rev-parse", "HEAD"));
  }));

test("starting a key that is open is refused, naming the open episode and recover episodes", () =>
  inRepo(async (_repo, journal) => {
    const first = await startEpisode(journal, { key: "work", clientPid: process.pid, now: T0 });
    const before = readFileSync(openFile(journal, "work"), "utf8");
    await rejects(startEpisode(journal, { key: "work", clientPid: process.pid, now: T1 }), PreconditionError,
      `"work"`, first.id, "2026-01-15T10:00:00Z", "recover episodes", "episode end --key work");
    assert.is(readFileSync(openFile(journal, "work"), "utf8"), before, "the open episode is untouched");
    assert.equal((await readLedger(journal)).events.map((e) => e.episode), [first.id], "nothing logged for the refused start");
    const other = await startEpisode(journal, { key: "other", clientPid: process.pid, now: T1 });
    assert.is.not(other.id, first.id);
  }));

test("starting a key whose open file is unreadable is refused, naming the file", () =>
  inRepo(async (_repo, journal) => {
    mkdirSync(journal.openDir, { recursive: true });
    writeFileSync(openFile(journal, "work"), "key: [unclosed\n");
    await rejects(startEpisode(journal, { key: "work", clientPid: process.pid, now: T0 }), PreconditionError,
      ".ai/local/state/sessions-open/work.yaml", "recover episodes");
  }));

test("needs_info keeps the worker's question; idle leaves it asked, busy answers it; each change is a ledger event", () =>
  inRepo(async (_repo, journal) => {
    const started = await startEpisode(journal, { key: "work", clientPid: process.pid, now: T0 });
    const asked = await setStatus(journal, { key: "work", status: "needs_info", reason: "which database?", now: T1 });
    assert.equal(asked, { changed: true, episode: { ...started, status: "needs_info", status_changed_at: "2026-01-15T10:20:00Z", needs_info_reason: "which database?" } });
    assert.equal(await requireOpen(journal, "work"), asked.episode);
    assert.match(readFileSync(openFile(journal, "work"), "utf8"), "needs_info_reason: which database?");
    // The worker's turn ends (Claude Code's Stop): it still waits for the answer.
    assert.equal(await setStatus(journal, { key: "work", status: "idle", now: T2 }), { changed: false, episode: asked.episode });
    // Asked again in the same words: nothing changes, the question is as old as it was.
    assert.is((await setStatus(journal, { key: "work", status: "needs_info", reason: "which database?", now: T2 })).changed, false);
    const answered = await setStatus(journal, { key: "work", status: "busy", now: T2 });
    assert.equal(answered.episode, { ...started, status: "busy", status_changed_at: "2026-01-15T11:45:30Z" });
    assert.not.match(readFileSync(openFile(journal, "work"), "utf8"), "needs_info_reason");
    const events = (await readLedger(journal)).events.slice(1).map((e) => [e.at, e.kind, e.data]);
    assert.equal(events, [
      ["2026-01-15T10:20:00Z", "episode.needs_info", { reason: "which database?" }],
      ["2026-01-15T11:45:30Z", "episode.busy", {}],
    ]);
    await rejects(setStatus(journal, { key: "work", status: "needs_info", reason: "  \n", now: T2 }), UsageError, "the reason is empty");
  }));

test("the end of a turn answers an agent's blocking prompt, never the worker's own question", () =>
  inRepo(async (_repo, journal) => {
    await startEpisode(journal, { key: "work", clientPid: process.pid, now: T0 });
    await setStatus(journal, { key: "work", status: "needs_info", reason: "which database?", now: T1 });
    assert.is((await setStatus(journal, { key: "work", status: "idle", turnEnded: true, now: T2 })).episode.status, "needs_info", "the worker asked, then ended its turn: still waiting");
    await setStatus(journal, { key: "work", status: "busy", now: T2 });
    const prompt = await setStatus(journal, { key: "work", status: "needs_info", reason: "Claude needs your permission to use Bash", by: "prompt", now: T2 });
    assert.equal([prompt.episode.needs_info_by, (await readLedger(journal)).events.at(-1)!.data], ["prompt", { reason: "Claude needs your permission to use Bash", by: "prompt" }]);
    assert.is((await setStatus(journal, { key: "work", status: "idle", now: T2 })).changed, false, "an idle prompt is no end of a turn");
    const ended = await setStatus(journal, { key: "work", status: "idle", turnEnded: true, now: T2 });
    assert.equal([ended.changed, ended.episode.status, ended.episode.needs_info_by], [true, "idle", undefined]);
  }));

test("a worker's question is outside text: a secret redacted, control characters escaped, then capped", () => {
  assert.is(needsInfoReason("  which database?\n"), "which database?");
  assert.is(needsInfoReason("token ghp_abcdefghijklmnop0123456789 works?"), "token [redacted] works?");
  assert.is(needsInfoReason("clear\u001b[2J\nscreen"), "clear\\u001b[2J\\nscreen");
  const long = needsInfoReason("x".repeat(NEEDS_INFO_REASON_MAX - 6) + "ghp_abcdefghijklmnop0123456789");
  assert.is(long.length, NEEDS_INFO_REASON_MAX);
  assert.ok(long.endsWith("[reda…"), "the secret is redacted before the cut, so no part of it is kept");
  assert.not.match(long, "ghp_");
});

test("idle and busy change the status and its time, and log an event each", () =>
  inRepo(async (_repo, journal) => {
    const started = await startEpisode(journal, { key: "work", clientPid: process.pid, now: T0 });
    const { episode: idle } = await setStatus(journal, { key: "work", status: "idle", now: T1 });
    assert.equal(idle, { ...started, status: "idle", status_changed_at: "2026-01-15T10:20:00Z" });
    assert.equal(await requireOpen(journal, "work"), idle);
    const { episode: busy } = await setStatus(journal, { key: "work", status: "busy", now: T2 });
    assert.equal(await requireOpen(journal, "work"), { ...started, status: "busy", status_changed_at: "2026-01-15T11:45:30Z" });
    assert.equal(busy.started_at, "2026-01-15T10:00:00Z");
    const events = (await readLedger(journal)).events;
    assert.equal(events.map((e) => [e.at, e.episode, e.key, e.kind, e.data]), [
      ["2026-01-15T10:00:00Z", started.id, "work", "episode.start", events[0].data],
      ["2026-01-15T10:20:00Z", started.id, "work", "episode.idle", {}],
      ["2026-01-15T11:45:30Z", started.id, "work", "episode.busy", {}],
    ]);
    assert.is(readdirSync(journal.openDir).length, 1, "no temp files left beside the open file");
  }));

test("idle on a key with no open episode is a precondition error", () =>
  inRepo(async (_repo, journal) => {
    await rejects(setStatus(journal, { key: "nobody", status: "idle", now: T0 }), PreconditionError, `"nobody"`);
    assert.not.ok(existsSync(journal.ledgerFile));
  }));

test("end writes a record listing exactly the commits and files of the episode, then closes it", () =>
  inRepo(async (repo, journal) => {
    commitFile(repo, "before.txt", "made before the episode\n", "Before the episode");
    const startHead = git(repo, "rev-parse", "HEAD");
    const episode = await startEpisode(journal, { key: "issue-7", clientPid: process.pid, now: T0 });
    const one = commitFile(repo, "README.md", "# Changed\n", "Change the README");
    const two = commitFile(repo, "src/feature.ts", "export {};\n", "Add\tthe feature");
    const result = await endEpisode(journal, { key: "issue-7", outcome: "done", now: T2 });

    const expectedFile = join(repo, `.ai/repo/sessions/2026-01-15T10-00-00Z--${episode.id}.md`);
    assert.is(result.recordFile, expectedFile);
    const commits = [{ sha: one, subject: "Change the README" }, { sha: two, subject: "Add\tthe feature" }];
    assert.equal(frontMatter(expectedFile), {
      schema: 1, id: episode.id, key: "issue-7", host: hostname(), branch: "main",
      started_at: "2026-01-15T10:00:00Z", ended_at: "2026-01-15T11:45:30Z", outcome: "done",
      start_head: startHead, end_head: two, commits, changed_files: ["README.md", "src/feature.ts"],
      written_by: "episode end",
    });
    assert.equal(result.commits, commits);
    assert.equal(result.changedFiles, ["README.md", "src/feature.ts"]);
    const body = readFileSync(expectedFile, "utf8");
    assert.match(body, `## Commits (2)\n\n- ${one} Change the README\n- ${two} Add\tthe feature`);
    assert.match(body, "## Changed files (2)\n\n- README.md\n- src/feature.ts");

    assert.not.ok(existsSync(openFile(journal, "issue-7")), "the open file is removed");
    const last = (await readLedger(journal)).events.at(-1)!;
    assert.equal(last, {
      at: "2026-01-15T11:45:30Z", episode: episode.id, key: "issue-7", kind: "episode.end",
      // The hash of the record's bytes as written: cleanup's proof that an uncommitted record is robot-army's own.
      data: { outcome: "done", record: `.ai/repo/sessions/2026-01-15T10-00-00Z--${episode.id}.md`, sha256: createHash("sha256").update(readFileSync(expectedFile)).digest("hex"), commits: 2 },
    });
    const again = await startEpisode(journal, { key: "issue-7", clientPid: process.pid, now: T2 });
    assert.is.not(again.id, episode.id, "the key can be opened again");
  }));

test("end with no commits since the start lists none", () =>
  inRepo(async (repo, journal) => {
    await startEpisode(journal, { key: "k", clientPid: process.pid, now: T0 });
    const result = await endEpisode(journal, { key: "k", outcome: "abandoned", now: T1 });
    const record = frontMatter(result.recordFile);
    assert.equal([record.commits, record.changed_files, record.outcome], [[], [], "abandoned"]);
    assert.is(record.end_head, git(repo, "rev-parse", "HEAD"));
    assert.match(readFileSync(result.recordFile, "utf8"), "## Commits (0)\n\nnone");
  }));

test("end of an episode started before the first commit lists every commit", () =>
  inRepo(async (repo, journal) => {
    const episode = await startEpisode(journal, { key: "k", clientPid: process.pid, now: T0 });
    assert.equal([episode.start_head, episode.branch], [null, "main"]);
    const one = commitFile(repo, "a.txt", "a\n", "First ever");
    const two = commitFile(repo, "lib/b.txt", "b\n", "Second");
    const record = frontMatter((await endEpisode(journal, { key: "k", outcome: "done", now: T1 })).recordFile);
    assert.equal(record.commits, [{ sha: one, subject: "First ever" }, { sha: two, subject: "Second" }]);
    assert.equal(record.changed_files, ["a.txt", "lib/b.txt"]);
    assert.equal([record.start_head, record.end_head], [null, two]);
  }, { empty: true }));

test("end of an episode that never saw a commit in an empty repository lists none", () =>
  inRepo(async (_repo, journal) => {
    await startEpisode(journal, { key: "k", clientPid: process.pid, now: T0 });
    const record = frontMatter((await endEpisode(journal, { key: "k", outcome: "done", now: T1 })).recordFile);
    assert.equal([record.commits, record.changed_files, record.end_head], [[], [], null]);
  }, { empty: true }));

test("end says the commits could not be listed when the start commit is gone, never none", () =>
  inRepo(async (repo, journal) => {
    const doomed = commitFile(repo, "doomed.txt", "x\n", "A commit about to be rewritten away");
    const episode = await startEpisode(journal, { key: "k", clientPid: process.pid, now: T0 });
    git(repo, "reset", "--quiet", "--hard", "HEAD~1");
    commitFile(repo, "other.txt", "y\n", "Another history");
    // What `git gc --prune=now` would do once the reflog forgets it, without its cost: the object goes.
    rmSync(join(repo, ".git/objects", doomed.slice(0, 2), doomed.slice(2)));
    assert.throws(() => git(repo, "cat-file", "-e", doomed), undefined, "the start commit is gone");
    const result = await endEpisode(journal, { key: "k", outcome: "done", now: T1 });
    assert.equal([result.commits, result.changedFiles], [null, null]);
    const record = frontMatter(result.recordFile);
    assert.equal([record.commits, record.changed_files, record.start_head], [null, null, episode.start_head]);
    assert.match(readFileSync(result.recordFile, "utf8"), "could not be listed");
    assert.is((await readLedger(journal)).events.at(-1)!.data.commits, null);
  }));

test("requireOpen on a key with no open episode is a precondition error", () =>
  inRepo(async (_repo, journal) => {
    await rejects(requireOpen(journal, "missing"), PreconditionError, `"missing"`, "episode status --all");
    await rejects(endEpisode(journal, { key: "missing", outcome: "done", now: T0 }), PreconditionError, `"missing"`);
    assert.not.ok(existsSync(journal.recordsDir), "no record for an episode that was never open");
  }));

test("requireOpen on an open file that is not YAML is a precondition error naming the file", () =>
  inRepo(async (_repo, journal) => {
    mkdirSync(journal.openDir, { recursive: true });
    writeFileSync(openFile(journal, "broken"), "id: [unclosed\nkey: broken\n");
    await rejects(requireOpen(journal, "broken"), PreconditionError, ".ai/local/state/sessions-open/broken.yaml", "cannot be read");
    await rejects(endEpisode(journal, { key: "broken", outcome: "done", now: T0 }), PreconditionError, "broken.yaml");
    assert.ok(existsSync(openFile(journal, "broken")), "an unreadable episode is never removed");
  }));

test("requireOpen on an open file that breaks the episode schema is a precondition error", () =>
  inRepo(async (_repo, journal) => {
    const episode = await startEpisode(journal, { key: "k", clientPid: process.pid, now: T0 });
    writeFileSync(openFile(journal, "k"), `id: ${episode.id}\nkey: k\nstatus: sleeping\n`);
    await rejects(requireOpen(journal, "k"), PreconditionError, "k.yaml", "status");
  }));

test("the open file is removed only after the record is written", () =>
  inRepo(async (_repo, journal) => {
    await startEpisode(journal, { key: "k", clientPid: process.pid, now: T0 });
    // A records folder that cannot be written to: a file where the folder should be.
    mkdirSync(join(journal.root, ".ai/repo"), { recursive: true });
    writeFileSync(journal.recordsDir, "not a folder");
    try {
      await endEpisode(journal, { key: "k", outcome: "done", now: T1 });
      assert.unreachable("the record cannot be written");
    } catch (error) {
      assert.not.instance(error, assert.Assertion);
    }
    assert.ok(existsSync(openFile(journal, "k")), "the episode stays open");
    rmSync(journal.recordsDir);
    assert.is((await endEpisode(journal, { key: "k", outcome: "done", now: T1 })).episode.key, "k");
  }));


/** A file outside the repository whose lines must never be echoed, as /etc/shadow's. */
function outsideSecret(dir: string): string {
  const file = join(dir, "..", "shadow");
  writeFileSync(file, '{"at":"2026-01-15T10:00:00Z","episode":"11111111-1111-4111-8111-111111111111","key":"x","kind":"root:SECRET-HASH","data":{}}\n');
  return file;
}

test("a ledger that is a symbolic link is refused in one line, its target never read nor written", () =>
  inRepo(async (repo, journal) => {
    await startEpisode(journal, { key: "k1", clientPid: process.pid, now: T0 });
    const secret = outsideSecret(repo);
    const before = readFileSync(secret, "utf8");
    rmSync(journal.ledgerFile);
    symlinkSync(secret, journal.ledgerFile);
    const error = await rejects(readLedger(journal), JournalLinkError, '"' + ".ai/local/state/ledger.jsonl" + '" is a symbolic link', "never follows a link out of the journal");
    assert.not.match(error.message, "SECRET-HASH");
    assert.is((error as PreconditionError).exitCode, 3);
    await rejects(setStatus(journal, { key: "k1", status: "idle", now: T1 }), JournalLinkError);
    await rejects(startEpisode(journal, { key: "k2", clientPid: process.pid, now: T1 }), JournalLinkError);
    await rejects(endEpisode(journal, { key: "k1", outcome: "done", now: T2 }), JournalLinkError);
    assert.is(readFileSync(secret, "utf8"), before, "nothing appended to the target");
    assert.equal((await listOpen(journal)).map((e) => [e.key, e.episode?.status]), [["k1", "busy"]], "no change half made: no k2, k1 still busy and open");
    assert.not.ok(existsSync(journal.recordsDir), "no record written");
  }));

test("an open episode or a record that is a symbolic link is listed with the problem, its target never read", () =>
  inRepo(async (repo, journal) => {
    const secret = outsideSecret(repo);
    mkdirSync(journal.openDir, { recursive: true });
    symlinkSync(secret, join(journal.openDir, "k1.yaml"));
    mkdirSync(journal.recordsDir, { recursive: true });
    symlinkSync(secret, join(journal.recordsDir, "2026-01-15T10-00-00Z--x.md"));
    const open = await listOpen(journal);
    assert.equal(open.map((e) => [e.key, e.episode, e.problem]), [["k1", undefined, "is a symbolic link, never followed out of the journal: remove it"]]);
    const records = await latestRecords(journal, 5);
    assert.equal(records.map((r) => [r.record, r.problem]), [[undefined, "is a symbolic link, never followed out of the journal: remove it"]]);
  }));

test("a journal folder that is a symbolic link is refused, so nothing is read or written through it", () =>
  inRepo(async (repo, journal) => {
    const outside = join(repo, "..", "elsewhere");
    mkdirSync(outside, { recursive: true });
    mkdirSync(join(repo, ".ai/local"), { recursive: true });
    rmSync(join(repo, ".ai/local/state"), { recursive: true, force: true });
    symlinkSync(outside, join(repo, ".ai/local/state"));
    await rejects(listOpen(journal), JournalLinkError, '".ai/local/state" is a symbolic link');
    await rejects(readLedger(journal), JournalLinkError, '".ai/local/state" is a symbolic link');
    await rejects(startEpisode(journal, { key: "k1", clientPid: process.pid, now: T0 }), JournalLinkError);
    assert.equal(readdirSync(outside), [], "nothing written through the link");
  }));

test.run();
