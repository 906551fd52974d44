/**
 * What the recovery commands open: the config, the store, GitHub at the chosen effect
 * level, the session root and the configured launcher, wired once, as dispatch uses them.
 */
import type { ParsedArgs } from "../../cli.ts";
import { configFromArgs, hostName } from "../../config.ts";
import type { Config } from "../../config.ts";
import { resolveLevel, wireEffects } from "../../effects.ts";
import type { EffectLevel } from "../../effects.ts";
import { ensureSessionRoot } from "../../sessions/records.ts";
import { ensureStateDir } from "../../state-dir.ts";
import { withStore } from "../../store/open.ts";
import type { Store } from "../../store/open.ts";
import type { DispatchDeps } from "../dispatch-deps.ts";

/** Runs `fn` with dispatch's dependencies; the store is closed afterwards. */
export async function withDispatchDeps<T>(args: ParsedArgs, fn: (deps: DispatchDeps) => Promise<T>): Promise<T> {
  const config = await configFromArgs(args);
  const stateDir = ensureStateDir();
  const level = resolveLevel(args, config);
  return await withStore(stateDir, async (store) => await fn(await dispatchDepsFor(config, store, stateDir, level)));
}

/**
 * Dispatch's dependencies on an open store at an effect level: GitHub connected, the configured
 * launcher, this host. What the commands above wire, and what the dashboard's buttons that
 * start or remove work use (at the daemon's configured level).
 */
export async function dispatchDepsFor(config: Config, store: Store, stateDir: string, level: EffectLevel): Promise<DispatchDeps> {
  const { connectGitHub } = await import("../../boundaries/github.ts");
  const { launcherFor } = await import("../../boundaries/launchers/select.ts");
  const github = await connectGitHub(config, store, {});
  const effects = wireEffects(level, { github: github.writer });
  return { store, config, stateDir, sessionRoot: ensureSessionRoot(), github, effects, host: hostName(config), launcher: launcherFor(config) };
}

