/**
 * What `robot-army onboard <repo>` (and, for the crash suite, a live poll) records, done in
 * the calling process: a scenario setup's or a test's, where robot-army's modules are
 * already loaded. A command's own process spends about 0.7 s of CPU loading them and git's
 * runner before it records the same rows, and nearly every forge setup onboards first; on
 * CI's two cores that is a minute of each scenario run. Steps, and every test of onboarding
 * itself, run the real command.
 */
import { hostname } from "node:os";
import { connectGitHub } from "../boundaries/github.ts";
import { loadConfig } from "../config.ts";
import { wireEffects } from "../effects.ts";
import { pollRepositories } from "../intake/poll.ts";
import { onboardRepository } from "../repos/onboard.ts";
import { ensureStateDir } from "../state-dir.ts";
import { openStore } from "../store/open.ts";

/** Where the command would have run: its environment (HOME, RA_STATE_DIR, RA_NOW, XDG_*), and a config file when not the default one. */
export interface HereEnv {
  env: Record<string, string>;
  configFile?: string;
}

/**
 * Onboards `repo` as `robot-army onboard <repo>` would (no --reapprove), at the clock
 * `where.env.RA_NOW`; with `pollLiveFrom` (the clone's path) it then polls it at live, as
 * `robot-army poll --effect-level live` would.
 */
export async function onboardHere(where: HereEnv, repo: string, options: { pollLiveFrom?: string } = {}): Promise<void> {
  const restoreClock = fixClock(where.env.RA_NOW);
  try {
    const config = await loadConfig({ path: where.configFile, env: where.env });
    const store = await openStore(ensureStateDir(where.env));
    try {
      const github = await connectGitHub(config, store, { env: where.env, timeoutMs: 5_000 });
      await onboardRepository(store, github, config, repo);
      if (options.pollLiveFrom === undefined) return;
      const rules = { author: config.github.author!, label: config.github.label };
      const effects = wireEffects("live", { github: github.writer });
      const [polled] = await pollRepositories({ store, reader: github, effects, rules, host: hostname(), paths: { [repo]: options.pollLiveFrom } }, [repo]);
      if (polled.error !== null) throw new Error(`the poll of ${repo} failed: ${polled.error}`);
    } finally {
      store.close();
    }
  } finally {
    restoreClock();
  }
}

let clockUsers = 0;
let clockFixedAt: string | undefined;
let clockBefore: string | undefined;

/**
 * Fixes this process's clock (RA_NOW, the only source of "now": lib/clock.ts) at `at` while
 * any caller needs it, and puts it back when the last one is done. Callers run side by side
 * (two scenarios, two crashes), so all must ask for the same time; another throws.
 */
function fixClock(at: string | undefined): () => void {
  if (at === undefined) throw new Error("onboardHere needs RA_NOW in its environment: the command it stands for would run at that clock");
  if (clockUsers > 0 && clockFixedAt !== at) throw new Error(`onboardHere at ${at} while another runs at ${clockFixedAt}: this process has one clock`);
  if (clockUsers++ === 0) {
    clockBefore = process.env.RA_NOW;
    clockFixedAt = at;
    process.env.RA_NOW = at;
  }
  return () => {
    if (--clockUsers > 0) return;
    clockFixedAt = undefined;
    if (clockBefore === undefined) delete process.env.RA_NOW;
    else process.env.RA_NOW = clockBefore;
  };
}
