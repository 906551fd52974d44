/**
 * What a scenario's setup is given and what it makes, and the real `robot-army` command its
 * steps (and a setup that prepares a world by running robot-army itself) run. The setups'
 * registry is lib/scenario/setups/index.ts; the runner, run.ts.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../runtime.ts";

/** Which runtime runs the steps' `robot-army`. */
export type Runtime = "node" | "deno";

/** What a setup is given: the scenario's fresh folder and the environment its steps will get. */
export interface SetupContext {
  /** The scenario's own fresh temp dir (real path). */
  dir: string;
  /** The environment the steps will get (HOME, RA_STATE_DIR, RA_NOW, XDG_*, PATH, ...). */
  env: Record<string, string>;
  runtime: "node" | "deno";
  /** Runs the real robot-army binary on the scenario's runtime, as a step would. */
  robotArmy(argv: string[], options?: { cwd?: string; env?: Record<string, string> }): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** What a setup made: where the steps run, `${NAME}` variables for them, and extra environment. */
export interface SetupResult {
  cwd: string;
  vars?: Record<string, string>;
  env?: Record<string, string>;
  /** Texts that differ from run to run and the placeholders shown instead, e.g. a forge's URL -> `<forge>`. */
  placeholders?: Record<string, string>;
  /** Stops what the setup started (a sandbox forge), after the last step and before the temp dir goes. */
  cleanup?: () => Promise<void>;
}

/** What every setup module exports. */
export interface SetupModule {
  setup(ctx: SetupContext): Promise<SetupResult>;
}

/**
 * The command that runs the real `robot-army` on a runtime: the binaries themselves, no
 * wrappers. On Node that is the entry `npx robot-army` runs; on Deno, the router itself.
 */
export function robotArmyCommand(runtime: Runtime, root: string = PROJECT_ROOT): string[] {
  if (runtime === "node") return [realpathSync(join(root, "node_modules", ".bin", "node")), join(root, "bin", "robot-army.mjs")];
  const script = join(root, "scripts", "robot-army.ts");
  return [join(root, "node_modules", "deno", "deno"), "run", "-A", "--quiet", "--config", join(root, "deno.json"), script];
}
