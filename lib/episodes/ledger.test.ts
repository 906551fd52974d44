import { test } from "uvu";
import * as assert from "uvu/assert";
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import type { Journal } from "./journal.ts";
import { appendEvent, jsonDepth, MAX_LEDGER_DEPTH, newestEventByEpisode, readLedger } from "./ledger.ts";
import type { LedgerEvent } from "./ledger.ts";

// The ledger is plain files; it needs no repository, only the journal's paths.
async function inJournal(fn: (journal: Journal) => Promise<void>): Promise<void> {
  const root = makeTempDir();
  try {
    mkdirSync(join(root, ".ai/local/state"), { recursive: true });
    await fn({
      root,
      excludeFile: join(root, ".git/info/exclude"),
      openDir: join(root, ".ai/local/state/sessions-open"),
      ledgerFile: join(root, ".ai/local/state/ledger.jsonl"),
      recordsDir: join(root, ".ai/repo/sessions"),
    });
  } finally {
    removeTempDir(root);
  }
}

const A = "11111111-1111-4111-8111-111111111111";
const B = "22222222-2222-4222-8222-222222222222";
const C = "33333333-3333-4333-8333-333333333333";

function event(episode: string, at: string, kind = "note", data: Record<string, unknown> = {}): LedgerEvent {
  return { at, episode, key: `key-${episode.slice(0, 1)}`, kind, data };
}

test("a line nested deeper than a ledger line may be is unreadable, naming its line and episode, not a stack overflow", () =>
  inJournal(async (journal) => {
    await appendEvent(journal, event(A, "2026-01-15T10:00:00Z"));
    const deep = "[".repeat(20_000) + "]".repeat(20_000);
    appendFileSync(journal.ledgerFile, `{"at":"2026-01-15T10:01:00Z","episode":"${B}","key":"k","kind":"note","data":{"x":${deep}}}\n`);
    const contents = await readLedger(journal);
    assert.equal(contents.events.map((e) => e.episode), [A]);
    assert.equal(contents.unreadable, [{ line: 2, episode: B }]);
  }));

test("jsonDepth counts brackets outside strings only", () => {
  assert.is(jsonDepth('{"a":[1,{"b":"[[[{{{"}]}'), 3);
  assert.is(jsonDepth('{"a":"\\"[["}'), 1);
  assert.is(jsonDepth("[".repeat(65) + "]".repeat(65)), MAX_LEDGER_DEPTH + 1);
});

test("a missing ledger reads as an empty one", () =>
  inJournal(async (journal) => {
    assert.equal(await readLedger(journal), { events: [], unreadable: [] });
    assert.equal([...newestEventByEpisode(await readLedger(journal))], []);
  }));

test("events round-trip, one line each, `at` and `episode` first", () =>
  inJournal(async (journal) => {
    const written = [
      event(A, "2026-01-15T10:00:00Z", "episode.start", { branch: "main", head: null, client_pid: 42 }),
      event(A, "2026-01-15T10:05:00Z", "note", { text: "two\nlines" }),
      event(B, "2026-01-15T10:06:00.250Z", "test.failed", { nested: { list: [1, 2] } }),
    ];
    for (const e of written) await appendEvent(journal, e);
    assert.equal(await readLedger(journal), { events: written, unreadable: [] });
    const lines = readFileSync(journal.ledgerFile, "utf8").split("\n");
    assert.is(lines.length, 4, "three lines and the final newline");
    assert.ok(lines[0].startsWith(`{"at":"2026-01-15T10:00:00Z","episode":"${A}",`), lines[0]);
  }));

test("newestEventByEpisode keeps each episode's newest time, whatever the line order", () =>
  inJournal(async (journal) => {
    await appendEvent(journal, event(A, "2026-01-15T12:00:00Z"));
    await appendEvent(journal, event(B, "2026-01-15T09:00:00Z"));
    await appendEvent(journal, event(A, "2026-01-15T11:00:00Z"));
    const newest = newestEventByEpisode(await readLedger(journal));
    assert.equal([...newest].sort(), [
      [A, new Date("2026-01-15T12:00:00Z")],
      [B, new Date("2026-01-15T09:00:00Z")],
    ]);
  }));

