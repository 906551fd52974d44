import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readRecord } from "../../sessions/records.ts";
import { stopSession } from "../../sessions/stop.ts";
import { KittyLauncher } from "./kitty.ts";
import { robotArmyArgv } from "./_self.ts";
import { writeKittyStandIn, writeUnreachableKitty } from "../../testing/kitty-standin.ts";
import type { KittyStandIn } from "../../testing/kitty-standin.ts";
import { LauncherTests, logOf, rejection, waitFor } from "../../testing/launchers.ts";
import type { LauncherDirs } from "../../testing/launchers.ts";
import { LaunchError } from "./types.ts";
import type { LaunchSpec, TabRef } from "./types.ts";

const tests = new LauncherTests();
const TO = "unix:/run/user/1000/kitty-test";
const SECRET = "PROMPT-c41e: rewrite the parser";
/** The store path the launches mark their windows with (only compared, never opened). */
const STORE = "/var/lib/robot-army/robot-army.db";

/** A test with the kitty stand-in written into its temp dir and a launcher that uses it. */
function kittyTest(name: string, fn: (dirs: LauncherDirs, kitty: KittyStandIn, launcher: KittyLauncher) => Promise<void>) {
  return tests.in(name, async (dirs) => {
    const kitty = writeKittyStandIn(dirs.dir);
    const launcher = new KittyLauncher({ env: { ...dirs.env, ...kitty.env }, binary: kitty.binary, to: TO });
    await fn(dirs, kitty, launcher);
  });
}

function spec(item: number, dirs: LauncherDirs, more: Partial<LaunchSpec> = {}): LaunchSpec {
  return { item, name: `ra-demo-${item}`, cwd: dirs.work, argv: ["sh", "-c", 'cat "$RA_PROMPT_FILE"; exec sleep 30'], tags: {}, ...more };
}

/** Writes the prompt file a launch hands over by path. */
function promptFile(dirs: LauncherDirs): string {
  const path = join(dirs.dir, "prompt.md");
  writeFileSync(path, SECRET + "\n", { mode: 0o600 });
  return path;
}

/** Asserts that no argument of any kitty call holds the prompt's text. */
function assertNoPromptInArgv(kitty: KittyStandIn): void {
  for (const call of kitty.calls()) {
    for (const arg of call.argv) assert.not.match(arg, "PROMPT-c41e", `kitty was called with the prompt in ${JSON.stringify(arg)}`);
  }
}

test("launch calls kitty @ launch with exactly this argv; the session runs the worker, the prompt by file", kittyTest("launch", async (dirs, kitty, launcher) => {
  const prompt = promptFile(dirs);
  const launched = await launcher.launch(spec(7, dirs, { tags: { repo: "o/demo", ra_store: STORE }, env: { HINT: "x y" }, stdinFile: prompt }));
  tests.note(dirs.root);
  // The daemon's environment travels by a 0600 file the holder takes (lib/sessions/launch-env.ts), named by one option.
  const argv = kitty.calls()[0].argv.map((arg: string) => arg.startsWith(`--launch-env=${join(dirs.state, "launch-env")}/`) ? "--launch-env=<launch env>" : arg);
  assert.equal(readdirSync(join(dirs.state, "launch-env")), [], "the launch's environment file is gone once it started");
  assert.equal(argv, [
    "@", "--to", TO,
    "launch", "--type=tab", "--hold", "--tab-title", "ra-demo-7", "--var", "ra_item=7", "--var", `ra_store=${STORE}`, "--cwd", dirs.work,
    "--env", `RA_STATE_DIR=${dirs.state}`, "--env", `RA_SESSION_ROOT=${dirs.root}`,
    "--", ...robotArmyArgv(), "session", "run", "--name=ra-demo-7", "--tag=ra_item=7", "--tag=repo=o/demo", `--tag=ra_store=${STORE}`, `--cwd=${dirs.work}`,
    "--env=HINT=x y", `--env=RA_PROMPT_FILE=${prompt}`, "--launch-env=<launch env>",
    "--", "sh", "-c", 'cat "$RA_PROMPT_FILE"; exec sleep 30',
  ]);
  assert.equal({ ...launched, sessionId: "" }, {
    launcher: "kitty", marker: "ra_item=7", sessionName: "ra-demo-7", sessionId: "", window: "1", terminal: { launcher: "kitty", to: TO },
  });
  const record = readRecord(dirs.root, launched.sessionId)!;
  assert.equal(record.tags, { ra_item: "7", repo: "o/demo", ra_store: STORE });
  await waitFor("the worker to read its prompt", () => logOf(record).includes(SECRET));
  await stopSession(dirs.root, record, { graceMs: 2_000 });
  assertNoPromptInArgv(kitty);
}));

