import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { exitedPid, repoTemplate, withTempDir } from "../testing/fixtures.ts";
import { identify } from "../processes.ts";
import type { Liveness, ProcessIdentity } from "../processes.ts";
import { openJournal } from "./journal.ts";
import type { Journal } from "./journal.ts";
import { appendEvent, readLedger } from "./ledger.ts";
import type { LedgerContents } from "./ledger.ts";
import { endEpisode, setStatus, startEpisode } from "./lifecycle.ts";
import { createOpen, listOpen, openFile } from "./open-episodes.ts";
import type { Episode, OpenEntry } from "./open-episodes.ts";
import { assessEpisodes, lastSignOfLife, recoverEpisode } from "./recovery.ts";
import type { AssessOptions } from "./recovery.ts";

const HOUR = 3_600_000;
const THRESHOLD = 12 * HOUR;
const HOST = "builder-1";
const T0 = new Date("2026-01-15T10:00:00Z");
const NOW = new Date("2026-01-15T23:00:00Z"); // 13h after T0
const NO_LEDGER: LedgerContents = { events: [], unreadable: [] };
const GONE: ProcessIdentity = { pid: exitedPid(), started_at: "2026-01-15T09:59:00.000Z" };

function episode(overrides: Partial<Episode> = {}): Episode {
  return {
    schema: 1,
    id: "11111111-1111-4111-8111-111111111111",
    key: "issue-7",
    host: HOST,
    client: GONE,
    started_at: "2026-01-15T10:00:00Z",
    branch: "main",
    start_head: null,
    status: "busy",
    status_changed_at: "2026-01-15T10:00:00Z",
    ...overrides,
  };
}

function entry(e: Episode): OpenEntry {
  return { key: e.key, file: `/repo/.ai/local/state/sessions-open/${e.key}.yaml`, episode: e };
}

function options(overrides: Partial<AssessOptions> = {}): AssessOptions {
  return { now: NOW, thresholdMs: THRESHOLD, ownKey: undefined, host: HOST, ...overrides };
}

function assessOne(e: Episode, overrides: Partial<AssessOptions> = {}, ledger = NO_LEDGER) {
  const [assessment] = assessEpisodes([entry(e)], ledger, options(overrides));
  return assessment;
}

/** A liveness check that answers `answer` and remembers whom it was asked about. */
function livenessSaying(answer: Liveness): { check: (identity: ProcessIdentity) => Liveness; asked: ProcessIdentity[] } {
  const asked: ProcessIdentity[] = [];
  return { asked, check: (identity) => (asked.push(identity), answer) };
}

test("old, on this host, client exited: stranded, with the evidence", () => {
  const a = assessOne(episode());
  assert.is(a.client, "exited");
  assert.equal(a.lastSeen, { at: T0 });
  assert.equal(a.verdict, {
    kind: "stranded",
    evidence: `silent for 13h, longer than 12h; client pid ${GONE.pid} on this host (${HOST}) is not running`,
  });
});

test("seen under the threshold: live, saying how long ago", () => {
  const a = assessOne(episode(), { now: new Date("2026-01-15T10:30:00Z") });
  assert.equal(a.verdict, { kind: "live", reason: "seen 30m ago" });
});

test("silent exactly as long as the threshold is no longer live", () => {
  const a = assessOne(episode(), { now: new Date(T0.getTime() + THRESHOLD) });
  assert.is(a.verdict.kind, "stranded");
});

test("old but its client still runs: live", () => {
  const a = assessOne(episode({ client: identify(process.pid) }));
  assert.is(a.client, "running");
  assert.equal(a.verdict, { kind: "live", reason: "client still running" });
});

test("the episode this process is inside is live, however old", () => {
  const a = assessOne(episode(), { ownKey: "issue-7" });
  assert.equal(a.verdict, { kind: "live", reason: "this process is inside it" });
  assert.is(assessOne(episode(), { ownKey: "another-key" }).verdict.kind, "stranded");
});

