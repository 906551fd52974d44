/**
 * Setup `worker-profile-configs`: an empty folder holding config files that set
 * `[worker] profile`: `bad-profile.toml` (a profile robot-army does not know). `${WORK}` is the folder.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SetupContext, SetupResult } from "../setup.ts";

const FILES: Record<string, string> = {
  "bad-profile.toml": `[worker]\nbinary = "cursor-agent"\nprofile = "cursor"\n`,
};

/** Writes the config files. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const work = join(ctx.dir, "work");
  mkdirSync(work, { recursive: true });
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(work, name), text);
  return { cwd: work, vars: { WORK: work } };
}
