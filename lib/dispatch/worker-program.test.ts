import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import { findWorkerProgram } from "./worker-program.ts";

const worker = (binary: string, launcher: "process" | "tmux" | "kitty" = "process") => ({ worker: { binary, launcher } }) as Parameters<typeof findWorkerProgram>[0];

test("an absolute worker program is found when it is an executable file, and missing otherwise", () => withTempDir((dir) => {
  const agent = join(dir, "agent");
  writeFileSync(agent, "#!/bin/sh\n");
  assert.equal(findWorkerProgram(worker(agent)), { missing: `the worker program ${agent} is not executable (worker.binary)` });
  chmodSync(agent, 0o755);
  assert.equal(findWorkerProgram(worker(agent)), { found: agent });
  assert.equal(findWorkerProgram(worker(join(dir, "gone"))), { missing: `the worker program ${join(dir, "gone")} does not exist (worker.binary)` });
  assert.equal(findWorkerProgram(worker(dir)), { missing: `the worker program ${dir} is not a file (worker.binary)` });
}));

test("a bare name is looked up on PATH; not found there, it is missing only for the process launcher", () => withTempDir((dir) => {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "agent"), "#!/bin/sh\n", { mode: 0o755 });
  const env = { PATH: `${join(dir, "empty")}:${bin}` };
  assert.equal(findWorkerProgram(worker("agent"), env), { found: join(bin, "agent") });
  assert.ok("missing" in findWorkerProgram(worker("nope"), env));
  // A terminal's window has its own PATH: not found here is not proof it is missing there.
  assert.ok("unknown" in findWorkerProgram(worker("nope", "tmux"), env));
  assert.ok("unknown" in findWorkerProgram(worker("./agent"), env), "a relative path is run from the worktree");
}));

test.run();
