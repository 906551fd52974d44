/**
 * Properties of the work journal's readers: open episode YAML, ledger lines and closed
 * episodes' records. A worker (or a crash) may leave anything in those files; reading never
 * throws, each file or line is read or named as unreadable, and what a writer wrote is read
 * back as it was.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseTimestamp } from "../clock.ts";
import { episodeArb, episodeRecordArb, ledgerEventArb } from "../testing/arbitraries.ts";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { holdsAsync } from "../testing/property.ts";
import type { Journal } from "./journal.ts";
import { appendEvent, readLedger } from "./ledger.ts";
import { createOpen, findOpen, listOpen, openFile, rewriteOpen } from "./open-episodes.ts";
import { latestRecords, recordFile, writeRecord } from "./records.ts";

/** A journal in a fresh folder (its readers need no git repository), emptied before each run. */
function journalIn(dir: string): Journal & { reset(): void } {
  const journal = {
    root: dir,
    excludeFile: join(dir, "exclude"),
    openDir: join(dir, ".ai/local/state/sessions-open"),
    ledgerFile: join(dir, ".ai/local/state/ledger.jsonl"),
    recordsDir: join(dir, ".ai/repo/sessions"),
    reset() {
      rmSync(join(dir, ".ai"), { recursive: true, force: true });
      mkdirSync(journal.openDir, { recursive: true });
      mkdirSync(journal.recordsDir, { recursive: true });
    },
  };
  journal.reset();
  return journal;
}

/** YAML as a hand, an editor or a crash leaves it: broken indentation, aliases, tags, deep nesting, any text. */
const yamlishArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.array(fc.tuple(fc.constantFrom("", "  ", "\t", "- "), fc.constantFrom("key", "status", "client", "id", "<<", "? x", "&a", "*a", "!!binary", "!!js/function", "'", '"'), fc.constantFrom(": ", ":", " ", ""), fc.string({ maxLength: 8 })), { maxLength: 6 })
    .map((lines) => lines.map((parts) => parts.join("")).join("\n")),
  fc.constantFrom("[".repeat(5000), "{a: ".repeat(3000), "a: &a [*a]", "a: &a\n  b: *a\n", "- &x [1]\n- *x\n".repeat(200), "---\n---\n", "%YAML 9.9\n---\n"),
  fc.tuple(episodeArb, fc.constantFrom("id", "key", "client", "status", "started_at", "start_head", "schema"), fc.jsonValue({ maxDepth: 2 }))
    .map(([episode, field, value]) => JSON.stringify({ ...episode, [field]: value })),
  fc.tuple(episodeArb, fc.constantFrom("k", "w1", "other")).map(([episode, key]) => JSON.stringify({ ...episode, key })),
);

/** Process warnings emitted while `fn` runs: yaml's warnings quote lines of the file they come from. */
async function warningsDuring(fn: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const listener = (warning: Error) => warnings.push(warning.message);
  process.on("warning", listener);
  try {
    await fn();
    await new Promise((resolve) => setTimeout(resolve, 0)); // warnings are emitted on the next tick
  } finally {
    process.off("warning", listener);
  }
  return warnings;
}

test("reading an open episode's file never throws and prints nothing: it is a valid episode, or a problem", async () => {
  const dir = makeTempDir();
  try {
    const journal = journalIn(dir);
    const warnings = await warningsDuring(() => holdsAsync("open episode YAML is read as an episode or a problem", [yamlishArb], async (text) => {
      writeFileSync(openFile(journal, "k"), text);
      const [entry] = await listOpen(journal);
      assert.ok((entry.episode === undefined) !== (entry.problem === undefined), JSON.stringify(entry));
      if (entry.episode) assert.ok(["busy", "idle"].includes(entry.episode.status) && Number.isInteger(entry.episode.client.pid));
      if (entry.episode) assert.is(entry.episode.key, entry.key, "an episode is read only under its own key");
    }, 500));
    assert.equal(warnings, [], "warnings printed while reading open episodes");
  } finally {
    removeTempDir(dir);
  }
});

test("an open episode written is read back as it was", async () => {
  const dir = makeTempDir();
  try {
    const journal = journalIn(dir);
    await holdsAsync("createOpen then findOpen gives back the episode", [episodeArb, fc.constantFrom("busy" as const, "idle" as const)], async (episode, status) => {
      journal.reset();
      assert.ok(await createOpen(journal, episode));
      assert.equal((await findOpen(journal, episode.key))?.episode, JSON.parse(JSON.stringify(episode)));
      const changed = { ...episode, status };
      await rewriteOpen(journal, changed);
      assert.equal((await findOpen(journal, episode.key))?.episode, JSON.parse(JSON.stringify(changed)));
    }, 200);
  } finally {
    removeTempDir(dir);
  }
});

