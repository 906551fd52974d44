/**
 * What every part of the dashboard reads: the config, the state dir, the managed sessions'
 * root, the store (opened on first need and kept: the dashboard reads, and its buttons act
 * through the functions the commands run, audited as the commands audit them, naming the web
 * session), whether it may act at all (`serve --read-only`), what the verbs that start or remove
 * work need (wired on first need, as the commands wire them) and the daemon's health verdict.
 * The Hono app's variables are typed here too.
 */
import type { Config } from "../config.ts";
import { checkHealth } from "../daemon/health.ts";
import type { Health } from "../daemon/health.ts";
import { parseDuration } from "../duration.ts";
import { daemonLevel } from "../effects.ts";
import type { DispatchDeps } from "../dispatch/dispatch-deps.ts";
import { dispatchDepsFor } from "../dispatch/verbs/command-deps.ts";
import { openExistingStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import { PreconditionError } from "../errors.ts";

/**
 * The Hono environment of the dashboard's app: the CSRF token the guard set for this request's
 * forms, and, on a login form's POST, the wrong-token try the guard counted before its body was
 * read (taken back when the token is right).
 */
export type WebEnv = { Variables: { csrf: string; loginTry?: number; actor: string } };

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
  /** True when the dashboard only shows (`serve --read-only`): no buttons, and every action refused. */
  readonly readOnly: boolean;
  /** What resume, restart and reset use, at the daemon's effect level: wired on first need. */
  dispatchDeps(): Promise<DispatchDeps>;
}

/** The context of a dashboard reading `stateDir`: the store opened on first need, and closed by `close`. */
export function webContext(config: Config, stateDir: string, sessionRoot: string, options: { readOnly?: boolean } = {}): WebContext & { close(): void } {
  let store: Store | undefined;
  let deps: Promise<DispatchDeps> | undefined;
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
    readOnly: options.readOnly ?? false,
    async dispatchDeps() {
      const opened = await this.store();
      if (!opened) throw new PreconditionError(`Nothing is recorded in ${stateDir} yet, so there is nothing to start`);
      deps ??= dispatchDepsFor(config, opened, stateDir, daemonLevel(config)).then((wired) => ({ ...wired, sessionRoot }));
      // A connection that failed is tried again on the next press.
      return await deps.catch((error) => {
        deps = undefined;
        throw error;
      });
    },
    close() {
      deps = undefined;
      store?.close();
      store = undefined;
    },
  };
}
