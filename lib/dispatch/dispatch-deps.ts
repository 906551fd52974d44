/**
 * What dispatch works with: the store, the config, where state and sessions live, GitHub, the
 * effects wired from the effect level, the launcher and this host. Every start (the pass, the
 * recovery verbs, adoption after a crash) is given one.
 */
import type { GitHubReader } from "../boundaries/github-types.ts";
import type { Launcher } from "../boundaries/launchers/types.ts";
import type { Config } from "../config.ts";
import type { Effects } from "../effects.ts";
import type { Store } from "../store/open.ts";

/** What dispatch works with. */
export interface DispatchDeps {
  store: Store;
  config: Config;
  stateDir: string;
  sessionRoot: string;
  github: GitHubReader;
  effects: Effects;
  launcher: Launcher;
  host: string;
}
