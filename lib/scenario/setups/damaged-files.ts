/**
 * Setup `damaged-files`: a repository whose work journal and a session root whose records
 * hold files no writer made: a record that is a folder, a record whose front matter is a
 * list, an open episode's file with YAML that yaml warns about (`secret-line` stands for
 * what such a warning would quote), `w8.yaml` holding open episode `w7` (a copy of
 * `w7.yaml`, started through the real command), and in the session root a record holding
 * `null` and a copy of session `finished`'s record filed under another id.
 */
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sessionRoot } from "../../sessions/records.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { mustRun, setup as episodeRepo } from "./episode-repo.ts";

/** The repository with its damaged journal, and the damaged session record beside it. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await episodeRepo(ctx);
  const records = join(made.cwd, ".ai/repo/sessions");
  mkdirSync(join(records, "2026-01-14T09-00-00Z--folder.md"), { recursive: true });
  writeFileSync(join(records, "2026-01-14T10-00-00Z--list.md"), "---\n- 1\n- 2\n---\n");
  const open = join(made.cwd, ".ai/local/state/sessions-open");
  mkdirSync(open, { recursive: true });
  writeFileSync(join(open, "w9.yaml"), "%YAML 9.9\n---\nid: !!js/function secret-line\n");
  await mustRun(ctx, ["episode", "start", "--key", "w7", "--client-pid", made.vars!.DEAD_PID], { cwd: made.cwd });
  copyFileSync(join(open, "w7.yaml"), join(open, "w8.yaml"));
  const root = sessionRoot(ctx.env);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  writeFileSync(join(root, "0badbad0-0000-4000-8000-000000000000.json"), "null\n", { mode: 0o600 });
  await mustRun(ctx, ["session", "run", "--name", "finished", "--tag", "keep=true", "--", "true"], { cwd: made.cwd });
  const finished = readdirSync(root).find((name) => name.endsWith(".json") && !name.startsWith("0badbad0") && !name.startsWith("c0ffee00"))!;
  copyFileSync(join(root, finished), join(root, "c0ffee00-0000-4000-8000-000000000001.json"));
  return made;
}
