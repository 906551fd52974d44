/**
 * Setup `forge-with-hostile-title`: `forge-with-worker` where the owner has retitled
 * issue 1 to something a shell would act on: quotes, `$(...)`, backticks, `;`, `&&`, a
 * newline and non-ASCII letters. Each command in it would create a file under
 * `<dir>/pwned/`, so a scenario can show that none ran.
 */
import { forgeApi } from "./_forge-intake.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "./index.ts";

/** The forge, the clone, the worker config, and issue 1 with a hostile title. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  const pwned = `${ctx.dir}/pwned`;
  const title = `Fix "it" 'now'; $(touch ${pwned}/dollar) \`touch ${pwned}/backtick\` && touch ${pwned}/and\nrm -rf ~ | Ünïcødé ✓ 修复`;
  return await thenRun(made, async () => {
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { title });
  }).then((done) => ({ ...done, vars: { ...done.vars, PWNED: pwned } }));
}
