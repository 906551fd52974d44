/**
 * Setup `forge-with-old-secret`: `forge-with-clone`, demo/widgets onboarded and polled at
 * live, and then a GitHub token written straight into the store, as a store made before the
 * redactor existed holds it: in item 1's title and reason, and in the body of an audit
 * record of it. The token is `${OLD_TOKEN}`.
 */
import { openStore } from "../../store/open.ts";
import { mustRun } from "./episode-repo.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import { thenRun } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** A token in GitHub's format (not a real one). */
export const OLD_TOKEN = "ghp_" + "OldRowsKeptThisToken0123456789abcdef";

/** Polls issue 1 in, then writes the token into its row and an audit record, bypassing the redactor. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    await mustRun(ctx, ["poll", "--effect-level", "live"], { cwd: made.cwd });
    const store = await openStore(ctx.env.RA_STATE_DIR);
    try {
      store.db.prepare("UPDATE work_items SET title = ?, reason = ? WHERE id = 1").run(`Rotate ${OLD_TOKEN} now`, `post-create printed ${OLD_TOKEN}`);
      store.db.prepare("INSERT INTO audit (at, kind, phase, repo, item, body) VALUES (?, 'state.work_item', 'fact', 'demo/widgets', 1, ?)")
        .run(ctx.env.RA_NOW.replace(/\.\d+Z$/, "Z"), JSON.stringify({ from: "ready", to: "ready", reason: `a step printed ${OLD_TOKEN}` }));
    } finally {
      store.close();
    }
  });
  return { ...made, vars: { ...made.vars, OLD_TOKEN } };
}
