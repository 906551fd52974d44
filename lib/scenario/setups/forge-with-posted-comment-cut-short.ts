/**
 * Setup `forge-with-posted-comment-cut-short`: `forge-with-worker` with demo/widgets
 * onboarded, then a poll at live SIGKILLed (with its process group) while the forge, told to
 * answer the first comment slowly, was still taking it: the comment is posted, and its
 * intent has no outcome, as a crash between GitHub's answer and the outcome would leave it.
 */
import { spawn } from "node:child_process";
import { identify, liveness } from "../../processes.ts";
import { intentsWithoutOutcome } from "../../store/audit.ts";
import { withExistingStore } from "../../store/open.ts";
import { forgeApi } from "./_forge-intake.ts";
import { robotArmyCommand } from "../setup.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Onboards demo/widgets and kills its first live poll while its first comment is being posted. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    const api = forgeApi(made);
    await api.hook("POST", "/_forge/faults", { method: "POST", path: "/repos/demo/widgets/issues/*", delay_ms: 3000, times: 1 });
    const env = { ...ctx.env, ...made.env };
    const [bin, ...args] = robotArmyCommand(ctx.runtime);
    const poll = spawn(bin, [...args, "poll", "--effect-level", "live"], { cwd: made.cwd, env, stdio: "ignore", detached: true });
    const exited = new Promise<void>((resolve) => poll.once("exit", () => resolve()));
    const stateDir = env.RA_STATE_DIR;
    await waitUntil("the comment's intent", async () => poll.exitCode !== null || await withExistingStore(stateDir, (store) => (store ? intentsWithoutOutcome(store).length > 0 : false)));
    // The intent is written before the request goes: the forge has it once its slow answer is taken.
    await waitUntil("the forge to take the comment", async () => poll.exitCode !== null || (await api.hook("GET", "/_forge/faults") as unknown[]).length === 0);
    if (poll.exitCode !== null) throw new Error(`setup: the poll ended (exit ${poll.exitCode}) before its first comment`);
    const polling = identify(poll.pid!);
    // The group the spawn made for the poll: it and nothing else.
    process.kill(-poll.pid!, "SIGKILL");
    await exited;
    await waitUntil("the poll to be gone", async () => liveness(polling) === "exited");
    // The forge goes on with the request it holds, as GitHub would once it had it.
    await waitUntil("the forge to post the comment", async () => {
      const issues = await api.owner("GET", "/repos/demo/widgets/issues?state=all") as Array<{ comments: number }>;
      return issues.some((issue) => issue.comments > 0);
    });
  });
}

async function waitUntil(what: string, done: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
