/** Setup `empty-dir`: the steps run in an empty folder, `<dir>/work`, outside any repository. */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Makes `<dir>/work`; `${WORK}` names it. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const work = join(ctx.dir, "work");
  mkdirSync(work, { recursive: true });
  return { cwd: work, vars: { WORK: work } };
}
