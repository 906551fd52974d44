// `robot-army forge serve` runs until a signal, so it is tested here rather than in a scenario.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { signalChild, withTempDir } from "../testing/fixtures.ts";
import { PROJECT_ROOT, runtimeArgv } from "../runtime.ts";
import { seedForge } from "./seed.ts";

const ROBOT_ARMY = join(PROJECT_ROOT, "scripts/robot-army.ts");

/** Starts `robot-army forge serve ...` and resolves once it says where it listens. */
function serve(args: string[], env: Record<string, string> = {}) {
  const [command, ...rest] = runtimeArgv(ROBOT_ARMY);
  const child = spawn(command, [...rest, "forge", "serve", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      const match = /forge listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout);
      if (match) resolve(match[1]);
    });
    exited.then((code) => reject(new Error(`forge serve exited ${code} before listening: ${stderr}`)));
  });
  const signal = (name: NodeJS.Signals) => signalChild(child, name);
  return { signal, listening, exited, output: () => ({ stdout, stderr }) };
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`forge serve prints its URL, serves the seeded forge, and on ${signal} closes cleanly with exit 0`, () =>
    withTempDir(async (dir) => {
      const seeded = await seedForge(join(dir, "forge"));
      const server = serve(["--dir", join(dir, "forge"), "--port", "0"]);
      const url = await server.listening;
      const res = await fetch(`${url}/user`, { headers: { authorization: `token ${readFileSync(seeded.users[0].token_file, "utf8")}` } });
      assert.is(res.status, 200);
      assert.is(((await res.json()) as { login: string }).login, "owner");
      server.signal(signal);
      assert.is(await server.exited, 0, server.output().stderr);
      assert.match(server.output().stdout, "forge stopped");
      assert.is(JSON.parse(readFileSync(join(dir, "forge/stats.json"), "utf8")).total, 1, "the last stats are written on the way out");
    }));
}

test("forge serve keeps its state in <state dir>/forge by default, and follows RA_NOW", () =>
  withTempDir(async (dir) => {
    const state = join(dir, "state");
    const seeded = await seedForge(join(state, "forge"));
    const server = serve(["--port", "0"], { RA_STATE_DIR: state, RA_NOW: "2026-05-01T08:00:00Z" });
    const url = await server.listening;
    try {
      const res = await fetch(`${url}/repos/demo/widgets/issues`, {
        method: "POST",
        headers: { authorization: `token ${readFileSync(seeded.users[0].token_file, "utf8")}` },
        body: JSON.stringify({ title: "Made at a fixed time" }),
      });
      assert.is(res.status, 201);
      assert.is(((await res.json()) as { created_at: string }).created_at, "2026-05-01T08:00:00Z");
    } finally {
      server.signal("SIGTERM");
      await server.exited;
    }
  }));

test("forge serve with a port that is not a number is a usage error (exit 2) with the help", () =>
  withTempDir(async (dir) => {
    const server = serve(["--dir", dir, "--port", "eighty"]);
    server.listening.catch(() => undefined);
    assert.is(await server.exited, 2);
    assert.match(server.output().stderr, '--port must be a whole number of at least 0, got "eighty"');
    assert.match(server.output().stderr, "Usage: robot-army forge serve");
  }));

test("forge serve on a port already taken is a precondition error (exit 3) saying so", () =>
  withTempDir(async (dir) => {
    const first = serve(["--dir", join(dir, "a"), "--port", "0"]);
    const port = new URL(await first.listening).port;
    try {
      const second = serve(["--dir", join(dir, "b"), "--port", port]);
      second.listening.catch(() => undefined);
      assert.is(await second.exited, 3);
      assert.match(second.output().stderr, `robot-army: Port ${port} on 127.0.0.1 is in use`);
    } finally {
      first.signal("SIGTERM");
      await first.exited;
    }
  }));

test.run();
