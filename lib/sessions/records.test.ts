import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError, UsageError } from "../errors.ts";
import { withTempDir } from "../testing/fixtures.ts";
import {
  appendSessionEvent, ensureSessionRoot, isKept, listRecords, readRecord, readSessionEvents, removeSessionFiles,
  resolveRef, scanRecords, sessionFiles, sessionRoot, writeRecord,
} from "./records.ts";
import type { SessionRecord } from "./records.ts";

/** A session record as createSession writes it, for tests that need exact ids. */
function recordOf(root: string, overrides: Partial<SessionRecord> & { id: string; name: string }): SessionRecord {
  return {
    schema: 1, command: "sh", args: ["-c", "exit 0"], cwd: root, env: {}, tags: {},
    permanent: false, ephemeral: false, generation: 1, startedAt: "2026-01-15T10:00:00Z",
    holderPid: null, holderStartedAt: null, childPid: null, childStartedAt: null, childPgid: null,
    killRequestedAt: null, exitedAt: null, exitCode: null, exitSignal: null, ended: null, startError: null,
    lastLines: [], log: sessionFiles(root, overrides.id).log,
    ...overrides,
  };
}

const ALPHA = "abcd1111-0000-4000-8000-000000000001";
const BRAVO = "abcd2222-0000-4000-8000-000000000002";
const CHARLIE = "ef015555-0000-4000-8000-000000000003";

