/**
 * The worlds a crash case starts from, each made through the real commands in a fresh lab,
 * up to the moment before the command that crosses the case's boundary: an onboarded and
 * polled repository, a demo worker that has committed, pushed and opened its pull request,
 * that worker ended, its exit record damaged, a stranded episode, the managed sessions
 * each step of `session gc` acts on, and a worker's tmux tab left after its session ended.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listRecords } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import { exitedPid, git } from "../testing/fixtures.ts";
import { startNotifyReceivers } from "../testing/notify-receivers.ts";
import { onboardHere } from "../testing/onboard-here.ts";
import { LAB_NOW } from "./lab.ts";
import type { Lab } from "./lab.ts";

/** The name of a world a crash case starts from. */
export type CrashSetupName =
  | "polled" | "working" | "merged" | "worker-ended" | "spool-damaged" | "episode-stranded"
  | "session-ended" | "session-orphaned" | "session-cwd-gone" | "permanent-ended" | "permanent-flapping" | "tab-left"
  | "worktree-vanished"
  | "cleanable" | "record-left" | "bundle-old" | "notifying" | "claude-untrusted" | "tmux-worker" | "tmux-worker-feedback";

/** Every setup, by name: it brings a fresh lab to the moment before the crossing. */
export const CRASH_SETUPS: Record<CrashSetupName, (lab: Lab) => Promise<void>> = {
  /**
   * Issue 1 done and its idle worker retired (ten minutes on): the worker committed and
   * pushed its episode's record as it ended, so its worktree is clean and origin has its
   * branch. Cleanup is off: nothing has reclaimed the worktree yet.
   */
  cleanable: async (lab) => {
    await CRASH_SETUPS.merged(lab);
    const tick = await lab.robotArmy(["run", "--once", "--effect-level", "live"], { env: { RA_NOW: "2026-01-15T10:10:00Z" } });
    if (tick.code !== 0) throw new Error(`the retiring tick exited ${tick.code}: ${tick.stderr || tick.stdout}`);
    const worktree = join(lab.stateDir, "worktrees", "demo", "widgets", "issue-1");
    await waitUntil(lab, "the retired worker to leave its worktree clean", async () => git(worktree, "status", "--porcelain", "--untracked-files=all") === "");
  },
  /**
   * `cleanable`, and then an agent's session in the worktree (Claude Code's hooks, as robot-army
   * writes them for a worker: SessionStart, then SessionEnd) whose end left the episode's record
   * uncommitted: the worktree's only uncommitted file is the record robot-army wrote.
   */
  "record-left": async (lab) => {
    await CRASH_SETUPS.cleanable(lab);
    const worktree = join(lab.stateDir, "worktrees", "demo", "widgets", "issue-1");
    for (const event of ["SessionStart", "SessionEnd"]) {
      const hook = await lab.robotArmy(["episode", "hook", "claude", "--key", "item-1"], {
        env: { CLAUDE_PROJECT_DIR: worktree, RA_NOW: "2026-01-15T10:10:00Z" }, stdin: JSON.stringify({ hook_event_name: event, cwd: worktree }),
      });
      // The hook says what it did on stderr; a problem is a line beginning "robot-army: episode hook:".
      if (hook.code !== 0 || hook.stderr.includes("robot-army: episode hook:")) throw new Error(`the ${event} hook exited ${hook.code}: ${hook.stderr || hook.stdout}`);
    }
    const left = git(worktree, "status", "--porcelain", "--untracked-files=all").split("\n").filter(Boolean);
    if (left.length !== 1 || !/^\?\? \.ai\/repo\/sessions\/.+\.md$/.test(left[0])) throw new Error(`the worktree should hold only the hook's record, not: ${left.join("; ")}`);
  },
  /** Item 1 cleaned up at 10:10 by `robot-army cleanup 1`, which wrote its branch's bundle: six weeks on it is older than keep_bundles (30d). */
  "bundle-old": async (lab) => {
    await CRASH_SETUPS.cleanable(lab);
    const cleaned = await lab.robotArmy(["cleanup", "1", "--effect-level", "live"], { env: { RA_NOW: "2026-01-15T10:10:00Z" } });
    if (cleaned.code !== 0) throw new Error(`cleanup 1 exited ${cleaned.code}: ${cleaned.stderr || cleaned.stdout}`);
  },
  /** demo/widgets onboarded and polled at live: issue 1 is a ready item, its "queued" comment posted. */
  polled: (lab) => onboardAndPoll(lab),
  /**
   * `polled`, with a loopback webhook (lib/testing/notify-receivers.ts, closed with the lab)
   * configured and dispatches told: the next tick's dispatch of issue 1 is notified.
   */
  notifying: async (lab) => {
    await onboardAndPoll(lab);
    const receivers = await startNotifyReceivers(join(lab.dir, "receivers"));
    const close = lab.close;
    lab.close = async () => {
      try {
        await close();
      } finally {
        await receivers.close();
      }
    };
    appendFileSync(lab.configFile, `\n[health]\nwebhook_url = ${JSON.stringify(receivers.webhookUrl)}\n\n[notifications]\nevents = ["dispatch"]\n`);
  },
  /** One tick dispatched issue 1: its demo worker committed, pushed, opened its pull request and waits, idle. */
  working: async (lab) => {
    await CRASH_SETUPS.polled(lab);
    await lab.mustRun(["run", "--once", "--effect-level", "live"]);
    await waitUntil(lab, "the demo worker to open its pull request", async () => (await lab.api("GET", "/repos/demo/widgets/pulls")).length > 0);
  },
  /** The owner merged the idle worker's pull request, which closes issue 1: the next poll makes item 1 done. */
  merged: async (lab) => {
    await CRASH_SETUPS.working(lab);
    const open = join(lab.stateDir, "worktrees", "demo", "widgets", "issue-1", ".ai", "local", "state", "sessions-open", "item-1.yaml");
    await waitUntil(lab, "the demo worker to go idle at its prompt", async () => existsSync(open) && /^status: idle$/m.test(readFileSync(open, "utf8")));
    const [pull] = await lab.api("GET", "/repos/demo/widgets/pulls");
    await lab.api("PUT", `/repos/demo/widgets/pulls/${pull.number}/merge`, {});
  },
  /**
   * The worker of issue 1 killed by the owner and its exit drained by a tick: item 1 is
   * interrupted. The episode record the demo worker wrote as it ended is committed and
   * pushed, as an agent's last step would, so the worktree is clean, origin has every
   * commit, and reset removes both.
   */
  "worker-ended": async (lab) => {
    await CRASH_SETUPS.working(lab);
    await lab.mustRun(["session", "kill", "ra-widgets-1"]);
    await lab.mustRun(["run", "--once", "--effect-level", "live"]);
    const worktree = join(lab.stateDir, "worktrees", "demo", "widgets", "issue-1");
    // The demo worker commits and pushes its record as it ends; anything it left is committed here.
    if (git(worktree, "status", "--porcelain", "--untracked-files=all") !== "") {
      git(worktree, "add", "--all");
      git(worktree, "commit", "--quiet", "-m", "Record the episode");
    }
    git(worktree, "push", "--quiet", "origin", "HEAD");
  },
  /** The worker of issue 1 killed between ticks and its spooled exit record damaged (`"code": "abc"`). */
  /** Claude Code is the worker (profile claude) and has never been told to trust the clone: the lab's HOME has no ~/.claude.json. */
  "claude-untrusted": async (lab) => {
    writeFileSync(lab.configFile, readFileSync(lab.configFile, "utf8").replace("[worker]\n", '[worker]\nprofile = "claude"\n'));
  },
  "spool-damaged": async (lab) => {
    // Only the spooled exit matters here, not the work: the worker sleeps instead of the demo worker's steps.
    lab.useWorker(["sh", "-c", "echo working; sleep 30"]);
    await onboardAndPoll(lab);
    await lab.mustRun(["run", "--once", "--effect-level", "live"]);
    const spooled = await killWorker(lab);
    writeFileSync(spooled, readFileSync(spooled, "utf8").replace(/"code": [^,\n]*/, '"code": "abc"'));
  },
  /**
   * Issue 1's worker launched in a tmux window (on a server in the lab's own folder), killed
   * by the owner, its exit spooled, and issue 1 closed on the forge: the next tick (five
   * minutes on, so it polls) drains the exit, makes the item done and closes its tab. The tab
   * stays until then (remain-on-exit); with it the lab's tmux server ends.
   */
  "tab-left": async (lab) => {
    lab.env.TMUX_TMPDIR = join(lab.dir, "tmux");
    mkdirSync(lab.env.TMUX_TMPDIR, { mode: 0o700 });
    lab.useWorker(["sh", "-c", "echo working; exec sleep 30"]);
    writeFileSync(lab.configFile, readFileSync(lab.configFile, "utf8").replace('launcher = "process"', 'launcher = "tmux"\ntmux_session = "ra-workers"'));
    await onboardAndPoll(lab);
    await lab.mustRun(["run", "--once", "--effect-level", "live"]);
    await killWorker(lab);
    await lab.api("PATCH", "/repos/demo/widgets/issues/1", { state: "closed" });
  },
  /**
   * Issue 1's worker runs in a tmux window, waiting at its prompt for a line, which it writes to
   * `typed.txt` in its worktree (what `robot-army send` types reaches it there).
   */
  "tmux-worker": (lab) => tmuxWorker(lab, ["sh", "-c", 'IFS= read -r line; printf "%s\\n" "$line" > typed.txt; exec sleep 30']),
  /**
   * `tmux-worker`, its worker idle at its prompt (its episode open and idle, as the demo worker's
   * profile keeps it, whose registry is read), and the owner's comment on issue 1 since: the next
   * pass takes it and types it in.
   */
  "tmux-worker-feedback": async (lab) => {
    await tmuxWorker(lab, ["sh", "-c", 'robot-army episode start --client-pid $$ >/dev/null && robot-army episode idle >/dev/null; IFS= read -r line; printf "%s\\n" "$line" > typed.txt; exec sleep 30'], "demo");
    const worktree = join(lab.stateDir, "worktrees", "demo", "widgets", "issue-1");
    await waitUntil(lab, "the worker's episode to be idle", async () => existsSync(join(worktree, ".ai", "local", "state", "sessions-open", "item-1.yaml")) &&
      readFileSync(join(worktree, ".ai", "local", "state", "sessions-open", "item-1.yaml"), "utf8").includes("status: idle"));
    await lab.api("POST", "/repos/demo/widgets/issues/1/comments", { body: "Please also update the README." });
  },
  /** demo/widgets onboarded and polled, and a worktree of its clone whose directory was deleted by hand: git still lists it, prunable. */
  "worktree-vanished": async (lab) => {
    await onboardAndPoll(lab);
    const gone = join(lab.dir, "gone-worktree");
    git(lab.clone, "worktree", "add", "--quiet", "-b", "gone-by-hand", gone);
    rmSync(gone, { recursive: true });
  },
  /** An episode open in the clone since the lab's clock whose client has exited: stranded an hour later. */
  "episode-stranded": async (lab) => {
    await lab.mustRun(["episode", "start", "--key", "w1", "--client-pid", String(exitedPid())]);
    writeFileSync(join(lab.clone, "greeting.txt"), "hello\n");
    git(lab.clone, "add", "greeting.txt");
    git(lab.clone, "commit", "--quiet", "-m", "Add the greeting");
  },
  /** A managed session killed by the owner: ended, neither kept nor permanent, so gc sweeps it. */
  "session-ended": async (lab) => {
    await lab.mustRun(["session", "run", "-d", "--name", "done1", "--", "sleep", "30"]);
    await lab.mustRun(["session", "kill", "done1"]);
  },
  /** A running managed session whose parent session has ended: gc stops and removes it. */
  "session-orphaned": async (lab) => {
    await lab.mustRun(["session", "run", "-d", "--name", "gone1", "--", "sleep", "30"]);
    await lab.mustRun(["session", "kill", "gone1"]);
    await lab.mustRun(["session", "run", "-d", "--name", "child1", "--tag", "parent=gone1", "--", "sleep", "30"]);
  },
  /** A running permanent session whose working directory was deleted: gc stops it and records it abandoned. */
  "session-cwd-gone": async (lab) => {
    const cwd = join(lab.dir, "scratch");
    mkdirSync(cwd);
    await lab.mustRun(["session", "run", "-d", "--permanent", "--name", "perm1", "--cwd", cwd, "--", "sleep", "30"]);
    rmSync(cwd, { recursive: true });
  },
  /** A permanent session killed by the owner: gc respawns it. */
  "permanent-ended": async (lab) => {
    await lab.mustRun(["session", "run", "-d", "--permanent", "--name", "perm1", "--", "sleep", "30"]);
    await lab.mustRun(["session", "kill", "perm1"]);
  },
  /** A permanent session whose command has ended at once three runs in a row: gc marks it flapping. */
  "permanent-flapping": async (lab) => {
    await lab.mustRun(["session", "run", "-d", "--permanent", "--name", "flap1", "--", "sh", "-c", "sleep 0.2; exit 3"]);
    for (let respawns = 0; respawns < 2; respawns++) {
      await waitUntil(lab, "flap1 to end", async () => allEnded(lab));
      await lab.mustRun(["session", "gc"]);
    }
    await waitUntil(lab, "flap1 to end", async () => allEnded(lab));
  },
};

