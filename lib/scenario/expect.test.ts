import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { checkExpectation } from "./expect.ts";

const same = (text: string) => text;

test("a matching outcome has no failures", () => {
  const failures = checkExpectation(
    { exit: 0, stdout_contains: ["Usage"], stdout_not_contains: ["Error"], stderr_not_contains: ["robot-army:"] },
    { code: 0, stdout: "Usage: robot-army", stderr: "" },
    "/",
    same,
  );
  assert.equal(failures, []);
});

test("each mismatch is named with what was expected", () => {
  const failures = checkExpectation(
    { exit: 0, stdout_contains: ["Usage"], stderr_not_contains: ["robot-army:"] },
    { code: 2, stdout: "", stderr: "robot-army: Unknown command" },
    "/",
    same,
  );
  assert.equal(failures, ["exit: expected 0, got 2", 'stdout: expected to contain "Usage"', 'stderr: expected not to contain "robot-army:"']);
});

test("files are checked relative to the cwd, globs included", () => {
  const dir = makeTempDir("robot-army-expect-");
  try {
    mkdirSync(join(dir, "sessions"));
    writeFileSync(join(dir, "sessions", "a.md"), `ran in ${dir}\n`);
    writeFileSync(join(dir, "sessions", "b.md"), "");
    const normalise = (text: string) => text.replaceAll(dir, "<repo>");
    const failures = checkExpectation(
      {
        exit: 0,
        files_exist: ["sessions/*.md", "sessions/c.md", "open/*.yaml"],
        files_absent: ["sessions/*.txt", "sessions/b.md"],
        files_contain: { "sessions/a.md": ["ran in <repo>", "missing"], "sessions/*.md": ["x"], "sessions": ["x"] },
      },
      { code: 0, stdout: "", stderr: "" },
      dir,
      normalise,
    );
    assert.equal(failures, [
      'files_exist: "sessions/c.md" does not exist',
      'files_exist: "open/*.yaml" matches nothing',
      'files_absent: "sessions/b.md" exists',
      'files_contain: "sessions/a.md" does not contain "missing"',
      'files_contain: "sessions/*.md" matches 2 files ("sessions/a.md", "sessions/b.md"), expected exactly one',
      'files_contain: "sessions" is not a file',
    ]);
  } finally {
    removeTempDir(dir);
  }
});

test.run();
