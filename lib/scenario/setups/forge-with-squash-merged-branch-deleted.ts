/**
 * Setup `forge-with-squash-merged-branch-deleted`: the demo worker for issue 1 opened its pull
 * request (#6) and went idle; the owner closed issue 1 by hand, and a pass at 10:31:00 (past
 * the 30-minute quiet period; issues 2 and 3 held) retired the worker, which pushed its
 * episode's record to the branch as it ended, so the pull request's head moved with it.
 * Then the owner merged the pull request as a squash (the base holds one new commit, none of
 * the branch's) and deleted the branch through the forge's API, as GitHub's "delete branch" does. Only
 * the forge's `refs/pull/6/head` still holds the branch's commits. The daemon's cleanup is off.
 * The pull request's head (the record commit, whose sha differs every run) is shown as `<record>`.
 */
import { retireNow } from "./_cleanup.ts";
import { withIdleDemoWorkers } from "./_demo-workers.ts";
import { thenRun } from "./forge-with-worker.ts";
import { forgeApi } from "./_forge-intake.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** When the setup's pass retires the worker: 31 minutes after it went idle, past the quiet period. */
const RETIRED_AT = "2026-01-15T10:31:00Z";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  let pull = 0;
  const made = await withIdleDemoWorkers(ctx, {
    issues: 1,
    owner: async (api, pulls) => {
      pull = pulls[0].number;
      await api.owner("PATCH", "/repos/demo/widgets/issues/1", { state: "closed", state_reason: "completed" });
    },
  });
  return await thenRun(made, async () => {
    await retireNow(ctx, made, [2, 3], RETIRED_AT);
    const api = forgeApi(made);
    const { head } = await api.owner("GET", `/repos/demo/widgets/pulls/${pull}`) as { head: { ref: string; sha: string } };
    await api.owner("PUT", `/repos/demo/widgets/pulls/${pull}/merge`, { merge_method: "squash" });
    await api.owner("DELETE", `/repos/demo/widgets/git/refs/heads/${head.ref}`);
    // The record commit holds the session's id, so its sha differs every run: shown as a placeholder.
    made.placeholders = { ...made.placeholders, [head.sha]: "<record-commit>", [head.sha.slice(0, 7)]: "<record>" };
  });
}
