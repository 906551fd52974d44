import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "./testing/fixtures.ts";
import { ensureStateDir, stateDirPath } from "./state-dir.ts";

test("RA_STATE_DIR wins, then XDG_STATE_HOME, then ~/.local/state", () => {
  const env = { RA_STATE_DIR: "/a/state", XDG_STATE_HOME: "/xdg", HOME: "/home/owner" };
  assert.is(stateDirPath(env), "/a/state");
  assert.is(stateDirPath({ ...env, RA_STATE_DIR: undefined }), "/xdg/robot-army");
  assert.is(stateDirPath({ HOME: "/home/owner" }), "/home/owner/.local/state/robot-army");
  assert.is(stateDirPath({ RA_STATE_DIR: "", XDG_STATE_HOME: "", HOME: "/h" }), "/h/.local/state/robot-army");
});

test("a missing state dir is created private to its owner", () => {
  const tmp = makeTempDir();
  try {
    const dir = ensureStateDir({ XDG_STATE_HOME: join(tmp, "xdg") });
    assert.is(dir, join(tmp, "xdg", "robot-army"));
    assert.is(statSync(dir).mode & 0o777, 0o700);
  } finally {
    removeTempDir(tmp);
  }
});

test("an existing state dir keeps the mode its owner gave it", () => {
  const tmp = makeTempDir();
  try {
    const dir = join(tmp, "state");
    mkdirSync(dir);
    chmodSync(dir, 0o750);
    assert.is(ensureStateDir({ RA_STATE_DIR: dir }), dir);
    assert.is(statSync(dir).mode & 0o777, 0o750);
  } finally {
    removeTempDir(tmp);
  }
});

test("working out the path creates nothing", () => {
  const tmp = makeTempDir();
  try {
    stateDirPath({ RA_STATE_DIR: join(tmp, "nope") });
    assert.not.ok(existsSync(join(tmp, "nope")));
  } finally {
    removeTempDir(tmp);
  }
});

test.run();
