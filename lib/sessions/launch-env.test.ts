import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { takeLaunchEnv, withTerminal, writeLaunchEnv } from "./launch-env.ts";

test("a launch's environment is written 0600 in a 0700 folder of the state dir, and taken once: read and removed", () =>
  withTempDir((dir) => {
    const state = join(dir, "state");
    const file = writeLaunchEnv({ RA_STATE_DIR: state, ANTHROPIC_BASE_URL: "http://127.0.0.1:9", UNSET: undefined });
    assert.is(statSync(file).mode & 0o777, 0o600);
    assert.is(statSync(join(state, "launch-env")).mode & 0o777, 0o700);
    assert.equal(takeLaunchEnv(file), { RA_STATE_DIR: state, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" });
    assert.not.ok(existsSync(file));
    const error = (() => { try { takeLaunchEnv(file); } catch (e) { return e; } })();
    assert.instance(error, PreconditionError, "a second take finds nothing: never an empty environment");
  }));

test("a file others could read or write, a link, or one that is not an object of strings is refused and left in place", () =>
  withTempDir((dir) => {
    const open = join(dir, "open.json");
    writeFileSync(open, "{}");
    chmodSync(open, 0o644);
    const link = join(dir, "link.json");
    symlinkSync(writeLaunchEnv({ RA_STATE_DIR: join(dir, "state") }), link);
    const list = join(dir, "list.json");
    writeFileSync(list, "[1]", { mode: 0o600 });
    const numbers = join(dir, "numbers.json");
    writeFileSync(numbers, '{"A":1}', { mode: 0o600 });
    for (const file of [open, link, list, numbers, join(dir, "missing.json")]) {
      assert.throws(() => takeLaunchEnv(file), (error: Error) => error instanceof PreconditionError && error.message.includes(file));
    }
    for (const file of [open, list, numbers]) assert.ok(existsSync(file), `${file} is left for its owner`);
  }));

test("the terminal's own variables stay the terminal's: the launch's are dropped, the pane's kept", () => {
  assert.equal(withTerminal({ TERM: "dumb", TMUX_PANE: "%99", PATH: "/daemon/bin", HOME: "/home/o" }, { TERM: "tmux-256color", TMUX_PANE: "%3", PATH: "/server/bin" }), {
    TERM: "tmux-256color", TMUX_PANE: "%3", PATH: "/daemon/bin", HOME: "/home/o",
  });
});

test.run();
