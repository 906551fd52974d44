import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { Normaliser } from "./normalise.ts";

const UUID_A = "3f2c9a1e-8b7d-4c6e-9f01-23456789abcd";
const UUID_B = "00000000-1111-4222-8333-444455556666";
const SHA_A = "a".repeat(40);
const SHA_B = "0123456789abcdef0123456789abcdef01234567";
const REAL_NOW = Date.parse("2026-06-01T12:00:00Z");

function normaliser(places = [{ path: "/tmp/ra-x/repo", placeholder: "<repo>" }, { path: "/tmp/ra-x", placeholder: "<tmp>" }]) {
  return new Normaliser(places, "build-host", REAL_NOW);
}

test("a dashboard form's CSRF token, new with every serve, reads as <csrf>", () => {
  const n = new Normaliser([]);
  assert.is(n.normalise('<input type="hidden" name="csrf" value="8YUf7ZPzz8fhWzlNTnVyfBoMG2OGkhJ_cBa_m_uMoWE">'), '<input type="hidden" name="csrf" value="<csrf>">');
});

test("the longest path wins, whatever order the places come in", () => {
  const n = normaliser([{ path: "/tmp/ra-x", placeholder: "<tmp>" }, { path: "/tmp/ra-x/home", placeholder: "<home>" }, { path: "/tmp/ra-x/repo", placeholder: "<repo>" }]);
  assert.is(n.normalise("/tmp/ra-x/repo/.ai and /tmp/ra-x/home/.config and /tmp/ra-x/other"), "<repo>/.ai and <home>/.config and <tmp>/other");
});

test("a path ends where a name cannot go on", () => {
  const n = normaliser();
  assert.is(n.normalise("/tmp/ra-x/repo.git /tmp/ra-x/repository /tmp/ra-x/repo."), "<tmp>/repo.git <tmp>/repository <repo>.");
});

test("a folder reached through a symlink is known by its real path too", () => {
  const dir = makeTempDir("robot-army-normalise-");
  try {
    mkdirSync(join(dir, "real"));
    symlinkSync(join(dir, "real"), join(dir, "link"));
    const n = new Normaliser([{ path: join(dir, "link"), placeholder: "<repo>" }], "build-host", REAL_NOW);
    assert.is(n.normalise(`${dir}/link/a ${dir}/real/b`), "<repo>/a <repo>/b");
  } finally {
    removeTempDir(dir);
  }
});

test("ids and SHAs are numbered by first appearance across the whole scenario", () => {
  const n = normaliser();
  assert.is(n.normalise(`episode ${UUID_B} at ${SHA_B}`), "episode <id-1> at <sha-1>");
  assert.is(n.normalise(`${UUID_A} then ${UUID_B.toUpperCase()} again, ${SHA_A} ${SHA_B}`), "<id-2> then <id-1> again, <sha-2> <sha-1>");
});

test("ids in a path are numbered after the path is replaced", () => {
  const n = normaliser();
  assert.is(n.normalise(`/tmp/ra-x/repo/.ai/${UUID_A}.json`), "<repo>/.ai/<id-1>.json");
});

test("reading a file does not claim numbers for what only it holds", () => {
  const n = normaliser();
  n.normalise(UUID_A);
  assert.is(n.normalise(`${UUID_A} ${UUID_B}`, { record: false }), "<id-1> <id-2>");
  assert.is(n.normalise(`${SHA_A} ${UUID_B}`), "<sha-1> <id-2>");
});

test("the host is replaced only as a whole word", () => {
  const n = normaliser();
  assert.is(n.normalise("on build-host, not build-hosts or my-build-host or build-host.example"), "on <host>, not build-hosts or my-build-host or build-host.example");
});

test("elapsed times become <duration>, ages from the fixed clock stay", () => {
  const n = normaliser();
  assert.is(n.normalise("took 12ms, 0.4ms and 1.52s"), "took <duration>, <duration> and <duration>");
  assert.is(n.normalise("idle 12h, last seen 30m ago, 5s, 1h 30m, 2d, v1.52s"), "idle 12h, last seen 30m ago, 5s, 1h 30m, 2d, v1.52s");
  // How long a session's command ran, as its holder measured it on the real clock.
  assert.is(n.normalise(`"ranSeconds": 0.1, "ranSeconds":12, "max_seconds": 3`), `"ranSeconds": <duration>, "ranSeconds":<duration>, "max_seconds": 3`);
});

