/**
 * What every part of the dashboard reads: the config, the state dir, the managed sessions'
 * root, the store (opened on first need and kept: the dashboard only reads, but for the few
 * writes the CLI's own functions make, audited as the CLI audits them) and the daemon's
 * health verdict. The Hono app's variables are typed here too.
 */
import type { Config } from "../config.ts";
import { checkHealth } from "../daemon/health.ts";
import type { Health } from "../daemon/health.ts";
import { parseDuration } from "../duration.ts";
import { openExistingStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";

/**
 * The Hono environment of the dashboard's app: the CSRF token the guard set for this request's
 * forms, and, on a login form's POST, the wrong-token try the guard counted before its body was
 * read (taken back when the token is right).
 */
export type WebEnv = { Variables: { csrf: string; loginTry?: number } };

/** What the dashboard's pages read. */
export interface WebContext {
  readonly config: Config;
  readonly stateDir: string;
  /** Where the managed sessions' records and output logs are (lib/sessions/records.ts sessionRoot). */
  readonly sessionRoot: string;
  /** The store, or undefined while there is none yet (nothing has been recorded). */
  store(): Promise<Store | undefined>;
  /** The daemon's health verdict, as `robot-army health` judges it. */
  health(): Health;
}

/** The context of a dashboard reading `stateDir`: the store opened on first need, and closed by `close`. */
export function webContext(config: Config, stateDir: string, sessionRoot: string): WebContext & { close(): void } {
  let store: Store | undefined;
  let opening: Promise<Store | undefined> | undefined;
  const maxAgeMs = parseDuration(config.health.max_age, "health.max_age");
  return {
    config,
    stateDir,
    sessionRoot,
    async store() {
      if (store) return store;
      // Until something records its first record there is no store, and the dashboard makes none.
      opening ??= openExistingStore(stateDir).finally(() => { opening = undefined; });
      store = await opening;
      return store;
    },
    health: () => checkHealth(stateDir, maxAgeMs),
    close() {
      store?.close();
      store = undefined;
    },
  };
}
