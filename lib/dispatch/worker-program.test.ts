import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { DEMO_WORKER_SCRIPT } from "../boundaries/launchers/demo-worker.ts";
import { runCommand } from "../run-command.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { findWorkerProgram } from "./worker-program.ts";

const worker = (binary: string, launcher: "process" | "tmux" | "kitty" = "process", more = ""): Promise<Config> =>
  parseConfig(`[worker]\nbinary = ${JSON.stringify(binary)}\nlauncher = "${launcher}"\n${more}`, "/home/owner/.config/robot-army/config.toml", { HOME: "/home/owner" });

test("an absolute worker program is found when it is an executable file, and missing otherwise", () => withTempDir(async (dir) => {
  const agent = join(dir, "agent");
  writeFileSync(agent, "#!/bin/sh\n");
  assert.equal(await findWorkerProgram(await worker(agent)), { missing: `the worker program ${agent} is not executable (worker.binary)` });
  chmodSync(agent, 0o755);
  assert.equal(await findWorkerProgram(await worker(agent)), { found: agent });
  assert.equal(await findWorkerProgram(await worker(join(dir, "gone"))), { missing: `the worker program ${join(dir, "gone")} does not exist (worker.binary)` });
  assert.equal(await findWorkerProgram(await worker(dir)), { missing: `the worker program ${dir} is not a file (worker.binary)` });
}));

test("a bare name is looked up on the PATH the launcher gives its worker; where that is not known, neither is the program", () => withTempDir(async (dir) => {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "agent"), "#!/bin/sh\n", { mode: 0o755 });
  const env = { PATH: `${join(dir, "empty")}:${bin}` };
  assert.equal(await findWorkerProgram(await worker("agent"), { env }), { found: join(bin, "agent") });
  assert.equal(await findWorkerProgram(await worker("nope"), { env }), { missing: 'the worker program "nope" is not on the PATH (worker.binary)' });
  // A kitty tab has the PATH of the kitty it opens in: not found here is not proof it is missing there.
  assert.ok("unknown" in await findWorkerProgram(await worker("nope", "kitty"), { env }));
  assert.ok("unknown" in await findWorkerProgram(await worker("./agent"), { env }), "a relative path is run from the worktree");
  assert.ok("unknown" in await findWorkerProgram(await worker("agent", "tmux"), { env, workerPath: async () => ({ unknown: "tmux does not answer" }) }));
}));

test("demo-worker is robot-army's own, found whatever the PATH or launcher", async () => {
  for (const launcher of ["process", "tmux", "kitty"] as const) {
    assert.equal(await findWorkerProgram(await worker("demo-worker", launcher), { env: { PATH: "" } }), { found: DEMO_WORKER_SCRIPT });
  }
});

test("under tmux the name is looked up on the PATH the tmux server gives its windows, not on robot-army's", () => withTempDir(async (dir) => {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "agent"), "#!/bin/sh\n", { mode: 0o755 });
  const socket = `ra-program-${process.pid}`;
  const env = { ...process.env, TMUX: undefined, TMUX_TMPDIR: dir, PATH: `${bin}:${process.env.PATH}` };
  const tmux = (...args: string[]) => runCommand(["tmux", "-L", socket, ...args], env);
  const config = await worker("agent", "tmux", `tmux_socket = "${socket}"`);
  try {
    // No server yet: the one a launch starts takes robot-army's environment, PATH and all.
    assert.equal(await findWorkerProgram(config, { env }), { found: join(bin, "agent") });
    const started = await tmux("new-session", "-d", "-s", "other", "sleep 30", ";", "set-environment", "-g", "PATH", "/usr/bin:/bin");
    assert.is(started.code, 0, started.stderr);
    assert.equal(await findWorkerProgram(config, { env }), { missing: 'the worker program "agent" is not on the PATH a tmux window gets (worker.binary)' });
    assert.equal(await findWorkerProgram(await worker("sh", "tmux", `tmux_socket = "${socket}"`), { env }), { found: "/usr/bin/sh" });
    // The workers' session's own PATH wins over the server's.
    await tmux("new-session", "-d", "-s", "robot-army", "sleep 30", ";", "set-environment", "-t", "=robot-army", "PATH", bin);
    assert.equal(await findWorkerProgram(config, { env }), { found: join(bin, "agent") });
  } finally {
    await tmux("kill-server");
  }
}));

test.run();
