import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import * as cli from "./cli.ts";
import { ask, asJson, asLines, runSubcommand } from "./cli.ts";
import type { FamilyDef } from "./cli.ts";
import { UsageError } from "./errors.ts";
import { PROJECT_ROOT, runtimeArgv } from "./runtime.ts";
import { withTempDir } from "./testing/fixtures.ts";

/** A stdin that is not a terminal, fed `text` and then closed (or left open when `text` is undefined). */
function input(text?: string): PassThrough & { isTTY?: boolean } {
  const stream = new PassThrough();
  if (text !== undefined) stream.end(text);
  return stream;
}

function output(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  return { stream, text: () => chunks.join("") };
}

test("ask reads one line of the answer, piped in as typing it would be", async () => {
  const out = output();
  assert.equal(await ask("Type 1 to confirm: ", { input: input("1\nmore\n"), output: out.stream }), { line: "1" });
  assert.is(out.text(), "Type 1 to confirm: ");
});

test("ask with no stdin at all leaves the question unanswered and ends its line", async () => {
  const out = output();
  assert.equal(await ask("Type 1 to confirm: ", { input: input(""), output: out.stream }), { unanswered: "no stdin" });
  assert.is(out.text(), "Type 1 to confirm: \n");
});

test("ask twice: a line piped in past the first answer answers the second, and once the input has ended a question is unanswered at once", async () => {
  const out = output();
  const piped = input("y\nyes\n");
  assert.equal(await ask("First? ", { input: piped, output: out.stream }), { line: "y" });
  assert.equal(await ask("Second? ", { input: piped, output: out.stream }), { line: "yes" });
  const ended = input("");
  assert.equal(await ask("First? ", { input: ended, output: out.stream }), { unanswered: "no stdin" });
  // A new reader on an input whose end has come would wait for ever: the command would end with its question unanswered and no exit code of its own.
  assert.equal(await ask("Second? ", { input: ended, output: out.stream }), { unanswered: "no stdin" });
  assert.is(out.text(), "First? Second? \nFirst? \nSecond? \n");
});

test("ask: Ctrl-C at a terminal's question leaves it unanswered as interrupted", async () => {
  const out = output();
  // A terminal's Ctrl-C reaches readline as the byte 0x03, which it raises as SIGINT on the interface.
  const stdin = Object.assign(input(), { isTTY: true });
  const answer = ask("Type 1 to confirm: ", { input: stdin, output: out.stream });
  stdin.write("\x03");
  assert.equal(await answer, { unanswered: "interrupted" });
  assert.match(out.text(), /Type 1 to confirm: .*\n$/s);
});

test("asLines and asJson are what print and printJson write", () => {
  assert.is(asLines("a", "", "b"), "a\n\nb\n");
  assert.is(asLines(), "");
  assert.is(asJson({ a: [1] }), '{\n  "a": [\n    1\n  ]\n}\n');
});

const family: FamilyDef = {
  name: "demo",
  summary: "A family",
  subcommands: {
    echo: {
      command: { name: "demo echo", summary: "Echo", usage: "demo echo <word>", positionals: { min: 1, max: 1 } },
      run: async (args) => Number(args.positionals[0]),
    },
  },
};

test("runSubcommand routes argv to the subcommand; the family router is not called dispatch", async () => {
  assert.is(await runSubcommand(family, ["echo", "7"]), 7);
  try {
    await runSubcommand(family, ["nope"]);
    assert.unreachable("an unknown subcommand is a usage error");
  } catch (error) {
    assert.instance(error, UsageError);
    assert.match((error as Error).message, 'Unknown subcommand "demo nope"');
  }
  assert.not.ok("dispatch" in cli, "dispatching is what robot-army does to workers, not to subcommands");
});

