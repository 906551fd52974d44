/**
 * Setup `forge-with-dashboard-workers`: what the dashboard's browser tests look at. Two demo
 * workers dispatched at live (issues 1 and 2, items 1 and 2), idle at their prompts with
 * their pull requests open; issue 3 retitled by the owner to markup a careless page would run
 * (`HTML_TITLE`) and dispatched with a worker that cannot start (its interpreter does not
 * exist), so item 3 is failed with its reason. The config then allows three sessions and
 * still names the broken worker, so the next dispatch fails too unless `[worker] binary` is
 * changed first.
 *
 * Variables: those of `forge-with-clone`, and `${BROKEN_WORKER}`.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withIdleDemoWorkers } from "./_demo-workers.ts";
import { mustRun } from "./episode-repo.ts";
import { HTML_TITLE } from "./forge-with-html-title.ts";
import { thenRun } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Items 1 and 2 idle demo workers, item 3 failed under `HTML_TITLE`. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withIdleDemoWorkers(ctx, {
    issues: 2,
    before: async (api) => {
      await api.owner("PATCH", "/repos/demo/widgets/issues/3", { title: HTML_TITLE });
    },
    owner: async () => {},
  });
  const broken = join(ctx.dir, "broken-worker.sh");
  return await thenRun(made, async () => {
    writeFileSync(broken, "#!/nonexistent/interpreter\n");
    chmodSync(broken, 0o755);
    useWorker(made.vars!.CONFIG, broken);
    const ran = await mustRun(ctx, ["run", "--once", "--effect-level", "live"], { cwd: made.cwd, env: made.env });
    if (!ran.includes("(item 3): ")) throw new Error(`setup: item 3's dispatch was meant to fail: ${ran}`);
  }).then((done) => ({ ...done, vars: { ...done.vars, BROKEN_WORKER: broken } }));
}

/** Makes `binary` the worker the config's next dispatch starts, with room for three sessions. */
export function useWorker(config: string, binary: string): void {
  const text = readFileSync(config, "utf8");
  writeFileSync(config, text.replace(/^binary = .*$/m, `binary = ${JSON.stringify(binary)}`).replace(/^max_sessions = .*$/m, "max_sessions = 3"));
}
