/** Properties of the exit spool's reader: a damaged file is a problem named, never an exit; an exit written is read back. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseTimestamp } from "../clock.ts";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { holdsAsync } from "../testing/property.ts";
import { sessionRecordArb } from "../testing/arbitraries.ts";
import { readExitRecord, spoolDir, spoolExit, spooledExits, spoolFiles } from "./spool.ts";

/** A good exit record, as a holder writes one. */
const exitArb = fc.record({
  session_id: fc.uuid(), name: fc.string({ minLength: 1, maxLength: 12 }), item: fc.integer({ min: 1, max: 10_000 }).map(String),
  generation: fc.integer({ min: 1, max: 100 }), ended: fc.constantFrom("exited", "crashed", "killed", "abandoned", "failed-to-start"),
  code: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }), signal: fc.option(fc.constantFrom("SIGKILL", "SIGTERM", "SIGHUP"), { nil: null }),
  at: fc.constantFrom("2026-01-15T10:00:00Z", "2026-01-15T10:00:00.123Z", "2026-01-15T12:00:00+02:00"),
});

/** What a spool file can hold once damaged: any JSON, a good record with one field changed, a cut-off record, any text. */
const damagedArb = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.tuple(exitArb, fc.constantFrom("session_id", "name", "item", "generation", "ended", "code", "signal", "at"), fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.constantFrom("abc", "garbage", "2026-02-30T25:61:00Z", 1.5, -1)))
    .map(([exit, field, value]) => JSON.stringify({ ...exit, [field]: value })),
  fc.tuple(exitArb, fc.nat()).map(([exit, cut]) => { const text = JSON.stringify(exit); return text.slice(0, cut % text.length); }),
  fc.string({ maxLength: 30 }),
);

test("readExitRecord never throws: a file is an exit that passes the schema with a real time, or a problem", async () => {
  const dir = makeTempDir();
  try {
    // A file under its own record's name, under another session's, or damaged under a fixed one.
    const fileArb = fc.oneof(
      exitArb.map((exit) => [JSON.stringify(exit), `${exit.session_id}.${exit.generation}.json`] as const),
      fc.tuple(exitArb, fc.uuid(), fc.integer({ min: 1, max: 3 })).map(([exit, id, generation]) => [JSON.stringify(exit), `${id}.${generation}.json`] as const),
      damagedArb.map((text) => [text, "00000000-0000-4000-8000-000000000000.1.json"] as const),
    );
    await holdsAsync("readExitRecord returns an exit or a problem, never throws", [fileArb], async ([text, name]) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      const read = await readExitRecord(path);
      rmSync(path);
      if (read.exit === undefined) {
        assert.type(read.problem, "string");
        return;
      }
      assert.is(name, `${read.exit.session_id}.${read.exit.generation}.json`, "an exit is read only from the file its session and generation name");
      assert.ok(parseTimestamp(read.exit.at) !== undefined, read.exit.at);
      assert.ok(read.exit.code === null || Number.isInteger(read.exit.code));
      assert.ok(Number.isInteger(read.exit.generation) && read.exit.generation >= 1);
    });
  } finally {
    removeTempDir(dir);
  }
});

test("spooledExits reads every file of a spool with damaged files in it, one answer per file", async () => {
  const dir = makeTempDir();
  try {
    await holdsAsync("spooledExits answers for every spool file", [fc.array(fc.tuple(fc.uuid(), fc.oneof(damagedArb, exitArb.map((e) => JSON.stringify(e)))), { maxLength: 4 })], async (files) => {
      removeTempDir(dir);
      mkdirSync(dir);
      for (const [id, text] of files) writeFileSync(join(dir, `${id}.1.json`), text);
      const exits = await spooledExits(dir);
      assert.is(exits.length, spoolFiles(dir).length);
      for (const exit of exits) assert.ok((exit.exit === undefined) !== (exit.problem === undefined), JSON.stringify(exit));
    }, 200);
  } finally {
    removeTempDir(dir);
  }
});

test("an exit spooled from a session's record is read back as that session's exit", async () => {
  const state = makeTempDir();
  try {
    const env = { RA_STATE_DIR: state };
    const endedArb = sessionRecordArb.chain((record) => fc.record({
      ended: fc.constantFrom("exited", "crashed", "killed", "abandoned", "failed-to-start" as const),
      exitCode: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
      exitSignal: fc.option(fc.constantFrom("SIGKILL", "SIGTERM"), { nil: null }),
      item: fc.integer({ min: 1, max: 9999 }).map(String),
      name: fc.string({ minLength: 1, maxLength: 12 }),
    }).map((end) => ({ ...record, ...end, exitedAt: "2026-01-15T10:00:00Z", tags: { ...record.tags, ra_item: end.item } })));
    await holdsAsync("spoolExit then readExitRecord gives back the exit", [endedArb], async (record) => {
      const path = spoolExit(record, env);
      const read = await readExitRecord(path);
      assert.equal(read.exit && { ...read.exit }, {
        session_id: record.id, name: record.name, item: record.tags.ra_item, generation: record.generation,
        ended: record.ended, code: record.exitCode, signal: record.exitSignal, at: record.exitedAt,
        ...(record.command ? { command: record.command } : {}),
        // What the holder measured and kept, when it did: how long the command ran, its last lines (20 at most).
        ...(record.ranSeconds !== undefined ? { ran_seconds: record.ranSeconds } : {}),
        ...(record.lastLines?.length ? { last_lines: record.lastLines.slice(-20) } : {}),
      });
    }, 300);
    assert.ok(spoolFiles(spoolDir(env)).length > 0);
  } finally {
    removeTempDir(state);
  }
});

test.run();