test("on another host, age alone decides and the client is never checked", () => {
  const liveness = livenessSaying("running");
  const old = assessOne(episode({ host: "elsewhere" }), { liveness: liveness.check });
  assert.is(old.client, undefined);
  assert.equal(old.verdict, {
    kind: "stranded",
    evidence: "silent for 13h, longer than 12h; client on another host (elsewhere), so age alone decides",
  });
  const recent = assessOne(episode({ host: "elsewhere" }), { liveness: liveness.check, now: new Date("2026-01-15T11:00:00Z") });
  assert.equal(recent.verdict, { kind: "live", reason: "seen 1h ago" });
  assert.equal(liveness.asked, []);
});

test("a client whose liveness is unknown on this host is skipped, never stranded", () => {
  // A running pid with no recorded start time cannot be proven to be the same process.
  const real = assessOne(episode({ client: { pid: process.pid, started_at: null } }));
  assert.is(real.client, "unknown");
  assert.equal(real.verdict, { kind: "skipped", reason: `client pid ${process.pid} cannot be checked on this host` });
  const injected = livenessSaying("unknown");
  const a = assessOne(episode(), { liveness: injected.check, now: new Date("2026-02-15T00:00:00Z") });
  assert.is(a.verdict.kind, "skipped");
  assert.equal(injected.asked, [GONE]);
});

test("an unreadable started_at or status_changed_at is skipped", () => {
  for (const broken of [{ started_at: "yesterday" }, { status_changed_at: "2026-01-15 10:00" }, { started_at: "2026-02-30T25:00:00Z" }]) {
    const a = assessOne(episode(broken));
    assert.is(a.verdict.kind, "skipped", JSON.stringify(broken));
    assert.ok("problem" in a.lastSeen!, JSON.stringify(broken));
  }
  const a = assessOne(episode({ status_changed_at: "soon" }));
  assert.equal(a.verdict, {
    kind: "skipped",
    reason: `last sign of life cannot be read as a timestamp (status_changed_at "soon" is not a timestamp)`,
  });
});

test("an open file that cannot be read is skipped without checking anything", () => {
  const liveness = livenessSaying("exited");
  const unreadable: OpenEntry = { key: "broken", file: "/repo/.ai/local/state/sessions-open/broken.yaml", problem: "cannot be read: bad indentation" };
  const [a] = assessEpisodes([unreadable], NO_LEDGER, options({ liveness: liveness.check }));
  assert.equal(a, {
    entry: unreadable,
    lastSeen: undefined,
    client: undefined,
    verdict: { kind: "skipped", reason: "the file cannot be read: bad indentation" },
  });
  assert.equal(liveness.asked, []);
});

test("the last sign of life is the latest of start, status change and newest ledger event", () => {
  const e = episode({ status_changed_at: "2026-01-15T12:00:00Z" });
  assert.equal(lastSignOfLife(e, new Map()), { at: new Date("2026-01-15T12:00:00Z") });
  assert.equal(lastSignOfLife(e, new Map([[e.id, new Date("2026-01-15T11:00:00Z")]])), { at: new Date("2026-01-15T12:00:00Z") });
  assert.equal(lastSignOfLife(e, new Map([[e.id, new Date("2026-01-15T22:00:00Z")]])), { at: new Date("2026-01-15T22:00:00Z") });
  assert.equal(lastSignOfLife(e, new Map([["22222222-2222-4222-8222-222222222222", new Date("2026-01-15T22:00:00Z")]])), {
    at: new Date("2026-01-15T12:00:00Z"),
  }, "another episode's events are not this one's life");
});

test("a recent ledger event keeps an old episode live", () => {
  const e = episode();
  const ledger: LedgerContents = {
    events: [{ at: "2026-01-15T22:15:00Z", episode: e.id, key: e.key, kind: "note", data: {} }],
    unreadable: [],
  };
  const a = assessOne(e, {}, ledger);
  assert.equal(a.lastSeen, { at: new Date("2026-01-15T22:15:00Z") });
  assert.equal(a.verdict, { kind: "live", reason: "seen 45m ago" });
});