test("a last line cut short by a crash is unreadable and marks its episode unreadable", () =>
  inJournal(async (journal) => {
    await appendEvent(journal, event(A, "2026-01-15T10:00:00Z"));
    await appendEvent(journal, event(B, "2026-01-15T10:01:00Z"));
    const whole = JSON.stringify(event(B, "2026-01-15T10:02:00Z", "episode.idle"));
    appendFileSync(journal.ledgerFile, whole.slice(0, whole.indexOf('"kind"') + 4)); // no newline: the write stopped here
    const contents = await readLedger(journal);
    assert.is(contents.events.length, 2);
    assert.equal(contents.unreadable, [{ line: 3, episode: B }]);
    const newest = newestEventByEpisode(contents);
    assert.is(newest.get(B), "unreadable", "a readable earlier event does not hide the broken one");
    assert.equal(newest.get(A), new Date("2026-01-15T10:00:00Z"));
  }));

test("an unreadable line marks its episode even when a readable event of it comes later", () =>
  inJournal(async (journal) => {
    appendFileSync(journal.ledgerFile, `{"at":"2026-01-15T10:00:00Z","episode":"${A}","key":"k","kind":"no\n`);
    await appendEvent(journal, event(A, "2026-01-15T11:00:00Z"));
    assert.is(newestEventByEpisode(await readLedger(journal)).get(A), "unreadable");
  }));

test("an event appended after a line cut short by a crash is still its own readable line", () =>
  inJournal(async (journal) => {
    await appendEvent(journal, event(A, "2026-01-15T10:00:00Z"));
    const whole = JSON.stringify(event(A, "2026-01-15T10:01:00Z"));
    appendFileSync(journal.ledgerFile, whole.slice(0, 60)); // the crash: no newline
    const later = event(C, "2026-01-15T10:30:00Z", "note", { text: "still working" });
    await appendEvent(journal, later);
    const contents = await readLedger(journal);
    assert.equal(contents.events.map((e) => e.episode), [A, C], "the event appended after the crash is read");
    assert.equal(newestEventByEpisode(contents).get(C), new Date("2026-01-15T10:30:00Z"));
  }));

test("a garbage line that names no episode is counted but marks nothing", () =>
  inJournal(async (journal) => {
    await appendEvent(journal, event(A, "2026-01-15T10:00:00Z"));
    appendFileSync(journal.ledgerFile, "this is not json at all\n");
    appendFileSync(journal.ledgerFile, '{"episode":"not-a-uuid"}\n');
    appendFileSync(journal.ledgerFile, "   \n"); // blank lines are not lines of the ledger
    const contents = await readLedger(journal);
    assert.equal(contents.unreadable, [{ line: 2, episode: undefined }, { line: 3, episode: undefined }]);
    assert.equal([...newestEventByEpisode(contents)], [[A, new Date("2026-01-15T10:00:00Z")]]);
  }));

test("valid JSON that is not a valid event is unreadable", () =>
  inJournal(async (journal) => {
    const lines = [
      { at: "2026-01-15T10:00:00+01:00", episode: A, key: "k", kind: "note", data: {} }, // not UTC
      { at: "2026-13-45T99:00:00Z", episode: A, key: "k", kind: "note", data: {} }, // not a time
      { at: "2026-01-15T10:00:00Z", episode: B, key: "k", kind: "note" }, // no data
      { at: "2026-01-15T10:00:00Z", episode: C, key: "k", kind: "note", data: {}, extra: 1 },
    ];
    for (const line of lines) appendFileSync(journal.ledgerFile, JSON.stringify(line) + "\n");
    const contents = await readLedger(journal);
    assert.equal(contents.events, []);
    assert.equal(contents.unreadable, [{ line: 1, episode: A }, { line: 2, episode: A }, { line: 3, episode: B }, { line: 4, episode: C }]);
  }));

test("appendEvent refuses an event with a bad kind or a missing field, and writes nothing", () =>
  inJournal(async (journal) => {
    const good = event(A, "2026-01-15T10:00:00Z");
    const { data: _data, ...noData } = good;
    const { episode: _episode, ...noEpisode } = good;
    const bad: unknown[] = [
      { ...good, kind: "Episode.Start" },
      { ...good, kind: "note!" },
      { ...good, kind: "" },
      { ...good, episode: "not-a-uuid" },
      { ...good, at: "yesterday" },
      { ...good, at: "2026-01-15T10:00:00+01:00" },
      noData,
      noEpisode,
      { ...good, data: [] },
    ];
    for (const value of bad) {
      try {
        await appendEvent(journal, value as LedgerEvent);
        assert.unreachable(`refused: ${JSON.stringify(value)}`);
      } catch (error) {
        assert.instance(error, TypeError, JSON.stringify(value));
        assert.match((error as Error).message, "is not valid");
      }
    }
    assert.not.ok(existsSync(journal.ledgerFile), "nothing was written");
  }));

test.run();
