import { test } from "uvu";
import * as assert from "uvu/assert";
import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import type { SessionRecord } from "./records.ts";
import { exitOf, readExitRecord, spooledExits, spoolExit } from "./spool.ts";

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const B = "bbbbbbbb-0000-4000-8000-000000000002";
const EXIT = { session_id: B, name: "ra-widgets-2", item: "2", generation: 1, ended: "exited", code: 0, signal: null, at: "2026-01-15T10:00:00Z" };

test("an exit record under another session's or generation's file name is a problem: the drain would close that session from it", () => withTempDir(async (dir) => {
  // The drain closes the session a record names: a copy of B's record saved under A's name would close B's row from a file that is not B's.
  for (const name of [`${A}.1.json`, `${B}.2.json`, "probe.json"]) {
    writeFileSync(join(dir, name), JSON.stringify(EXIT));
    assert.equal(await readExitRecord(join(dir, name)), { problem: `it is the exit record of session ${B} generation 1, not of the one its name tells` }, name);
  }
  writeFileSync(join(dir, `${B}.1.json`), JSON.stringify(EXIT));
  assert.equal(await readExitRecord(join(dir, `${B}.1.json`)), { exit: EXIT });
}));

test("the spool's records are read in the order they were written, whatever their names: a drain tells of exits as they happened, every run alike", () => withTempDir(async (dir) => {
  // B's name sorts after A's, but B's record was written first.
  writeFileSync(join(dir, `${B}.1.json`), JSON.stringify(EXIT));
  writeFileSync(join(dir, `${A}.1.json`), JSON.stringify({ ...EXIT, session_id: A, name: "ra-widgets-1", item: "1" }));
  utimesSync(join(dir, `${B}.1.json`), new Date("2026-01-15T09:00:00Z"), new Date("2026-01-15T09:00:00Z"));
  utimesSync(join(dir, `${A}.1.json`), new Date("2026-01-15T09:05:00Z"), new Date("2026-01-15T09:05:00Z"));
  assert.equal((await spooledExits(dir)).map((e) => e.file), [`${B}.1.json`, `${A}.1.json`]);
  // Written at the same moment: by name.
  utimesSync(join(dir, `${B}.1.json`), new Date("2026-01-15T09:05:00Z"), new Date("2026-01-15T09:05:00Z"));
  assert.equal((await spooledExits(dir)).map((e) => e.file), [`${A}.1.json`, `${B}.1.json`]);
}));

test("an exit record names the command its session ran, what an exit 126 or 127 is about; one written before it was kept still reads", () => withTempDir(async (dir) => {
  const record: SessionRecord = {
    schema: 1, id: A, name: "ra-widgets-1", command: "claude", args: ["--session-id", A], cwd: dir, env: {}, tags: { ra_item: "1" },
    permanent: false, ephemeral: false, generation: 1, startedAt: "2026-01-15T09:00:00Z", holderPid: null, holderStartedAt: null,
    childPid: null, childStartedAt: null, childPgid: null, killRequestedAt: null, exitedAt: "2026-01-15T10:00:00Z", exitCode: 127,
    exitSignal: null, ended: "exited", startError: null, lastLines: [], log: join(dir, "log"),
  };
  assert.equal(exitOf(record), { ended: "exited", code: 127, signal: null, at: "2026-01-15T10:00:00Z", command: "claude" });
  const path = spoolExit(record, { RA_STATE_DIR: dir });
  assert.equal(await readExitRecord(path), {
    exit: { session_id: A, name: "ra-widgets-1", item: "1", generation: 1, ended: "exited", code: 127, signal: null, at: "2026-01-15T10:00:00Z", command: "claude" },
  });
  writeFileSync(join(dir, `${B}.1.json`), JSON.stringify({ ...EXIT, command: "" }));
  assert.match((await readExitRecord(join(dir, `${B}.1.json`))).problem ?? "", /command/, "an empty command is no command");
}));

test.run();