test("an unreadable ledger line of the episode makes it skipped, never stranded", () => {
  const e = episode();
  const a = assessOne(e, {}, { events: [], unreadable: [{ line: 3, episode: e.id }, { line: 4 }] });
  assert.equal(a.verdict, { kind: "skipped", reason: "last sign of life cannot be read as a timestamp (a ledger line of this episode cannot be read)" });
});

// recoverEpisode, on a real repository.

// Building a repository takes several git calls; each test works in a copy of this one.
const template = repoTemplate();
test.after(() => template.remove());

function inRepo(fn: (journal: Journal) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => fn(await openJournal(template.copy(dir), { forWrite: true })));
}

async function assessJournal(journal: Journal, overrides: Partial<AssessOptions> = {}) {
  return assessEpisodes(await listOpen(journal), await readLedger(journal), options({ host: undefined, ...overrides }));
}

function frontMatter(file: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(readFileSync(file, "utf8"));
  assert.ok(match, `front matter in ${file}`);
  return parse(match![1]);
}

test("recoverEpisode closes a stranded episode into a record that says recovery wrote it", () =>
  inRepo(async (journal) => {
    const started = await startEpisode(journal, { key: "issue-7", clientPid: GONE.pid, now: T0 });
    const [assessment] = await assessJournal(journal);
    assert.is(assessment.verdict.kind, "stranded");
    const recovered = await recoverEpisode(journal, assessment, { now: NOW, thresholdMs: THRESHOLD });
    assert.ok(recovered);
    assert.is(recovered!.recordFile, join(journal.recordsDir, `2026-01-15T10-00-00Z--${started.id}.md`));
    assert.equal(frontMatter(recovered!.recordFile), {
      schema: 1, id: started.id, key: "issue-7", host: started.host, branch: "main",
      started_at: "2026-01-15T10:00:00Z", ended_at: "2026-01-15T23:00:00Z", outcome: "interrupted",
      start_head: started.start_head, end_head: null, commits: [], changed_files: [],
      written_by: "recover episodes",
    });
    const text = readFileSync(recovered!.recordFile, "utf8");
    assert.match(text, "written by `robot-army recover episodes` at 2026-01-15T23:00:00Z");
    assert.match(text, "- last sign of life 2026-01-15T10:00:00Z");
    assert.match(text, `- silent for 13h, longer than 12h; client pid ${started.client.pid} on this host`);
    assert.not.ok(existsSync(openFile(journal, "issue-7")), "the open file is removed");
    const last = (await readLedger(journal)).events.at(-1)!;
    assert.equal(last, {
      at: "2026-01-15T23:00:00Z", episode: started.id, key: "issue-7", kind: "session.recovered",
      data: {
        by: "recover episodes",
        record: `.ai/repo/sessions/2026-01-15T10-00-00Z--${started.id}.md`,
        sha256: createHash("sha256").update(readFileSync(recovered!.recordFile)).digest("hex"),
        last_seen: "2026-01-15T10:00:00Z",
        evidence: (assessment.verdict as { evidence: string }).evidence,
      },
    });
    assert.equal(await assessJournal(journal), [], "a second assessment finds nothing");
  }));

test("recovering from inside another episode stamps session.recovered with the recovered episode's id", () =>
  inRepo(async (journal) => {
    const mine = await startEpisode(journal, { key: "mine", clientPid: process.pid, now: T0 });
    const stranded = await startEpisode(journal, { key: "stranded", clientPid: GONE.pid, now: T0 });
    const assessments = await assessJournal(journal, { ownKey: "mine" });
    assert.equal(assessments.map((a) => [a.entry.key, a.verdict.kind]), [["mine", "live"], ["stranded", "stranded"]]);
    for (const a of assessments) await recoverEpisode(journal, a, { now: NOW, thresholdMs: THRESHOLD });
    const recovered = (await readLedger(journal)).events.filter((e) => e.kind === "session.recovered");
    assert.equal(recovered.map((e) => [e.episode, e.key]), [[stranded.id, "stranded"]]);
    assert.is.not(stranded.id, mine.id);
    assert.equal((await listOpen(journal)).map((e) => e.key), ["mine"]);
  }));

