/**
 * What the recovery commands open: the config, the store, GitHub at the chosen effect
 * level, the session root and the configured launcher, wired once, as dispatch uses them.
 */
import type { ParsedArgs } from "../../cli.ts";
import { configFromArgs, hostName } from "../../config.ts";
import { effectsFor } from "../../effects.ts";
import { ensureSessionRoot } from "../../sessions/records.ts";
import { ensureStateDir } from "../../state-dir.ts";
import { withStore } from "../../store/open.ts";
import type { DispatchDeps } from "../dispatch-deps.ts";

/** Runs `fn` with dispatch's dependencies; the store is closed afterwards. */
export async function withDispatchDeps<T>(args: ParsedArgs, fn: (deps: DispatchDeps) => Promise<T>): Promise<T> {
  const config = await configFromArgs(args);
  const stateDir = ensureStateDir();
  return await withStore(stateDir, async (store) => {
    const { connectGitHub } = await import("../../boundaries/github.ts");
    const { launcherFor } = await import("../../boundaries/launchers/select.ts");
    const github = await connectGitHub(config, store, {});
    const effects = effectsFor(args, config, { github: github.writer });
    return await fn({
      store, config, stateDir, sessionRoot: ensureSessionRoot(), github, effects, host: hostName(config), launcher: launcherFor(config),
    });
  });
}

