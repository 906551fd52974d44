/**
 * Setup `forge-with-clone`: a sandbox forge running for the scenario (stopped after its
 * last step), seeded with `demo/widgets` (three labelled issues by `owner`, one labelled
 * by `stranger`, one unlabelled), a real clone of it at `<dir>/widgets` whose origin is the
 * forge's repository, and a config.toml that points robot-army at the forge: api_base,
 * owner's token file, author `owner`, and `[repos."demo/widgets"]` with the clone's path.
 *
 * Variables: `${FORGE_URL}`, `${FORGE_DIR}`, `${CLONE}`, `${CONFIG}`, `${OWNER_TOKEN}`,
 * `${STRANGER_TOKEN}`. The forge's URL (its port changes every run) is shown as `<forge>`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { git } from "../../testing/fixtures.ts";
import { seedForge } from "../../forge/seed.ts";
import { startForge } from "../../forge/server.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Starts and seeds the forge (its repository's default branch `defaultBranch`, else main), clones the repository and writes the config. */
export async function setup(ctx: SetupContext, options: { defaultBranch?: string } = {}): Promise<SetupResult> {
  const forgeDir = join(ctx.dir, "forge");
  const now = () => new Date(ctx.env.RA_NOW);
  const seeded = await seedForge(forgeDir, { now, defaultBranch: options.defaultBranch });
  const forge = await startForge({ dir: forgeDir, now });
  const clone = join(ctx.dir, "widgets");
  git(ctx.dir, "clone", "--quiet", seeded.repository.clone_url, clone);
  const token = (login: string) => seeded.users.find((u) => u.login === login)!.token_file;
  const config = join(ctx.env.XDG_CONFIG_HOME, "robot-army", "config.toml");
  mkdirSync(dirname(config), { recursive: true });
  writeFileSync(config, [
    "[github]",
    `api_base = ${JSON.stringify(forge.url)}`,
    `token_file = ${JSON.stringify(token("owner"))}`,
    'author = "owner"',
    "",
    '[repos."demo/widgets"]',
    `path = ${JSON.stringify(clone)}`,
    "",
  ].join("\n"));
  return {
    cwd: clone,
    vars: {
      FORGE_URL: forge.url, FORGE_DIR: forgeDir, CLONE: clone, CONFIG: config,
      OWNER_TOKEN: token("owner"), STRANGER_TOKEN: token("stranger"),
    },
    placeholders: { [forge.url]: "<forge>" },
    cleanup: () => forge.close(),
  };
}