test("recoverEpisode refuses when the episode's status changed after the assessment", () =>
  inRepo(async (journal) => {
    await startEpisode(journal, { key: "k", clientPid: GONE.pid, now: T0 });
    const [assessment] = await assessJournal(journal);
    assert.is(assessment.verdict.kind, "stranded");
    await setStatus(journal, { key: "k", status: "idle", now: new Date("2026-01-15T22:59:00Z") });
    const ledgerBefore = readFileSync(journal.ledgerFile, "utf8");
    assert.is(await recoverEpisode(journal, assessment, { now: NOW, thresholdMs: THRESHOLD }), undefined);
    assert.is((await listOpen(journal))[0].episode?.status, "idle", "the episode stays open as it now is");
    assert.not.ok(existsSync(journal.recordsDir), "no record written");
    assert.is(readFileSync(journal.ledgerFile, "utf8"), ledgerBefore, "nothing logged");
  }));

test("recoverEpisode refuses when the key was ended and opened again after the assessment", () =>
  inRepo(async (journal) => {
    await startEpisode(journal, { key: "k", clientPid: GONE.pid, now: T0 });
    const [assessment] = await assessJournal(journal);
    const ended = await endEpisode(journal, { key: "k", outcome: "done", now: T0 });
    const endRecord = readFileSync(ended.recordFile, "utf8");
    assert.is(await recoverEpisode(journal, assessment, { now: NOW, thresholdMs: THRESHOLD }), undefined, "ended");
    assert.is(readFileSync(ended.recordFile, "utf8"), endRecord, "the worker's own record is kept");
    const again = await startEpisode(journal, { key: "k", clientPid: GONE.pid, now: T0 });
    assert.is(await recoverEpisode(journal, assessment, { now: NOW, thresholdMs: THRESHOLD }), undefined, "reopened");
    assert.equal((await listOpen(journal)).map((e) => e.episode?.id), [again.id]);
    assert.equal(readdirSync(journal.recordsDir).length, 1);
  }));

test("recoverEpisode refuses when the ledger has a newer line of the episode than the assessment saw", () =>
  inRepo(async (journal) => {
    const started = await startEpisode(journal, { key: "k", clientPid: GONE.pid, now: T0 });
    const [assessment] = await assessJournal(journal);
    assert.is(assessment.verdict.kind, "stranded");
    await appendEvent(journal, { at: "2026-01-15T22:30:00Z", episode: started.id, key: "k", kind: "note", data: {} });
    assert.is(await recoverEpisode(journal, assessment, { now: NOW, thresholdMs: THRESHOLD }), undefined);
    assert.equal((await listOpen(journal)).map((e) => e.episode?.id), [started.id], "still open");
    assert.not.ok(existsSync(journal.recordsDir), "no record written");
  }));

test("recoverEpisode refuses an episode whose verdict is not stranded, writing nothing", () =>
  inRepo(async (journal) => {
    await startEpisode(journal, { key: "live", clientPid: process.pid, now: T0 });
    await createOpen(journal, episode({ key: "unknown", client: { pid: process.pid, started_at: null }, host: hostname() }));
    mkdirSync(journal.openDir, { recursive: true });
    writeFileSync(openFile(journal, "broken"), "key: [unclosed\n");
    const assessments = await assessJournal(journal);
    assert.equal(assessments.map((a) => [a.entry.key, a.verdict.kind]), [["broken", "skipped"], ["live", "live"], ["unknown", "skipped"]]);
    const ledgerBefore = readFileSync(journal.ledgerFile, "utf8");
    for (const a of assessments) assert.is(await recoverEpisode(journal, a, { now: NOW, thresholdMs: THRESHOLD }), undefined, a.entry.key);
    assert.equal((await listOpen(journal)).map((e) => e.key), ["broken", "live", "unknown"]);
    assert.not.ok(existsSync(journal.recordsDir));
    assert.is(readFileSync(journal.ledgerFile, "utf8"), ledgerBefore);
  }));

test.run();
