/**
 * Setup `forge-with-hostile-title`: `forge-with-worker` where the owner has retitled
 * issue 1 to something a shell would act on: quotes, `$(...)`, backticks, `;`, `&&`, a
 * newline and non-ASCII letters. Each command in it would create a file in the empty
 * folder `~/pwned/` (the scenario's HOME, made here so that each `touch` would succeed),
 * so a scenario can show that none ran. The commands name the folder by `~`, not by its
 * absolute path, so the branch slug made from the title is the same on every machine
 * (an absolute temp path would put the machine's temp folder into the slug).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { forgeApi } from "./_forge-intake.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The title issue 1 is given: every command in it would leave a file in `~/pwned/`. */
export const HOSTILE_TITLE = `Fix "it" 'now'; $(touch ~/pwned/dollar) \`touch ~/pwned/backtick\` && touch ~/pwned/and\nrm -rf ~ | Ünïcødé ✓ 修复`;

/** The forge, the clone, the worker config, the empty `~/pwned/`, and issue 1 with a hostile title. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  const pwned = join(ctx.env.HOME, "pwned");
  return await thenRun(made, async () => {
    mkdirSync(pwned, { recursive: true });
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { title: HOSTILE_TITLE });
  }).then((done) => ({ ...done, vars: { ...done.vars, PWNED: pwned } }));
}
