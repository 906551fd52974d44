/**
 * Setup `forge-with-worktrees-on-disk`: `forge-with-clone` with demo/widgets onboarded and
 * real worktrees of its clone in the worktree root (`<state dir>/worktrees`), in every
 * condition `worktree list` names:
 * - item 1 (issue 1, active): `issue-1` on `robot-army/1-clean`, clean;
 * - item 2 (issue 2, active): `issue-2` on `robot-army/2-dirty`, with an untracked `notes.txt`;
 * - item 3 (issue 3, done, its issue closed on the forge): `issue-3` on `robot-army/3-gone`,
 *   its directory deleted by hand, so git lists it as prunable;
 * - no item: `issue-8` on `robot-army/8-stray-dirty` (an untracked `draft.txt`) and
 *   `issue-9` on `robot-army/9-stray` (clean), left by no item robot-army remembers.
 * Each item's session row is closed (its worker exited), as the store holds them once the
 * workers are gone. Variables: `${ROOT}` (the worktree root) and those of `forge-with-clone`.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openStore } from "../../store/open.ts";
import { git } from "../../testing/fixtures.ts";
import { makeItem } from "../../testing/items.ts";
import { endSession, recordSession } from "../../work-items/sessions.ts";
import type { WorkItemState } from "../../work-items/queries.ts";
import { forgeApi } from "./_forge-intake.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import { thenRun } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** The items and the worktrees their session rows record. */
const CLAIMED: Array<{ issue: number; state: WorkItemState; branch: string }> = [
  { issue: 1, state: "active", branch: "robot-army/1-clean" },
  { issue: 2, state: "active", branch: "robot-army/2-dirty" },
  { issue: 3, state: "done", branch: "robot-army/3-gone" },
];

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  return await thenRun(made, async () => {
    const clone = made.vars!.CLONE;
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/3", { state: "closed" });
    const root = join(ctx.env.RA_STATE_DIR, "worktrees");
    const add = (name: string, branch: string) => {
      const path = join(root, "demo", "widgets", name);
      mkdirSync(dirname(path), { recursive: true });
      git(clone, "worktree", "add", "--quiet", "-b", branch, path, "origin/main");
      return path;
    };
    const store = await openStore(ctx.env.RA_STATE_DIR);
    try {
      for (const { issue, state, branch } of CLAIMED) {
        const path = add(`issue-${issue}`, branch);
        const item = makeItem(store, { issue, state, at: "2026-01-15T08:00:00Z", title: `Issue ${issue}` });
        const id = `5e551011-0000-4000-8000-00000000000${issue}`;
        recordSession(store, {
          id, item: item.id, name: `ra-widgets-${issue}`, host: "scenario-host", launcher: "process", marker: "",
          worktree: path, branch, started_at: "2026-01-15T08:10:00Z", simulated: false,
        });
        endSession(store, id, "exited", { code: 0, at: "2026-01-15T08:50:00Z" });
      }
    } finally {
      store.close();
    }
    writeFileSync(join(root, "demo", "widgets", "issue-2", "notes.txt"), "a thought not yet committed\n");
    rmSync(join(root, "demo", "widgets", "issue-3"), { recursive: true });
    writeFileSync(join(add("issue-8", "robot-army/8-stray-dirty"), "draft.txt"), "a draft only here\n");
    add("issue-9", "robot-army/9-stray");
    made.vars!.ROOT = root;
  });
}
