import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { makeGitRepo, withTempDir } from "./testing/fixtures.ts";
import { PROJECT_ROOT } from "./runtime.ts";

const BIN = join(PROJECT_ROOT, "bin", "robot-army.mjs");
const NODE = join(PROJECT_ROOT, "node_modules", "node", "bin", "node");

/** Runs the bin from a shell, as a hook would, on a Node that cannot strip types; prints the shell's pid first. */
function throughOldNode(cwd: string, args: string[], env: Record<string, string>) {
  const script = `echo $$; "${NODE}" --no-experimental-strip-types "${BIN}" "$@"; echo "exit $?"`;
  return spawnSync("sh", ["-c", script, "sh", ...args], { cwd, encoding: "utf8", env: { ...process.env, ...env } });
}

test("a Node that cannot run TypeScript hands over to the project's Node 24, passing on the exit code", () =>
  withTempDir(async (dir) => {
    const result = throughOldNode(dir, ["session", "run", "--", "sh", "-c", "exit 7"], { RA_STATE_DIR: join(dir, "state") });
    assert.match(result.stdout, /exit 7\n$/);
    assert.is(result.stderr, "");
  }));

test("after a handover, the caller is the process that ran the wrapper, not the wrapper", () =>
  withTempDir(async (dir) => {
    const repo = makeGitRepo(join(dir, "repo"));
    const result = throughOldNode(repo, ["episode", "start", "--key", "w1", "--json"], { RA_STATE_DIR: join(dir, "state") });
    const [shellPid, ...rest] = result.stdout.split("\n");
    const episode = JSON.parse(rest.join("\n").replace(/exit \d+\n?$/, ""));
    assert.is(episode.client.pid, Number(shellPid));
  }));

test.run();
