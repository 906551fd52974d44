/**
 * Test scaffolding for the daemon: a sandbox forge with demo/widgets, a real clone, the
 * repository onboarded, a store, and tick dependencies wired at `live` with the process
 * launcher; every worker session still running is stopped afterwards.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { forgeConfig, quickOptions, testStore } from "./github-kit.ts";
import { connectGitHub } from "../boundaries/github.ts";
import { launcherFor } from "../boundaries/launchers/select.ts";
import type { Config } from "../config.ts";
import { endSessions } from "./workers.ts";
import { wireEffects } from "../effects.ts";
import { git } from "./fixtures.ts";
import type { ForgeTemplate, TestForge } from "./forge.ts";
import { currentFingerprint } from "../repos/onboard.ts";
import { recordApproval } from "../repos/records.ts";
import type { Store } from "../store/open.ts";
import type { DaemonEvent } from "../events.ts";
import type { TickDeps } from "../daemon/tick.ts";

/** What a daemon test gets. */
export interface DaemonTest {
  t: TestForge;
  store: Store;
  deps: TickDeps;
  config: Config;
  /** Every event reported so far. */
  events: DaemonEvent[];
  /** The reported lines so far. */
  lines(): string[];
}

/** What a daemon test may change beyond the worker's argv: more worker settings, and variables its launcher (so its workers) gets. */
export interface DaemonTestOptions {
  worker?: Partial<Config["worker"]>;
  env?: Record<string, string>;
}

/**
 * A forge, a clone, an onboarded repository (not yet polled) and tick deps at live; `worker` is
 * the worker's argv, run by the process launcher unless `options.worker` says otherwise.
 */
export async function withDaemon(template: ForgeTemplate, fn: (d: DaemonTest) => Promise<void>, worker: string[] = ["sh", "-c", "echo working; sleep 30"], options: DaemonTestOptions = {}): Promise<void> {
  await template.use(async (t) => {
    const store = await testStore(t);
    const stateDir = join(t.tmp, "state");
    const sessionRoot = join(stateDir, "sessions");
    const env = { ...process.env, ...options.env, RA_STATE_DIR: stateDir, RA_SESSION_ROOT: sessionRoot };
    try {
      git(t.tmp, "clone", "--quiet", join(t.dir, "git", "demo", "widgets.git"), "widgets");
      const base = await forgeConfig(t);
      const config: Config = { ...base, worker: { ...base.worker, binary: worker[0], args: worker.slice(1), launcher: "process", ...options.worker } };
      const github = await connectGitHub(config, store, quickOptions());
      const path = config.repos["demo/widgets"].path;
      const approved = await currentFingerprint(github, { name: "demo/widgets", path, base: config.repos["demo/widgets"].base_branch });
      recordApproval(store, "demo/widgets", path, approved.fingerprint, approved.commit);
      const events: DaemonEvent[] = [];
      const deps: TickDeps = {
        store, config, stateDir, sessionRoot, github, effects: wireEffects("live", { github: github.writer }), host: "testhost",
        launcher: launcherFor(config, { env, timeoutMs: 15_000 }), spoolDir: join(stateDir, "spool"), report: (e) => events.push(e),
      };
      try {
        await fn({ t, store, deps, config, events, lines: () => events.map((e) => e.line) });
      } finally {
        if (existsSync(sessionRoot)) await endSessions(sessionRoot);
      }
    } finally {
      store.close();
    }
  });
}
