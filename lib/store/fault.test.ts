import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseFault } from "./fault.ts";
import { runtimeArgv } from "../runtime.ts";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";

test("RA_FAULT names a kind, a phase and which occurrence; unset is inert", () => {
  assert.equal(parseFault(undefined), null);
  assert.equal(parseFault(""), null);
  assert.equal(parseFault("github.comment:intent"), { kind: "github.comment", phase: "intent", nth: 1 });
  assert.equal(parseFault("session.stop:outcome:3"), { kind: "session.stop", phase: "outcome", nth: 3 });
  for (const bad of ["github.comment", "github.comment:before", "x:intent:0", "x:intent:1.5", "x:intent:2:9", ":intent"]) {
    assert.throws(() => parseFault(bad), /RA_FAULT=/, bad);
  }
});

// A child process that opens a real store and writes three records, printing a line after each.
const CHILD = `
import { openStore } from ${JSON.stringify(new URL("./open.ts", import.meta.url).href)};
import { appendAudit } from ${JSON.stringify(new URL("./audit.ts", import.meta.url).href)};
import { spawnSync } from "node:child_process";
const store = await openStore(process.argv.at(-1));
const inherited = spawnSync("sh", ["-c", 'printf %s "$RA_FAULT"'], { encoding: "utf8" }).stdout;
if (inherited) console.log("a child inherited RA_FAULT=" + inherited);
for (const n of [1, 2, 3]) {
  appendAudit(store, { kind: "github.comment", phase: "intent", actionId: "a" + n });
  console.log("wrote " + n);
}
`;

function runChild(fault: string | undefined): { stdout: string; signal: string | null; status: number | null; stderr: string } {
  const dir = makeTempDir();
  const script = `${dir}/child.ts`;
  writeFileSync(script, CHILD);
  const [command, ...args] = runtimeArgv(script);
  const result = spawnSync(command, [...args, dir], {
    encoding: "utf8",
    env: { ...process.env, RA_FAULT: fault ?? "" },
  });
  removeTempDir(dir);
  return { stdout: result.stdout, signal: result.signal, status: result.status, stderr: result.stderr };
}

test("the process SIGKILLs itself right after the nth record of that kind and phase is on disk", () => {
  const crashed = runChild("github.comment:intent:2");
  assert.is(crashed.signal, "SIGKILL", crashed.stderr);
  assert.is(crashed.stdout, "wrote 1\n");
  const other = runChild("github.comment:outcome");
  assert.is(other.status, 0, other.stderr);
  assert.is(other.stdout, "wrote 1\nwrote 2\nwrote 3\n");
});

test("a process the faulted one starts does not inherit the fault", () => {
  const result = runChild("github.comment:outcome");
  assert.not.match(result.stdout, "inherited");
});

test("an unreadable RA_FAULT fails the first record instead of crashing nothing", () => {
  const result = runChild("github.comment");
  assert.is.not(result.status, 0);
  assert.match(result.stderr, /RA_FAULT="github.comment" is not/);
  assert.is(result.stdout, "");
});

test.run();
