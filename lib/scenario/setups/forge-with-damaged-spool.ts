/**
 * Setup `forge-with-damaged-spool`: `forge-with-worker`, demo/widgets onboarded and polled at
 * live, and one daemon tick (`run --once --effect-level live`) that dispatched issue 1. Its
 * worker was then stopped (`session kill`: its record stays, ended `killed`), its holder
 * spooled the exit, and before the daemon's next tick that spool file was damaged: its
 * `"code"` reads `"abc"`, as a torn write or a hand edit would leave it. `${SPOOL_FILE}` is
 * the damaged file.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listRecords } from "../../sessions/records.ts";
import { stopSession } from "../../sessions/stop.ts";
import { mustRun } from "./episode-repo.ts";
import { sessionRootOf, thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Dispatches issue 1, ends its worker, and damages the exit record it spooled. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  let spoolFile = "";
  const done = await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    for (const argv of [["poll", "--effect-level", "live"], ["run", "--once", "--effect-level", "live"]]) {
      await mustRun(ctx, argv, { cwd: made.cwd, env: made.env });
    }
    const root = sessionRootOf(ctx);
    const worker = listRecords(root).find((record) => record.name === "ra-widgets-1");
    if (!worker) throw new Error("setup: the tick did not start a worker for issue 1");
    await stopSession(root, worker, { graceMs: 2_000 });
    spoolFile = join(ctx.env.RA_STATE_DIR, "spool", `${worker.id}.${worker.generation}.json`);
    const deadline = Date.now() + 10_000;
    while (!existsSync(spoolFile)) {
      if (Date.now() > deadline) throw new Error(`setup: the worker's exit was not spooled at ${spoolFile}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const text = readFileSync(spoolFile, "utf8");
    if (!text.includes('"code": null')) throw new Error(`setup: the spooled exit is not as expected: ${text}`);
    writeFileSync(spoolFile, text.replace('"code": null', '"code": "abc"'));
  });
  return { ...done, vars: { ...done.vars, SPOOL_FILE: spoolFile } };
}