test("the top-level catch prints an error with its secrets redacted, expected or not", async () => {
  await withTempDir(async (dir) => {
    const token = `ghp_${"E".repeat(36)}`;
    // A process of its own: the catch writes straight to the stderr descriptor, as a command's does.
    const script = join(dir, "fail.ts");
    writeFileSync(script, [
      `import { runMain } from ${JSON.stringify(join(PROJECT_ROOT, "lib", "cli.ts"))};`,
      `import { PreconditionError } from ${JSON.stringify(join(PROJECT_ROOT, "lib", "errors.ts"))};`,
      `await runMain(() => Promise.reject(new PreconditionError("git push https://x:${token}@host failed")), []);`,
      `const expected = process.exitCode;`,
      `await runMain(() => Promise.reject(new Error("boom ${token}")), []);`,
      `process.stdout.write(JSON.stringify([expected, process.exitCode]));`,
    ].join("\n"));
    const [binary, ...prefix] = runtimeArgv(script);
    const child = spawn(binary, prefix, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
    const { code, stderr } = await exitOf(child);
    const written = stderr.split(/(?=robot-army: )/);
    assert.is(written[0], "robot-army: git push https://x:[redacted]@host failed\n");
    assert.match(written[1], /^robot-army: unexpected error: Error: boom \[redacted\]/);
    assert.not.match(stderr, "ghp_");
    assert.equal(JSON.parse(Buffer.concat(stdout).toString()), [3, 1]);
    assert.is(code, 1);
  });
});

test("stdout made non-blocking by whoever shares it (EAGAIN while its reader is behind) still gets every byte", async () => {
  await withTempDir(async (dir) => {
    const script = join(dir, "big.ts");
    const size = 4 << 20;
    writeFileSync(script, [
      `import { runMain, writeStdoutVerbatim } from ${JSON.stringify(join(PROJECT_ROOT, "lib", "cli.ts"))};`,
      // Node's own stream for a pipe turns the descriptor non-blocking, for every process that shares it.
      `process.stdout;`,
      `await runMain(async () => writeStdoutVerbatim(new Uint8Array(${size}).fill(65)), []);`,
    ].join("\n"));
    const [binary, ...prefix] = runtimeArgv(script);
    const child = spawn(binary, prefix, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let received = 0;
    // The reader starts late: the pipe is full long before.
    setTimeout(() => child.stdout!.on("data", (chunk: Buffer) => received += chunk.length), 1_000);
    const { code, stderr } = await exitOf(child);
    assert.is(stderr, "");
    assert.is(code, 0);
    assert.is(received, size);
  });
});

/** The real binary on this test's runtime, with a fresh HOME and state dir under `dir`. */
function spawnRobotArmy(argv: string[], dir: string, stdout: "pipe" | number, extraEnv: Record<string, string> = {}) {
  const [binary, ...prefix] = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  const env = { ...process.env, HOME: dir, RA_STATE_DIR: join(dir, "state"), XDG_CONFIG_HOME: join(dir, "config"), ...extraEnv };
  return spawn(binary, [...prefix, ...argv], { env, stdio: ["ignore", stdout, "pipe"] });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  const chunks: Buffer[] = [];
  child.stderr!.on("data", (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr: Buffer.concat(chunks).toString() })));
}

test("integerOption takes at most its maximum, by default the largest number counted exactly", () => {
  const def: cli.CommandDef = { name: "x", summary: "x", usage: "x", options: { n: { type: "string", description: "n" } } };
  const read = (value: string, max?: number) => cli.integerOption(cli.parse(def, ["--n", value]), "n", 1, max);
  assert.is(read("9007199254740991"), Number.MAX_SAFE_INTEGER);
  assert.throws(() => read("9223372036854775807"), (e: unknown) => e instanceof UsageError && e.message === '--n must be a whole number from 1 to 9007199254740991, got "9223372036854775807"');
  assert.throws(() => read("99999999999999999999", 2 ** 31 - 1), (e: unknown) => e instanceof UsageError && e.message === '--n must be a whole number from 1 to 2147483647, got "99999999999999999999"');
  assert.is(read("4194304", 2 ** 31 - 1), 4194304);
});

test("a read command whose stdout reader went away (EPIPE) ends quietly with its own exit code", async () => {
  await withTempDir(async (dir) => {
    for (const argv of [["log"], ["status"], ["--help"]]) {
      const child = spawnRobotArmy(argv, dir, "pipe");
      child.stdout!.destroy();
      const { code, stderr } = await exitOf(child);
      assert.is(stderr, "", `robot-army ${argv.join(" ")}`);
      assert.is(code, 0, `robot-army ${argv.join(" ")}`);
    }
  });
});

test("a command whose stderr reader went away (`2>&1 | head -1`) still ends with its own exit code", async () => {
  await withTempDir(async (dir) => {
    const child = spawnRobotArmy(["log", "--limit", "0"], dir, "pipe");
    child.stdout!.destroy();
    child.stderr!.destroy();
    const code = await new Promise((resolve) => child.on("close", resolve));
    assert.is(code, 2, "a usage error, its message and help going nowhere");
  });
});

test("a read command whose stdout is full says so in one line on stderr and exits 1", async () => {
  await withTempDir(async (dir) => {
    // /dev/full is only opened as the child's stdout, as `> /dev/full` would.
    const full = openSync("/dev/full", "w");
    try {
      for (const argv of [["status"], ["log", "--json"]]) {
        const { code, stderr } = await exitOf(spawnRobotArmy(argv, dir, full));
        assert.is(code, 1, `robot-army ${argv.join(" ")}`);
        assert.match(stderr, /^robot-army: Cannot write the output: .*(ENOSPC|No space left on device)[^\n]*\n$/);
      }
    } finally {
      closeSync(full);
    }
  });
});
test.run();
