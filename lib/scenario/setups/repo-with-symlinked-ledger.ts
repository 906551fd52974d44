/**
 * Setup `repo-with-symlinked-ledger`: a repository whose open episode `w1` was started two
 * days before the scenario's clock by a client that has exited, and whose ledger
 * (`.ai/local/state/ledger.jsonl`) has since been replaced by a symbolic link to a file
 * outside the repository, `${OUTSIDE}`, standing for `/etc/shadow`: its lines are a ledger
 * event (which would be shown were it followed) and a password hash.
 */
import { rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SetupContext, SetupResult } from "../setup.ts";
import { mustRun, setup as episodeRepo } from "./episode-repo.ts";

/** Starts the episode through the real command, then links its ledger out of the repository. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await episodeRepo(ctx);
  const twoDaysBefore = new Date(Date.parse(ctx.env.RA_NOW) - 2 * 86_400_000).toISOString();
  await mustRun(ctx, ["episode", "start", "--key", "w1", "--client-pid", made.vars!.DEAD_PID], {
    cwd: made.cwd, env: { RA_NOW: twoDaysBefore },
  });
  const outside = join(ctx.dir, "shadow");
  writeFileSync(outside, [
    JSON.stringify({ at: ctx.env.RA_NOW, episode: "11111111-1111-4111-8111-111111111111", key: "w1", kind: "note", data: { text: "SECRET-FROM-OUTSIDE" } }),
    "root:$6$SECRET-HASH:19000:0:99999:7:::",
    "",
  ].join("\n"));
  const ledger = join(made.cwd, ".ai/local/state/ledger.jsonl");
  rmSync(ledger);
  symlinkSync(outside, ledger);
  return { ...made, vars: { ...made.vars, OUTSIDE: outside } };
}
