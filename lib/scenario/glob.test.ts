import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { isGlob, matchPaths, segmentPattern } from "./glob.ts";

function tree(files: string[]): string {
  const dir = makeTempDir("robot-army-glob-");
  for (const file of files) {
    mkdirSync(join(dir, file, ".."), { recursive: true });
    writeFileSync(join(dir, file), "");
  }
  return dir;
}

test("a star matches within one segment only", () => {
  const star = segmentPattern("*.md");
  assert.ok(star.test("2026-01-15--a.md"));
  assert.ok(star.test(".md"));
  assert.not.ok(star.test("a/b.md"));
  assert.not.ok(star.test("a.mdx"));
  assert.ok(segmentPattern("a.b").test("a.b"));
  assert.not.ok(segmentPattern("a.b").test("axb"), "a dot is a dot, not any character");
});

test("a glob names the files it matches, relative to the cwd and sorted", () => {
  const dir = tree([".ai/repo/sessions/b.md", ".ai/repo/sessions/a.md", ".ai/repo/sessions/notes.txt", ".ai/repo/deeper/sessions/c.md"]);
  try {
    assert.equal(matchPaths(dir, ".ai/repo/sessions/*.md"), [".ai/repo/sessions/a.md", ".ai/repo/sessions/b.md"]);
    assert.equal(matchPaths(dir, ".ai/*/sessions/*.md"), [".ai/repo/sessions/a.md", ".ai/repo/sessions/b.md"]);
    assert.equal(matchPaths(dir, ".ai/*/c.md"), [], "a star never crosses a slash");
    assert.equal(matchPaths(dir, "nowhere/*.md"), []);
  } finally {
    removeTempDir(dir);
  }
});

test("a plain path matches itself when it exists, file or folder", () => {
  const dir = tree(["README.md"]);
  try {
    assert.not.ok(isGlob("README.md"));
    assert.equal(matchPaths(dir, "README.md"), ["README.md"]);
    assert.equal(matchPaths(dir, "."), ["."]);
    assert.equal(matchPaths(dir, "missing.md"), []);
  } finally {
    removeTempDir(dir);
  }
});

test("an absolute pattern gives absolute paths", () => {
  const dir = tree(["state/x.json", "state/y.json"]);
  try {
    assert.equal(matchPaths("/", `${dir}/state/*.json`), [`${dir}/state/x.json`, `${dir}/state/y.json`]);
  } finally {
    removeTempDir(dir);
  }
});

test.run();