/** A ledger line as an append, a torn write or a hostile worker leaves it. */
const ledgerLineArb = fc.oneof(
  ledgerEventArb.map((event) => JSON.stringify(event)),
  ledgerEventArb.chain((event) => fc.nat({ max: 200 }).map((cut) => JSON.stringify(event).slice(0, cut))),
  fc.tuple(ledgerEventArb, fc.constantFrom("at", "episode", "kind", "data", "key"), fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom("garbage", "2026-02-30T25:00:00Z")))
    .map(([event, field, value]) => JSON.stringify({ ...event, [field]: value })),
  fc.nat({ max: 30_000 }).map((depth) => `{"at":"2026-01-15T10:00:00Z","data":${"[".repeat(depth)}${"]".repeat(depth)}}`),
  fc.json({ maxDepth: 3 }),
  fc.string({ maxLength: 30 }),
);

test("reading the ledger never throws: every line is an event that passes the schema with a real time, or unreadable", async () => {
  const dir = makeTempDir();
  try {
    const journal = journalIn(dir);
    await holdsAsync("ledger lines are read as events or counted unreadable", [fc.array(ledgerLineArb.map((l) => l.replaceAll("\n", " ")), { maxLength: 6 })], async (lines) => {
      writeFileSync(journal.ledgerFile, lines.join("\n") + "\n");
      const { events, unreadable } = await readLedger(journal);
      assert.is(events.length + unreadable.length, lines.filter((line) => line.trim()).length);
      for (const event of events) assert.ok(parseTimestamp(event.at) !== undefined && typeof event.data === "object", JSON.stringify(event));
    }, 200);
  } finally {
    removeTempDir(dir);
  }
});

test("events appended to the ledger are read back as they were, in order", async () => {
  const dir = makeTempDir();
  try {
    const journal = journalIn(dir);
    await holdsAsync("appendEvent then readLedger gives back the events", [fc.array(ledgerEventArb, { minLength: 1, maxLength: 4 })], async (events) => {
      journal.reset();
      for (const event of events) await appendEvent(journal, event);
      const read = await readLedger(journal);
      assert.equal(read.unreadable, []);
      assert.equal(read.events, JSON.parse(JSON.stringify(events)));
    }, 200);
  } finally {
    removeTempDir(dir);
  }
});

/** A record file: front matter of any YAML, a record with a field changed, a folder, no front matter. */
const recordTextArb = fc.oneof(
  yamlishArb.map((yaml) => `---\n${yaml}\n---\n\nbody\n`),
  fc.tuple(episodeRecordArb, fc.constantFrom("key", "commits", "ended_at", "outcome", "written_by", "changed_files"), fc.jsonValue({ maxDepth: 2 }))
    .map(([record, field, value]) => `---\n${JSON.stringify({ ...record, [field]: value })}\n---\n`),
  fc.string({ maxLength: 40 }),
  fc.constant("(a folder)"),
);

test("listing the latest records never throws: each file is a record with the fields continuity prints, or a problem", async () => {
  const dir = makeTempDir();
  try {
    const journal = journalIn(dir);
    const warnings = await warningsDuring(() => holdsAsync("episode records are read as records or problems", [recordTextArb], async (text) => {
      journal.reset();
      const file = join(journal.recordsDir, "2026-01-15T10-00-00Z--x.md");
      if (text === "(a folder)") mkdirSync(file);
      else writeFileSync(file, text);
      const [entry] = await latestRecords(journal, 5);
      assert.ok((entry.record === undefined) !== (entry.problem === undefined), JSON.stringify(entry));
      if (entry.record) {
        for (const field of ["key", "ended_at", "outcome", "written_by"] as const) assert.type(entry.record[field], "string");
        assert.ok(entry.record.commits === null || Array.isArray(entry.record.commits));
      }
    }, 300));
    assert.equal(warnings, [], "warnings printed while reading records");
  } finally {
    removeTempDir(dir);
  }
});

test("a record written is read back as it was", async () => {
  const dir = makeTempDir();
  try {
    const journal = journalIn(dir);
    await holdsAsync("writeRecord then latestRecords gives back the record", [episodeRecordArb, fc.string({ maxLength: 40 })], async (record, body) => {
      journal.reset();
      const { file } = await writeRecord(journal, record, body);
      assert.is(file, recordFile(journal, record));
      const [entry] = await latestRecords(journal, 1);
      assert.equal(entry.record, JSON.parse(JSON.stringify(record)));
    }, 200);
  } finally {
    removeTempDir(dir);
  }
});

test.run();
