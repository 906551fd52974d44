/**
 * Setup `forge-with-two-hosts`: one sandbox forge watched by two robot-army hosts, `alpha`
 * (the scenario's own config and state) and `beta` (a second clone, config and state
 * directory), each with a headless worker (`sh -c 'echo working; sleep 30'`) and four
 * sessions. demo/widgets holds twelve issues labelled by `owner` (#1-#3 seeded, #6-#14 added
 * here), besides the seed's #4 (labelled by a stranger) and #5 (unlabelled). Workers of both
 * hosts still running at the end are stopped before the forge goes.
 *
 * Variables: those of `forge-with-clone` (alpha's), `${BETA_CONFIG}`, `${BETA_STATE}`, `${BETA_CLONE}`.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listRecords } from "../../sessions/records.ts";
import { sessionState } from "../../sessions/state.ts";
import { stopSession } from "../../sessions/stop.ts";
import { git } from "../../testing/fixtures.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { SLEEPING_WORKER, thenRun, withWorker } from "./forge-with-worker.ts";

/** The titles of the issues added to the seed's three: twelve labelled by the owner in all. */
const MORE_ISSUES = [
  "Document the widget sizes", "Cache the widget catalogue", "Add a --quiet flag", "Log each build's duration", "Reject empty widget names",
  "Sort the widget list by name", "Show the widget count", "Trim spaces from widget names", "Explain the exit codes in --help",
];

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withWorker(ctx, { ...SLEEPING_WORKER, maxSessions: 4 });
  const vars = made.vars!;
  const beta = { config: join(ctx.dir, "beta", "config.toml"), state: join(ctx.dir, "beta", "state"), clone: join(ctx.dir, "widgets-beta") };
  const betaRoot = join(beta.state, "sessions");
  const stopBeta = async () => {
    for (const record of listRecords(betaRoot)) {
      if (sessionState(betaRoot, record) === "running") await stopSession(betaRoot, record, { graceMs: 2_000 }).catch(() => {});
    }
  };
  const result: SetupResult = {
    ...made,
    vars: { ...vars, BETA_CONFIG: beta.config, BETA_STATE: beta.state, BETA_CLONE: beta.clone },
    cleanup: async () => {
      try {
        await stopBeta();
      } finally {
        await made.cleanup?.();
      }
    },
  };
  return await thenRun(result, async () => {
    const token = readFileSync(vars.OWNER_TOKEN, "utf8").trim();
    for (const title of MORE_ISSUES) {
      const answer = await fetch(`${vars.FORGE_URL}/repos/demo/widgets/issues`, {
        method: "POST", headers: { authorization: `token ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ title, body: "As the owner asked.", labels: ["robot-army"] }),
      });
      if (answer.status !== 201) throw new Error(`the forge answered ${answer.status} to a new issue: ${await answer.text()}`);
    }
    // alpha is the scenario's own config; beta's is the same but for its host name and its clone.
    const alpha = readFileSync(vars.CONFIG, "utf8");
    appendFileSync(vars.CONFIG, '[daemon]\nhost = "alpha"\n');
    git(ctx.dir, "clone", "--quiet", join(vars.FORGE_DIR, "git", "demo", "widgets.git"), beta.clone);
    mkdirSync(join(ctx.dir, "beta"), { recursive: true });
    writeFileSync(beta.config, alpha.replace(`path = ${JSON.stringify(vars.CLONE)}`, `path = ${JSON.stringify(beta.clone)}`) + '[daemon]\nhost = "beta"\n');
  });
}
