/**
 * Which file is the config, and the `--config` option every command takes: the part of
 * the config that commands on the start-up path people feel (`log`, `session`) import,
 * without the parser and the schema validator `config.ts` loads.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { OptionDef, ParsedArgs } from "./cli.ts";
import { stringOption } from "./cli.ts";
import { EXIT, RobotArmyError } from "./errors.ts";

type Env = Record<string, string | undefined>;

/** The config file could not be used; names the file, and the key and line when known. */
export class ConfigError extends RobotArmyError {
  path: string;
  key: string | undefined;
  line: number | undefined;
  constructor(path: string, problem: string, where: { key?: string; line?: number; hint?: string } = {}) {
    const line = where.line ? ` (line ${where.line})` : "";
    super(`Cannot read config "${path}": ${problem}${line}${where.hint ? `; ${where.hint}` : ""}`, EXIT.precondition);
    this.name = "ConfigError";
    this.path = path;
    this.key = where.key;
    this.line = where.line;
  }
}

/** The `--config FILE` option, which every command that reads the config or the state dir takes. */
export const CONFIG_OPTION: OptionDef = {
  type: "string",
  value: "FILE",
  description: "Read settings from FILE (default: $RA_CONFIG, else $XDG_CONFIG_HOME/robot-army/config.toml, else ~/.config/robot-army/config.toml)",
};

/** Which config file applies, and whether it was named explicitly (then it must exist). */
export function configPath(flag?: string, env: Env = process.env): { path: string; explicit: boolean } {
  if (flag) return { path: resolve(flag), explicit: true };
  if (env.RA_CONFIG) return { path: resolve(env.RA_CONFIG), explicit: true };
  const base = env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homeOf(env), ".config");
  return { path: join(base, "robot-army", "config.toml"), explicit: false };
}

/**
 * For a command that reads nothing from the config (it works on the state dir alone) but
 * takes `--config` like every other, so one flag can follow any command: the file it names
 * must be there, so a mistyped path is never silently ignored.
 */
export function checkConfigOption(args: ParsedArgs): void {
  const flag = stringOption(args, "config");
  if (flag === undefined) return;
  const { path } = configPath(flag);
  if (!existsSync(path)) throw new ConfigError(path, "no such file");
}

function homeOf(env: Env): string {
  return env.HOME || homedir();
}
