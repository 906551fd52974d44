/**
 * Test scaffolding for the recovery verbs: a forge with demo/widgets, a real clone, an
 * onboarded repository, three ready items polled at live, and dispatch wired to the
 * process launcher running `sh -c 'echo working; sleep 30'`. Every session still
 * running is stopped (by its recorded pid and start time) before the forge goes.
 */
import { join } from "node:path";
import { forgeConfig, quickOptions, testStore } from "./github-kit.ts";
import { connectGitHub } from "../boundaries/github.ts";
import { launcherFor } from "../boundaries/launchers/select.ts";
import type { Config } from "../config.ts";
import { wireEffects } from "../effects.ts";
import { git } from "./fixtures.ts";
import { forgeTemplate } from "./forge.ts";
import type { TestForge } from "./forge.ts";
import { pollRepository } from "../intake/poll.ts";
import { currentFingerprint } from "../repos/onboard.ts";
import { recordApproval } from "../repos/records.ts";
import { listRecords } from "../sessions/records.ts";
import { stopSession } from "../sessions/stop.ts";
import type { Store } from "../store/open.ts";
import type { DispatchDeps } from "../dispatch/dispatch-deps.ts";

/** What a verb test gets. */
export interface VerbWorld {
  t: TestForge;
  store: Store;
  deps: DispatchDeps;
  config: Config;
}

/** A forge template for one test file; remove it in `test.after`. */
export function verbTemplate(): ReturnType<typeof forgeTemplate> {
  return forgeTemplate();
}

/** Runs `fn` in a fresh world; `worker` overrides the worker settings. */
export async function withWorld(
  template: ReturnType<typeof forgeTemplate>,
  fn: (w: VerbWorld) => Promise<void>,
  worker: Partial<Config["worker"]> = {},
  baseBranch = "main",
): Promise<void> {
  await template.use(async (t) => {
    const store = await testStore(t);
    const stateDir = join(t.tmp, "state");
    const env = { ...process.env, RA_STATE_DIR: stateDir, RA_SESSION_ROOT: join(stateDir, "sessions") };
    try {
      git(t.tmp, "clone", "--quiet", join(t.dir, "git", "demo", "widgets.git"), "widgets");
      const base = await forgeConfig(t);
      const config: Config = {
        ...base,
        repos: { "demo/widgets": { ...base.repos["demo/widgets"], base_branch: baseBranch, max_sessions: 1 } },
        worker: { ...base.worker, binary: "sh", args: ["-c", "echo working; sleep 30"], resume_args: ["--resumed"], launcher: "process", ...worker },
      };
      const github = await connectGitHub(config, store, quickOptions());
      const path = config.repos["demo/widgets"].path;
      const approved = await currentFingerprint(github, { name: "demo/widgets", path, base: config.repos["demo/widgets"].base_branch });
      recordApproval(store, "demo/widgets", path, approved.fingerprint, approved.commit);
      const effects = wireEffects("live", { github: github.writer });
      await pollRepository({ store, reader: github, effects, rules: { author: "owner", label: "robot-army" }, host: "testhost", paths: { "demo/widgets": path } }, "demo/widgets");
      const deps: DispatchDeps = {
        store, config, stateDir, sessionRoot: env.RA_SESSION_ROOT, github, effects, host: "testhost",
        launcher: launcherFor(config, { env, timeoutMs: 15_000 }),
      };
      try {
        await fn({ t, store, deps, config });
      } finally {
        for (const record of listRecords(env.RA_SESSION_ROOT)) await stopSession(env.RA_SESSION_ROOT, record).catch(() => {});
      }
    } finally {
      store.close();
    }
  });
}

/** Stops every session on record for the test (the worker "ended"). */
export async function stopAll(deps: DispatchDeps): Promise<void> {
  for (const record of listRecords(deps.sessionRoot)) await stopSession(deps.sessionRoot, record, { graceMs: 2_000 });
}

/** The bodies of an issue's comments on the forge, oldest first, without the action marker each of robot-army's ends with. */
export async function comments(t: TestForge, issue: number): Promise<string[]> {
  const { data } = await t.owner.rest.issues.listComments({ owner: "demo", repo: "widgets", issue_number: issue });
  return data.map((c) => (c.body ?? "").replace(/\n\n<!-- robot-army:action [0-9a-f-]{36} -->$/, ""));
}
