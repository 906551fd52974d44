import { test } from "uvu";
import * as assert from "uvu/assert";
import { PassThrough } from "node:stream";
import * as cli from "./cli.ts";
import { ask, asJson, asLines, runSubcommand } from "./cli.ts";
import type { FamilyDef } from "./cli.ts";
import { PreconditionError, UsageError } from "./errors.ts";

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
  const token = `ghp_${"E".repeat(36)}`;
  const written: string[] = [];
  const write = process.stderr.write;
  const exitCode = process.exitCode;
  process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    await cli.runMain(() => Promise.reject(new PreconditionError(`git push https://x:${token}@host failed`)), []);
    await cli.runMain(() => Promise.reject(new Error(`boom ${token}`)), []);
  } finally {
    process.stderr.write = write;
    process.exitCode = exitCode;
  }
  assert.is(written[0], "robot-army: git push https://x:[redacted]@host failed\n");
  assert.match(written[1], /^robot-army: unexpected error: Error: boom \[redacted\]/);
  assert.not.match(written.join(""), "ghp_");
});

test.run();
