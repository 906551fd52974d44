import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import { readExitRecord } from "./spool.ts";

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

test.run();