test("find reads user_vars.ra_item from kitty @ ls, exactly: 7 is not 17", kittyTest("find", async (dirs, kitty, launcher) => {
  kitty.seed([{ id: 50, title: "ra-demo-17", vars: { ra_item: "17" } }, { id: 51, title: "owner's shell", vars: {} }]);
  assert.is(await launcher.find(7), null);
  assert.is(await launcher.find(1), null);
  assert.equal(await launcher.find(17), { launcher: "kitty", id: "50", marker: "ra_item=17", running: null });
  const launched = await launcher.launch(spec(7, dirs, { stdinFile: promptFile(dirs) }));
  tests.note(dirs.root);
  assert.is(launched.window, "52");
  assert.equal(await launcher.find(7), { launcher: "kitty", id: "52", marker: "ra_item=7", running: null });
  assert.equal(kitty.calls().filter((c) => c.argv.includes("ls")).map((c) => c.argv), Array(4).fill(["@", "--to", TO, "ls"]));
  await stopSession(dirs.root, readRecord(dirs.root, launched.sessionId)!, { graceMs: 2_000 });
}));

test("attachCommand focuses the tab with the item's anchored marker, and offers nothing for another item", kittyTest("attach", async (dirs, kitty, launcher) => {
  kitty.seed([{ id: 50, title: "ra-demo-17", vars: { ra_item: "17" } }]);
  const launched = await launcher.launch(spec(7, dirs, { stdinFile: promptFile(dirs) }));
  tests.note(dirs.root);
  assert.equal(await launcher.attachCommand(7), [kitty.binary, "@", "--to", TO, "focus-tab", "--match", "var:ra_item=^7$"]);
  assert.is(await launcher.attachCommand(8), null);
  await stopSession(dirs.root, readRecord(dirs.root, launched.sessionId)!, { graceMs: 2_000 });
}));

test("a kitty that cannot be reached: find unknown, never absent; launch a LaunchError", tests.in("unreachable", async (dirs) => {
  const launcher = new KittyLauncher({ env: dirs.env, binary: writeUnreachableKitty(dirs.dir) });
  assert.is(await launcher.find(7), "unknown");
  assert.is(await launcher.attachCommand(7), null);
  const error = await rejection(launcher.launch(spec(7, dirs)));
  assert.instance(error, LaunchError);
  assert.match(error.message, "(kitty): kitty @ launch failed: Error: Could not connect to the kitty socket");
}));

test("a worker that cannot start is a LaunchError; the tab is held open by kitty", kittyTest("cannot-start", async (dirs, kitty, launcher) => {
  const error = await rejection(launcher.launch(spec(9, dirs, { argv: ["/nonexistent/worker"] })));
  assert.instance(error, LaunchError);
  assert.match(error.message, 'its command "/nonexistent/worker" could not start');
  assert.match(error.message, "(kitty window 1)");
  assert.equal(kitty.tabs().map((t) => t.vars), [{ ra_item: "9" }]);
}));

test("tabs lists every window whose ra_item is exactly the item; closeTab closes one by id and both markers together", kittyTest("tabs", async (dirs, kitty, launcher) => {
  kitty.seed([
    { id: 50, title: "ra-demo-7", vars: { ra_item: "7", ra_store: STORE } },
    { id: 51, title: "ra-demo-17", vars: { ra_item: "17", ra_store: STORE } },
    { id: 52, title: "owner's shell", vars: {} },
    { id: 53, title: "ra-demo-7-2", vars: { ra_item: "7", ra_store: STORE } },
  ]);
  const tab = (id: string, item: number): TabRef => ({ launcher: "kitty", id, marker: `ra_item=${item}`, running: null, item, store: STORE });
  assert.equal(await launcher.tabs(7), [tab("50", 7), tab("53", 7)]);
  assert.equal(await launcher.markedTabs(), [tab("50", 7), tab("51", 17), tab("53", 7)]);
  assert.equal(await launcher.tabs(8), []);

  assert.is(await launcher.closeTab(tab("50", 7)), "closed");
  assert.equal(kitty.calls().at(-1)!.argv, ["@", "--to", TO, "close-window", "--match", "id:50 and var:ra_item=^7$ and var:ra_store=^/var/lib/robot\\x2darmy/robot\\x2darmy\\x2edb$"]);
  assert.is(await launcher.closeTab(tab("50", 7)), "gone", "closed already");
  // Window 51 is item 17's: listed as item 7's (a reused id), it is not closed.
  assert.is(await launcher.closeTab(tab("51", 7)), "gone");
  assert.equal(kitty.tabs().map((t) => t.id), [51, 52, 53]);
  assert.match((await rejection(launcher.closeTab(tab("x", 7)))).message, "is not a number");
}));

