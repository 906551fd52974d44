import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PATH_FIRST_VARIABLE } from "../../sessions/holder.ts";
import { LauncherTests, waitFor } from "../../testing/launchers.ts";
import type { LauncherDirs } from "../../testing/launchers.ts";
import { runCommand } from "../../run-command.ts";
import { TmuxLauncher } from "./tmux.ts";
import { launcherText, workerBinDir, writeWorkerLauncher } from "./worker-bin.ts";

const tests = new LauncherTests();
const SESSION = "ra-workers";
/** The test's own tmux server: `-L <socket>`, its socket in the test's temp dir (TMUX_TMPDIR). */
const SOCKET = `ra-bin-test-${process.pid}`;

/** Kills the test's own tmux server (never another) and waits until its process is gone. */
async function killServer(dirs: LauncherDirs): Promise<void> {
  const shown = await runCommand(["tmux", "-L", SOCKET, "display-message", "-p", "#{pid}"], dirs.env);
  await runCommand(["tmux", "-L", SOCKET, "kill-server"], dirs.env);
  const pid = Number(shown.stdout.trim());
  if (shown.code === 0 && pid > 1) await waitFor(`tmux server ${pid} to exit`, () => !isAlive(pid));
}

function isAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}

test("the launcher is a 0700 script in a 0700 <state dir>/bin that execs this robot-army, rewritten only when it changed", tests.in("file", async (dirs) => {
  const file = writeWorkerLauncher(dirs.state);
  assert.is(file, join(workerBinDir(dirs.state), "robot-army"));
  assert.is(statSync(file).mode & 0o777, 0o700);
  assert.is(statSync(workerBinDir(dirs.state)).mode & 0o777, 0o700);
  assert.is(launcherText(["/opt/node", "/x y/bin/robot-army.mjs"]), `#!/bin/sh\n# robot-army for its workers: written by robot-army at each worker's start (never edit it).\nexec /opt/node '/x y/bin/robot-army.mjs' "$@"\n`);
  const before = statSync(file).mtimeMs;
  writeWorkerLauncher(dirs.state);
  assert.is(statSync(file).mtimeMs, before, "an unchanged launcher is left as it is");
  writeFileSync(file, "#!/bin/sh\nexit 9\n");
  writeWorkerLauncher(dirs.state);
  assert.not.match(readFileSync(file, "utf8"), "exit 9");
}));

test("a worker started by tmux, whose window's PATH has no robot-army, runs robot-army from its state dir", tests.in("tmux-path", async (dirs) => {
  // The tmux server (and so every window) gets a PATH with no robot-army on it.
  const env = { ...dirs.env, PATH: "/usr/bin:/bin" };
  const launcher = new TmuxLauncher({ env, session: SESSION, socket: SOCKET });
  try {
    writeWorkerLauncher(dirs.state);
    const out = join(dirs.work, "out.txt");
    const script = 'printf "%s\\n" "$(command -v robot-army)" > "$0"; robot-army --help >> "$0" 2>&1; echo "exit $?" >> "$0"; exec sleep 30';
    await launcher.launch({
      item: 3, name: "ra-demo-3", cwd: dirs.work, argv: ["sh", "-c", script, out], tags: {},
      env: { [PATH_FIRST_VARIABLE]: workerBinDir(dirs.state) },
    });
    tests.note(dirs.root);
    const written = await waitFor("the worker's output", () => {
      try {
        const text = readFileSync(out, "utf8");
        return /exit \d+/.test(text) ? text : undefined;
      } catch {
        return undefined;
      }
    }, 30_000);
    const [where] = written.split("\n");
    assert.is(where, join(workerBinDir(dirs.state), "robot-army"));
    assert.match(written, "Usage:");
    assert.match(written, "exit 0");
  } finally {
    await killServer(dirs);
  }
}));

test("no test left a session process running", () => {
  assert.equal(tests.leaked, []);
});

test.run();
