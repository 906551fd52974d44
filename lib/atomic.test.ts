import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendLine, createFileExclusive, writeFileAtomic } from "./atomic.ts";
import { makeTempDir, removeTempDir } from "./testing/fixtures.ts";

function inTempDir(fn: (dir: string) => void): void {
  const dir = makeTempDir();
  try {
    fn(dir);
  } finally {
    removeTempDir(dir);
  }
}

test("createFileExclusive creates a new file, with its folders, and leaves nothing else behind", () => {
  inTempDir((dir) => {
    const file = join(dir, "a/b/open.yaml");
    assert.is(createFileExclusive(file, "first\n"), true);
    assert.is(readFileSync(file, "utf8"), "first\n");
    assert.equal(readdirSync(join(dir, "a/b")), ["open.yaml"]);
  });
});

test("createFileExclusive refuses a name that exists and leaves the original untouched", () => {
  inTempDir((dir) => {
    const file = join(dir, "open.yaml");
    writeFileSync(file, "the original\n");
    assert.is(createFileExclusive(file, "an intruder\n"), false);
    assert.is(readFileSync(file, "utf8"), "the original\n");
    assert.equal(readdirSync(dir), ["open.yaml"], "no temp file left behind");
  });
});

test("createFileExclusive lets exactly one of two creators win", () => {
  inTempDir((dir) => {
    const file = join(dir, "key.yaml");
    const results = [createFileExclusive(file, "one\n"), createFileExclusive(file, "two\n")];
    assert.equal(results, [true, false]);
    assert.is(readFileSync(file, "utf8"), "one\n");
  });
});

test("writeFileAtomic replaces the whole content and leaves no temp files", () => {
  inTempDir((dir) => {
    const file = join(dir, "nested/state.yaml");
    writeFileAtomic(file, "a long first version of the file\nwith two lines\n");
    writeFileAtomic(file, "short\n");
    assert.is(readFileSync(file, "utf8"), "short\n", "nothing of the longer first version remains");
    assert.equal(readdirSync(join(dir, "nested")), ["state.yaml"]);
  });
});

test("writeFileAtomic cleans up its temp file when the rename fails", () => {
  inTempDir((dir) => {
    const target = join(dir, "a-folder");
    writeFileAtomic(join(target, "inside"), "x");
    // Renaming a file over a non-empty folder fails.
    assert.throws(() => writeFileAtomic(target, "y"));
    assert.equal(readdirSync(dir), ["a-folder"]);
  });
});

test("a file whose name is as long as the file system allows is written by both, its temp name never longer than it", () => inTempDir((dir) => {
  const name = "n".repeat(250);
  writeFileAtomic(join(dir, "a", name), "whole\n");
  assert.ok(createFileExclusive(join(dir, "b", name), "whole\n"));
  assert.is(readFileSync(join(dir, "a", name), "utf8"), "whole\n");
  assert.equal(readdirSync(join(dir, "b")), [name], "no temp left");
}));

test("appendLine writes one line per call, embedded newlines turned into spaces", () => {
  inTempDir((dir) => {
    const file = join(dir, "deep/ledger.jsonl");
    appendLine(file, "first");
    appendLine(file, "second\nhalf\nthird");
    appendLine(file, "");
    assert.is(readFileSync(file, "utf8"), "first\nsecond half third\n\n");
    assert.is(readFileSync(file, "utf8").split("\n").length, 4);
  });
});

test.run();