/** What `onboard demo/widgets` and `poll --effect-level live` do, done in this process (every lab is set up at LAB_NOW). */
function onboardAndPoll(lab: Lab): Promise<void> {
  return onboardHere({ env: { ...lab.env, RA_NOW: LAB_NOW }, configFile: lab.configFile }, "demo/widgets", { pollLiveFrom: lab.clone });
}

function allEnded(lab: Lab): boolean {
  return listRecords(lab.sessionRoot).every((record) => !["starting", "running"].includes(sessionState(lab.sessionRoot, record)));
}

/** Kills issue 1's worker as the owner would and waits for its holder to spool the exit; the spool file's path. */
async function killWorker(lab: Lab): Promise<string> {
  const worker = listRecords(lab.sessionRoot).find((record) => record.name === "ra-widgets-1")!;
  await lab.mustRun(["session", "kill", "ra-widgets-1"]);
  const spooled = join(lab.stateDir, "spool", `${worker.id}.${worker.generation}.json`);
  await waitUntil(lab, `the worker's exit to be spooled at ${spooled}`, async () => existsSync(spooled));
  return spooled;
}

/** Polls `done` every 50 ms for up to a minute (a shared machine can be slow). */
export async function waitUntil(lab: Lab, what: string, done: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (lab ${lab.dir})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Issue 1's worker, `worker`, launched in a tmux window of the lab's own tmux server (ended with the lab). */
async function tmuxWorker(lab: Lab, worker: string[], profile?: string): Promise<void> {
  lab.env.TMUX_TMPDIR = join(lab.dir, "tmux");
  mkdirSync(lab.env.TMUX_TMPDIR, { mode: 0o700 });
  lab.useWorker(worker);
  // The worker's tmux server is the lab's own (its TMUX_TMPDIR): ended with the lab, window and all.
  const close = lab.close;
  lab.close = async () => {
    try {
      spawnSync("tmux", ["kill-server"], { env: { ...lab.env, TMUX: "" }, stdio: "ignore" });
    } finally {
      await close();
    }
  };
  writeFileSync(lab.configFile, readFileSync(lab.configFile, "utf8").replace('launcher = "process"', `launcher = "tmux"\ntmux_session = "ra-workers"${profile ? `\nprofile = "${profile}"` : ""}`));
  await onboardAndPoll(lab);
  await lab.mustRun(["run", "--once", "--effect-level", "live"]);
}