test("closeTab closes a window only while its ra_store is the store it was listed with, matched literally; never one without it", kittyTest("tabs-store", async (dirs, kitty, launcher) => {
  // Item ids start at 1 in every store: another state dir's item 7 and a window from before stores were marked carry the same ra_item.
  const weird = '/tmp/a b(c)"d=e.f*g$ and x';
  const near = "/tmp/a b(c)\"d=eXf*g$ and x";
  kitty.seed([
    { id: 60, title: "ra-demo-7", vars: { ra_item: "7", ra_store: weird } },
    { id: 61, title: "ra-other-7", vars: { ra_item: "7", ra_store: STORE } },
    { id: 62, title: "ra-old-7", vars: { ra_item: "7" } },
    { id: 63, title: "ra-near-7", vars: { ra_item: "7", ra_store: near } },
  ]);
  const listed = await launcher.tabs(7) as TabRef[];
  assert.equal(listed.map((t) => [t.id, t.store]), [["60", weird], ["61", STORE], ["62", null], ["63", near]]);
  const [mine, other, old, close] = listed;
  assert.is(await launcher.closeTab({ ...other, store: weird }), "gone", "another store's window is not closed");
  assert.is(await launcher.closeTab({ ...close, store: weird }), "gone", "a path differing where the regex would see '.' is not matched");
  assert.match((await rejection(launcher.closeTab(old))).message, "carries no ra_store");
  assert.is(await launcher.closeTab({ ...old, store: STORE }), "gone", "a window without ra_store is not closed as any store's");
  assert.equal(kitty.tabs().map((t) => t.id), [60, 61, 62, 63]);
  assert.is(await launcher.closeTab(mine), "closed");
  assert.equal(kitty.tabs().map((t) => t.id), [61, 62, 63]);
}));

test("sendText types into a window only while its id, its process (the session's holder) and both markers match, the text as it is on stdin, then a carriage return", kittyTest("send", async (dirs, kitty, launcher) => {
  kitty.seed([
    { id: 71, title: "ra-demo-17", vars: { ra_item: "17", ra_store: STORE } },
    { id: 72, title: "ra-old-7", vars: { ra_item: "7" } },
  ]);
  const launched = await launcher.launch(spec(7, dirs, { tags: { ra_store: STORE }, argv: ["sleep", "30"] }));
  tests.note(dirs.root);
  const holder = kitty.tabs().find((t) => String(t.id) === launched.window)!.pid!;
  const mine = (await launcher.tabs(7) as TabRef[]).find((t) => t.id === launched.window)!;
  const old = (await launcher.tabs(7) as TabRef[]).find((t) => t.id === "72")!;
  const text = String.raw`yes, use \e[31m and 'quotes' $HOME; élan`;
  assert.is(await launcher.sendText(mine, text, holder), "sent");
  assert.is(kitty.typed(Number(mine.id)), text + "\r", "typed as it is (no escape read), then Enter");
  const sends = kitty.calls().filter((call) => call.argv.includes("send-text"));
  const match = `id:${mine.id} and pid:${holder} and var:ra_item=^7$ and var:ra_store=^/var/lib/robot\\x2darmy/robot\\x2darmy\\x2edb$`;
  assert.equal(sends.map((call) => call.argv), [0, 1].map(() => ["@", "--to", TO, "send-text", "--match", match, "--stdin"]));
  // Window 71 is item 17's: listed as item 7's (a reused id), nothing is typed into it.
  assert.is(await launcher.sendText({ ...mine, id: "71" }, "no", holder), "gone");
  assert.is(await launcher.sendText({ ...mine, store: "/elsewhere/robot-army.db" }, "no", holder), "gone", "another store's window");
  // A pid no window runs (the worker's holder ended and its window, held open by --hold, runs nothing of it): nothing is typed.
  assert.is(await launcher.sendText(mine, "no", holder + 100000), "gone", "a window whose process is not the worker's holder");
  assert.match((await rejection(launcher.sendText(old, "no", holder))).message, "carries no ra_store");
  assert.is(kitty.typed(71) + kitty.typed(72), "");
  assert.is(kitty.typed(Number(mine.id)), text + "\r");
  await stopSession(dirs.root, readRecord(dirs.root, launched.sessionId)!, { graceMs: 2_000 });
}));

test("a kitty that cannot be reached: tabs unknown, never none; closeTab throws", tests.in("tabs-unreachable", async (dirs) => {
  const launcher = new KittyLauncher({ env: dirs.env, binary: writeUnreachableKitty(dirs.dir) });
  assert.is(await launcher.tabs(7), "unknown");
  assert.is(await launcher.markedTabs(), "unknown");
  const error = await rejection(launcher.closeTab({ launcher: "kitty", id: "3", marker: "ra_item=7", running: null, item: 7, store: STORE }));
  assert.match(error.message, "kitty @ close-window failed: Error: Could not connect to the kitty socket");
}));

test("no test left a session process running", () => {
  assert.equal(tests.leaked, []);
});

test.run();
