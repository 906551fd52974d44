/**
 * Setup `forge-with-two-repos`: `forge-with-clone`, with a second repository of the owner's
 * beside demo/widgets, `demo/gadgets` (seeded the same way: three issues labelled by
 * `owner`, one by `stranger`, one unlabelled), its clone at `<dir>/gadgets`, and
 * `[repos."demo/gadgets"]` added to the config. Variables: those of `forge-with-clone`.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../../testing/fixtures.ts";
import { seedForge } from "../../forge/seed.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge with both repositories, both clones, and a config naming both. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  try {
    const vars = made.vars!;
    const seeded = await seedForge(vars.FORGE_DIR, { repo: "demo/gadgets", now: () => new Date(ctx.env.RA_NOW) });
    const clone = join(ctx.dir, "gadgets");
    git(ctx.dir, "clone", "--quiet", seeded.repository.clone_url, clone);
    appendFileSync(vars.CONFIG, ['[repos."demo/gadgets"]', `path = ${JSON.stringify(clone)}`, ""].join("\n"));
    return made;
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
}