test("a process's start counted from boot becomes <start-id>, and takes no id number", () => {
  const n = normaliser();
  assert.is(
    n.normalise(`"start_id": "e7b6e179-ce34-4c4a-8d73-f06f0f1b7188:8812345" id 3f2c1a9b-0000-4000-8000-000000000001`),
    `"start_id": "<start-id>" id <id-1>`,
  );
});

test("process ids become <pid>", () => {
  const n = normaliser();
  assert.is(n.normalise(`client pid 12345, pid=77 {"pid": 4242, "client_pid":9}`), `client pid <pid>, pid=<pid> {"pid": <pid>, "client_pid":<pid>}`);
  assert.is(n.normalise("rapid 5 and pids 3"), "rapid 5 and pids 3");
});

test("times from the real clock become <real-time>, the scenario's clock stays", () => {
  const n = normaliser();
  assert.is(n.normalise("started 2026-06-01T11:59:58.120Z, now 2026-01-15T10:00:00Z"), "started <real-time>, now 2026-01-15T10:00:00Z");
});

test("short ids share the number of the full id they start, in either order; camel-case pids become <pid>", () => {
  const n = new Normaliser([], "", 0);
  const id = "9c366dbd-1111-4111-8111-111111111111";
  assert.is(n.normalise("victim 9c366dbd up"), "victim <id-1> up");
  assert.is(n.normalise(`started ${id}`), "started <id-1>");
  assert.is(n.normalise("12345678 stays a number"), "12345678 stays a number");
  assert.is(n.normalise('"holderPid": 5019, "childPgid": 77, "rapid": 5'), '"holderPid": <pid>, "childPgid": <pid>, "rapid": 5');
});

test("a short id of eight decimal digits is an id once it is known to exist, numbered where it first appears", () => {
  const n = new Normaliser([], "", 0);
  n.knowIds(["91547638-2222-4222-8222-222222222222"]);
  assert.is(n.normalise("ra-demo-2  9c366dbd  up"), "ra-demo-2  <id-1>  up");
  assert.is(n.normalise("ra-demo-1  91547638  up, 12345678 stays a number"), "ra-demo-1  <id-2>  up, 12345678 stays a number");
  assert.is(n.normalise("again 91547638-2222-4222-8222-222222222222"), "again <id-2>");
});

test("tool versions become <version>", () => {
  const n = new Normaliser([], "", 0);
  assert.is(n.normalise("ok git version 2.39.5; ok tmux 3.3a"), "ok git version <version>; ok tmux <version>");
});

test("sizes on disk, which depend on the file system, become placeholders in text and JSON", () => {
  const n = normaliser();
  assert.is(n.normalise("issue-1  item 1  b  52.0 KiB  clean\ntotal: 2 worktrees, 1.2 MiB"), "issue-1  item 1  b  <size>  clean\ntotal: 2 worktrees, <size>");
  assert.is(n.normalise('"size_bytes": 53248, "total_bytes": 10, "bytes": 7'), '"size_bytes": <bytes>, "total_bytes": <bytes>, "bytes": 7');
});

test("a commit's short form where it is named (committed, head) is numbered by first appearance; other hex words are left", () => {
  const n = new Normaliser([], "");
  assert.is(n.normalise("committed 0a60dd7 on main; head 0a60dd7; head 1d0f0fa"), "committed <commit-1> on main; head <commit-1>; head <commit-2>");
  assert.is(n.normalise("check \"tests\" failed on 1d0f0fa of pull request #6"), "check \"tests\" failed on <commit-2> of pull request #6");
  assert.is(n.normalise("colour #0a60dd7 and cafe123 stay; on deadbee today"), "colour #0a60dd7 and cafe123 stay; on deadbee today");
});

test.run();
