/** Properties of the session records reader: a damaged record is named, never half-read; a record written is read back whole. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { mkdirSync, writeFileSync } from "node:fs";
import { PreconditionError } from "../errors.ts";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { holds } from "../testing/property.ts";
import { appendSessionEvent, readRecord, readSessionEvents, scanRecords, sessionFiles, writeRecord } from "./records.ts";
import type { SessionRecord } from "./records.ts";
import { sessionRecordArb, timeArb } from "../testing/arbitraries.ts";

/** What a damaged record file can hold: any JSON, a record with one field changed to anything, or text cut short. */
const damagedArb = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.tuple(sessionRecordArb, fc.constantFrom("id", "name", "tags", "args", "startedAt", "generation", "holderPid", "env", "lastLines"), fc.jsonValue({ maxDepth: 2 }))
    .map(([record, field, value]) => JSON.stringify({ ...record, [field]: value })),
  fc.tuple(sessionRecordArb, fc.constantFrom("0badbad0-0000-4000-8000-000000000000", "0badbad0-0000-4000-8000-000000000001")).map(([record, id]) => JSON.stringify({ ...record, id })),
  fc.tuple(sessionRecordArb, fc.nat()).map(([record, cut]) => { const text = JSON.stringify(record); return text.slice(0, cut % text.length); }),
  fc.string({ maxLength: 30 }),
);

const ID = "0badbad0-0000-4000-8000-000000000000";

test("readRecord returns a whole record or throws the PreconditionError that names the file", () => {
  const root = makeTempDir();
  try {
    holds("readRecord reads a record or names the damaged file", [damagedArb], (text) => {
      writeFileSync(sessionFiles(root, ID).record, text);
      let record: SessionRecord | undefined;
      try {
        record = readRecord(root, ID);
      } catch (error) {
        assert.ok(error instanceof PreconditionError && error.message.includes(sessionFiles(root, ID).record), String(error));
        return;
      }
      // What it hands back is something every reader can use without a guard, and the session its file is named for.
      assert.is(record!.id, ID);
      assert.type(record!.name, "string");
      assert.type(record!.startedAt, "string");
      assert.type(record!.tags, "object");
      assert.ok(record!.tags !== null && Array.isArray(record!.args));
    });
  } finally {
    removeTempDir(root);
  }
});

test("scanRecords never throws over damaged records, and lists each file as a record or as unreadable", () => {
  const root = makeTempDir();
  try {
    holds("scanRecords sorts every file into records or unreadable", [fc.array(fc.tuple(fc.uuid(), fc.oneof(damagedArb, sessionRecordArb.map((r) => JSON.stringify(r)))), { maxLength: 4 })], (files) => {
      // Each run starts from an empty root.
      removeTempDir(root);
      mkdirSync(root);
      const ids = new Set(files.map(([id, text]) => (writeFileSync(sessionFiles(root, id).record, text), id)));
      const { records, unreadable } = scanRecords(root);
      assert.is(records.length + unreadable.length, ids.size);
    }, 150);
  } finally {
    removeTempDir(root);
  }
});

test("a record written is read back as it was", () => {
  const root = makeTempDir();
  try {
    holds("writeRecord then readRecord gives back the record", [sessionRecordArb], (record) => {
      writeRecord(root, record);
      // fast-check's objects have no prototype; the record as plain JSON is what was meant.
      assert.equal(readRecord(root, record.id), JSON.parse(JSON.stringify(record)));
    }, 300);
  } finally {
    removeTempDir(root);
  }
});

test("a session's events are read as events only, whatever its events file holds, and appended ones come back in order", () => {
  const root = makeTempDir();
  try {
    const lineArb = fc.oneof(fc.json({ maxDepth: 2 }), fc.string({ maxLength: 20 }), fc.record({ at: timeArb, kind: fc.constantFrom("start", "exit", "tag") }).map((e) => JSON.stringify(e)));
    holds("readSessionEvents returns only events, appended ones in order", [fc.array(lineArb.map((l) => l.replaceAll("\n", " ")), { maxLength: 5 }), fc.array(fc.constantFrom("start", "exit", "kill"), { maxLength: 3 })], (lines, kinds) => {
      const file = sessionFiles(root, ID).events;
      writeFileSync(file, lines.map((l) => l + "\n").join(""));
      const before = readSessionEvents(root, ID);
      for (const event of before) assert.ok(typeof event === "object" && event !== null && typeof event.kind === "string" && typeof event.at === "string", JSON.stringify(event));
      for (const kind of kinds) appendSessionEvent(root, ID, kind, { generation: 1 });
      assert.equal(readSessionEvents(root, ID).slice(before.length).map((e) => e.kind), kinds);
    }, 300);
  } finally {
    removeTempDir(root);
  }
});

test.run();
