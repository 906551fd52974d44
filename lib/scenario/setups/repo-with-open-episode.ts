/**
 * Setup `repo-with-open-episode`: a repository with one open episode, key `w1`, started at
 * the scenario's clock by the runner (a client that stays alive), and one commit made
 * during it ("Add the greeting").
 */
import { commitFile } from "../../testing/fixtures.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { mustRun, setup as episodeRepo } from "./episode-repo.ts";

/** Opens the episode through the real command, then commits inside it. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await episodeRepo(ctx);
  await mustRun(ctx, ["episode", "start", "--key", "w1"], { cwd: made.cwd });
  commitFile(made.cwd, "greeting.txt", "hello\n", "Add the greeting");
  return made;
}