function threeSessions(root: string): void {
  writeRecord(root, recordOf(root, { id: ALPHA, name: "alpha" }));
  writeRecord(root, recordOf(root, { id: BRAVO, name: "bravo" }));
  writeRecord(root, recordOf(root, { id: CHARLIE, name: "charlie" }));
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

// --- resolveRef

test("resolveRef finds a session by its name", () => withTempDir((root) => {
  threeSessions(root);
  assert.is(resolveRef(root, "bravo").id, BRAVO);
}));

test("resolveRef finds a session by its whole id", () => withTempDir((root) => {
  threeSessions(root);
  assert.is(resolveRef(root, CHARLIE).name, "charlie");
}));

test("resolveRef finds a session by a prefix of its id that only it has", () => withTempDir((root) => {
  threeSessions(root);
  assert.is(resolveRef(root, "abcd1").name, "alpha");
  assert.is(resolveRef(root, "ef01").name, "charlie");
}));

test("resolveRef refuses a prefix two ids share, as a usage error naming both", () => withTempDir((root) => {
  threeSessions(root);
  const error = thrown(() => resolveRef(root, "abcd"));
  assert.instance(error, UsageError);
  assert.match((error as Error).message, /"abcd" is ambiguous/);
  assert.match((error as Error).message, /alpha/);
  assert.match((error as Error).message, /bravo/);
}));

test("resolveRef: an unknown ref is a precondition error that points to session ls", () => withTempDir((root) => {
  threeSessions(root);
  const error = thrown(() => resolveRef(root, "delta"));
  assert.instance(error, PreconditionError);
  assert.not.instance(error, UsageError);
  assert.match((error as Error).message, /No session "delta" on record/);
}));

test("resolveRef: a prefix shorter than four characters is not taken as an id", () => withTempDir((root) => {
  threeSessions(root);
  assert.instance(thrown(() => resolveRef(root, "ef0")), PreconditionError);
}));

test("resolveRef: an exact name beats another session's id prefix", () => withTempDir((root) => {
  threeSessions(root);
  writeRecord(root, recordOf(root, { id: "99999999-0000-4000-8000-000000000009", name: "ef01" }));
  assert.is(resolveRef(root, "ef01").id, "99999999-0000-4000-8000-000000000009");
}));

test("resolveRef in an empty or missing root finds nothing", () => withTempDir((root) => {
  assert.instance(thrown(() => resolveRef(root, "alpha")), PreconditionError);
  assert.instance(thrown(() => resolveRef(join(root, "missing"), "alpha")), PreconditionError);
}));

// --- isKept

const withKeep = (keep: string | undefined) =>
  recordOf("/tmp", { id: ALPHA, name: "alpha", tags: keep === undefined ? {} : { keep } });

test("isKept: no keep tag is not kept", () => {
  assert.is(isKept(withKeep(undefined)), false);
  assert.is(isKept(recordOf("/tmp", { id: ALPHA, name: "alpha", tags: { keeper: "true" } })), false);
});

test("isKept: true, 1, yes and any other value keep the session", () => {
  for (const value of ["true", "1", "yes", "TRUE", "forever", "until-friday", "nope", "offline", "2"]) {
    assert.is(isKept(withKeep(value)), true, `keep=${JSON.stringify(value)} keeps`);
  }
});

test("isKept: false, 0, no, off in any case and with surrounding spaces do not keep", () => {
  for (const value of ["false", "0", "no", "off", "FALSE", "False", "No", "NO", "Off", "oFF", " false", "off ", "\tno\n", "  0  "]) {
    assert.is(isKept(withKeep(value)), false, `keep=${JSON.stringify(value)} does not keep`);
  }
});

// --- the files

test("sessionRoot is $RA_SESSION_ROOT, else <state dir>/sessions", () => {
  assert.is(sessionRoot({ RA_SESSION_ROOT: "/x/roots" }), "/x/roots");
  assert.is(sessionRoot({ RA_STATE_DIR: "/x/state" }), "/x/state/sessions");
  assert.is(sessionRoot({ RA_SESSION_ROOT: "/x/roots", RA_STATE_DIR: "/x/state" }), "/x/roots");
});

test("ensureSessionRoot creates the root 0700, and the state dir only when the root is inside it", () => withTempDir((dir) => {
  const root = ensureSessionRoot({ RA_STATE_DIR: join(dir, "state") });
  assert.is(root, join(dir, "state", "sessions"));
  assert.is(statSync(root).mode & 0o777, 0o700);
  assert.is(statSync(join(dir, "state")).mode & 0o777, 0o700);
  const own = ensureSessionRoot({ RA_SESSION_ROOT: join(dir, "own"), RA_STATE_DIR: join(dir, "unused-state") });
  assert.is(own, join(dir, "own"));
  assert.is(statSync(own).mode & 0o777, 0o700);
  assert.not.ok(existsSync(join(dir, "unused-state")), "a root of its own needs no state dir");
}));

test("writeRecord then readRecord round-trips; a gone record reads as undefined", () => withTempDir((root) => {
  const record = recordOf(root, { id: ALPHA, name: "alpha", tags: { keep: "true" } });
  writeRecord(root, record);
  assert.equal(readRecord(root, ALPHA), record);
  assert.is(readRecord(root, BRAVO), undefined);
  assert.equal(readdirSync(root), [`${ALPHA}.json`], "no temp file is left beside it");
}));

test("readRecord: a record that is not JSON is a precondition error naming the file", () => withTempDir((root) => {
  writeFileSync(sessionFiles(root, ALPHA).record, "{ half");
  const error = thrown(() => readRecord(root, ALPHA));
  assert.instance(error, PreconditionError);
  assert.match((error as Error).message, new RegExp(`${ALPHA}\\.json`));
}));

test("readRecord: JSON that is no session record (null, {}, a field of the wrong type) cannot be read, and scanRecords lists it apart", () => withTempDir((root) => {
  // `null` once reached isKept as a record and `{}` reached the sort by startedAt: session ls and gc ended with a TypeError.
  const texts = ["null", "[]", "{}", JSON.stringify({ ...recordOf(root, { id: ALPHA, name: "alpha" }), tags: null }), JSON.stringify({ ...recordOf(root, { id: ALPHA, name: "alpha" }), startedAt: 5 })];
  for (const text of texts) {
    writeFileSync(sessionFiles(root, ALPHA).record, text);
    const error = thrown(() => readRecord(root, ALPHA));
    assert.instance(error, PreconditionError, text);
    assert.match((error as Error).message, `Session record "${sessionFiles(root, ALPHA).record}" cannot be read: it is not a session record`);
  }
  writeRecord(root, recordOf(root, { id: BRAVO, name: "bravo" }));
  const { records, unreadable } = scanRecords(root);
  assert.equal(records.map((r) => r.name), ["bravo"]);
  assert.equal(unreadable.map((u) => u.file), [sessionFiles(root, ALPHA).record]);
}));

test("readRecord: a record filed under another session's id cannot be read, so nothing removes that other session's files through it", () => withTempDir((root) => {
  writeRecord(root, recordOf(root, { id: BRAVO, name: "bravo" }));
  writeFileSync(sessionFiles(root, ALPHA).record, JSON.stringify(recordOf(root, { id: BRAVO, name: "bravo-copy" })));
  const error = thrown(() => readRecord(root, ALPHA));
  assert.instance(error, PreconditionError);
  assert.is((error as Error).message, `Session record "${sessionFiles(root, ALPHA).record}" cannot be read: it names session "${BRAVO}", not the "${ALPHA}" its file is named for`);
  assert.equal(scanRecords(root).records.map((r) => r.name), ["bravo"]);
}));

test("listRecords: oldest first, other files and temp files ignored, missing root empty", () => withTempDir((root) => {
  writeRecord(root, recordOf(root, { id: BRAVO, name: "bravo", startedAt: "2026-01-15T10:00:05Z" }));
  writeRecord(root, recordOf(root, { id: ALPHA, name: "alpha", startedAt: "2026-01-15T10:00:09Z" }));
  writeRecord(root, recordOf(root, { id: CHARLIE, name: "charlie", startedAt: "2026-01-15T10:00:05Z" }));
  writeFileSync(join(root, `.${ALPHA}.json.1234abcd.tmp`), "{ half");
  writeFileSync(join(root, `.hidden.json`), "{}");
  appendSessionEvent(root, ALPHA, "start");
  writeFileSync(sessionFiles(root, ALPHA).log, "output\n");
  assert.equal(listRecords(root).map((r) => r.name), ["bravo", "charlie", "alpha"]);
  assert.equal(listRecords(join(root, "missing")), []);
}));

test("events are appended one per line; lines that cannot be read are left out", () => withTempDir((root) => {
  appendSessionEvent(root, ALPHA, "start", { generation: 1 });
  writeFileSync(sessionFiles(root, ALPHA).events, "{ torn line\n", { flag: "a" });
  appendSessionEvent(root, ALPHA, "exit", { code: 3 });
  const events = readSessionEvents(root, ALPHA);
  assert.equal(events.map((e) => e.kind), ["start", "exit"]);
  assert.is(events[0].generation, 1);
  assert.is(events[1].code, 3);
  assert.match(events[0].at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(readSessionEvents(root, BRAVO), []);
}));

test("events lines that are JSON but no event (null, a list, no kind) are left out too", () => withTempDir((root) => {
  // A `null` line reached gc's count of fast exits as an event: TypeError reading its kind.
  appendSessionEvent(root, ALPHA, "start", { generation: 1 });
  writeFileSync(sessionFiles(root, ALPHA).events, 'null\n[1]\n"exit"\n{"at":"2026-01-15T10:00:00Z"}\n{"kind":"exit","at":5}\n', { flag: "a" });
  appendSessionEvent(root, ALPHA, "exit", { code: 3 });
  assert.equal(readSessionEvents(root, ALPHA).map((e) => e.kind), ["start", "exit"]);
}));

test("removeSessionFiles removes the record, events and log of that session only", () => withTempDir((root) => {
  for (const [id, name] of [[ALPHA, "alpha"], [BRAVO, "bravo"]]) {
    writeRecord(root, recordOf(root, { id, name }));
    appendSessionEvent(root, id, "start");
    writeFileSync(sessionFiles(root, id).log, "output\n");
  }
  removeSessionFiles(root, ALPHA);
  assert.equal(readdirSync(root).sort(), [`${BRAVO}.events.jsonl`, `${BRAVO}.json`, `${BRAVO}.log`]);
  removeSessionFiles(root, ALPHA); // removing what is gone is no error
}));

test.run();
