/**
 * Setup `forge-with-comment-cut-short`: `forge-with-worker` with demo/widgets onboarded,
 * then a poll at live SIGKILLed by the crash suite's fault point (`RA_FAULT=github.comment:intent`)
 * right after it wrote the intent of its first "queued" comment: the comment was never posted
 * and its intent has no outcome.
 */
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Onboards demo/widgets and crashes its first live poll after the first comment's intent. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    const poll = await ctx.robotArmy(["poll", "--effect-level", "live"], { cwd: made.cwd, env: { ...made.env, RA_FAULT: "github.comment:intent" } });
    // 128 + SIGKILL's 9: the fault point killed it.
    if (poll.code !== 137) throw new Error(`setup: the poll was to be killed after the comment's intent, but exited ${poll.code}: ${poll.stderr.trim()}`);
  });
}
