/**
 * Helpers for the retirement setups: `forge-with-clone` whose config runs the demo worker
 * (which commits, pushes, opens a pull request that closes its issue, goes idle and waits at
 * its prompt, as an interactive agent does), dispatched at live, and the owner's part on the
 * forge afterwards: merging the pull requests, or closing an issue by hand.
 */
import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { forgeApi } from "./_forge-intake.ts";
import type { ForgeApi } from "./_forge-intake.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun, withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** The scripted stand-in for an agent (scripts/demo-worker.ts). */
export const DEMO_WORKER = { binary: "demo-worker", args: [] as string[] };

/** What a demo-worker setup does once its workers are dispatched: the owner's part on the forge. */
export type OwnerPart = (api: ForgeApi, pulls: Array<{ number: number; issue: number }>) => Promise<void>;

/**
 * The forge and clone, the config running the demo worker (with `configLines` appended),
 * demo/widgets onboarded, one tick at live dispatching what it may, a wait until each
 * dispatched worker has opened its pull request and gone idle, then `owner`.
 */
export async function withIdleDemoWorkers(ctx: SetupContext, options: { configLines?: string[]; issues: number; before?: (api: ForgeApi) => Promise<void>; owner: OwnerPart }): Promise<SetupResult> {
  const made = await withWorker(ctx, { ...DEMO_WORKER, maxSessions: options.issues });
  if (options.configLines?.length) appendFileSync(made.vars!.CONFIG, options.configLines.join("\n") + "\n");
  return await thenRun(made, async () => {
    const api = forgeApi(made);
    await options.before?.(api);
    const run = (argv: string[]) => mustRun(ctx, argv, { cwd: made.cwd, env: made.env });
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    // One worker at a time, each let go once the one before opened its pull request, so the pull
    // requests' numbers follow the items' and every run of the scenario reads the same.
    await run(["poll", "--effect-level", "live"]);
    const items = (JSON.parse(await run(["status", "--json"])) as { queue: Array<{ id: number }> }).queue.map((q) => q.id);
    for (const item of items.slice(1)) await run(["hold", String(item)]);
    const pulls: Array<{ number: number; issue: number }> = [];
    for (let n = 0; n < options.issues; n++) {
      if (n > 0) await run(["unhold", String(items[n])]);
      const ran = await run(["run", "--once", "--effect-level", "live"]);
      const dispatched = [...ran.matchAll(/dispatched demo\/widgets#(\d+) as /g)].map((m) => Number(m[1]));
      if (dispatched.length !== 1) throw new Error(`setup: run --once dispatched ${dispatched.length} issues, not 1: ${ran}`);
      pulls.push(...(await waitForPulls(api, dispatched)));
      await waitForIdle(ctx, n + 1);
    }
    for (const item of items.slice(options.issues)) await run(["unhold", String(item)]);
    await options.owner(api, pulls);
    // The waits above asked the forge as the owner as often as the workers' pace made them: the owner's
    // rate limit starts afresh, so what robot-army reports of it reads the same every run.
    await api.hook("POST", "/_forge/rate-limit", { login: "owner", remaining: 5000 });
  });
}

/** Waits (up to a minute) until each issue has an open pull request that closes it; their numbers. */
async function waitForPulls(api: ForgeApi, issues: number[]): Promise<Array<{ number: number; issue: number }>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const open = await api.owner("GET", "/repos/demo/widgets/pulls?state=open") as Array<{ number: number; body: string | null }>;
    const found = issues.map((issue) => ({ issue, number: open.find((p) => (p.body ?? "").startsWith(`Closes #${issue}\n`))?.number }));
    if (found.every((f) => f.number !== undefined)) return found.map((f) => ({ issue: f.issue, number: f.number! }));
    if (Date.now() > deadline) throw new Error(`setup: the demo workers did not open their pull requests within a minute (${JSON.stringify(found)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits (up to a minute) until `count` open episodes in the worktrees (under the state dir's `worktrees/`) say idle. */
async function waitForIdle(ctx: SetupContext, count: number): Promise<void> {
  const root = join(ctx.env.RA_STATE_DIR, "worktrees", "demo", "widgets");
  const deadline = Date.now() + 60_000;
  for (;;) {
    let idle = 0;
    for (const worktree of existsSync(root) ? readdirSync(root) : []) {
      const open = join(root, worktree, ".ai", "local", "state", "sessions-open");
      for (const file of existsSync(open) ? readdirSync(open).filter((f) => f.endsWith(".yaml")) : []) {
        if (/^status: idle$/m.test(readFileSync(join(open, file), "utf8"))) idle++;
      }
    }
    if (idle >= count) return;
    if (Date.now() > deadline) throw new Error(`setup: ${idle} of ${count} demo workers went idle within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Merges each pull request as the owner (the forge closes the issue each one names). */
export const mergeAll: OwnerPart = async (api, pulls) => {
  for (const pull of pulls) await api.owner("PUT", `/repos/demo/widgets/pulls/${pull.number}/merge`, {});
};
