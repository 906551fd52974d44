/**
 * Setup `repo-with-unreadable-episode`: a repository whose open episode `w1` was started
 * two days before the scenario's clock by a client that has exited, and whose
 * `status_changed_at` has since been overwritten with something that is not a time.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SetupContext, SetupResult } from "../setup.ts";
import { mustRun, setup as episodeRepo } from "./episode-repo.ts";

/** Starts the episode through the real command, then spoils its timestamp. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await episodeRepo(ctx);
  const twoDaysBefore = new Date(Date.parse(ctx.env.RA_NOW) - 2 * 86_400_000).toISOString();
  await mustRun(ctx, ["episode", "start", "--key", "w1", "--client-pid", made.vars!.DEAD_PID], {
    cwd: made.cwd, env: { RA_NOW: twoDaysBefore },
  });
  const file = join(made.cwd, ".ai/local/state/sessions-open/w1.yaml");
  writeFileSync(file, readFileSync(file, "utf8").replace(/^status_changed_at: .*$/m, "status_changed_at: around noon"));
  return made;
}
