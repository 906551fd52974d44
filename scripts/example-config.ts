/**
 * `robot-army example-config`: prints a fully commented config.toml generated from
 * `schema/config.schema.json`. Every key is commented out with its default value (or its
 * first `examples` value), and a table of tables such as `[repos."owner/name"]` is shown as
 * one commented-out example table, so the file loads to the defaults as it stands.
 * `config.example.toml` is this output, committed; a unit test fails when the two drift.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, stringOption, writeStdout } from "../lib/cli.ts";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { createFileExclusive, writeFileAtomic } from "../lib/atomic.ts";
import { PreconditionError, RobotArmyError, UsageError } from "../lib/errors.ts";
import { configSchema } from "../lib/config.ts";
import type { SchemaNode } from "../lib/config.ts";

export const command: CommandDef = {
  name: "example-config",
  summary: "Print a fully commented config.toml",
  usage: "example-config [--output FILE [--force]]",
  description: `\
Prints every setting robot-army reads, each with its description, its type or allowed
values and its default, commented out with the default value (or an example value where
there is no default), and the repository table as a commented-out example: the file loads
to the defaults as it stands, and you uncomment only what you change. The config file is
--config FILE, else $RA_CONFIG, else $XDG_CONFIG_HOME/robot-army/config.toml, else
~/.config/robot-army/config.toml.

With --output FILE it writes the file instead (its folder made as needed, the file whole
or not at all) and says where; a file already there is refused (exit 3) unless --force
is given, so a config you edited is never overwritten by accident.
`,
  options: {
    output: { type: "string", value: "FILE", description: "Write the example to FILE instead of printing it; an existing FILE is refused without --force" },
    force: { type: "boolean", description: "With --output, replace a file that is already there" },
  },
  examples: ["robot-army example-config > ~/.config/robot-army/config.toml", "robot-army example-config --output ~/.config/robot-army/config.toml"],
};

/** Parses argv and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const output = stringOption(args, "output");
  if (args.values.force === true && output === undefined) throw new UsageError("--force goes with --output FILE: it says an existing FILE may be replaced");
  return run({ output, force: args.values.force === true }, { write: writeStdout });
}

/** Prints the example config generated from the schema (the config's own, unless another is given), or writes it to `output`. */
export function run(opts: { output?: string; force?: boolean }, deps: { write: Write; schema?: SchemaNode }): number {
  const text = exampleConfig(deps.schema).trimEnd() + "\n";
  if (opts.output === undefined) {
    deps.write(text);
    return 0;
  }
  const path = resolve(opts.output);
  if (isFolder(path)) throw new PreconditionError(`"${path}" is a folder; nothing was written (name a file in it)`);
  if (!writeOutput(path, text, opts.force === true)) {
    throw new PreconditionError(`"${path}" is already there; nothing was written (--force replaces it)`);
  }
  deps.write(`wrote the example config to ${path}\n`);
  return 0;
}

/**
 * Writes the file whole or not at all (replacing one only when `force`); false when one is
 * there and may not be replaced. What the file system refuses (a name too long, a folder
 * that cannot be made, no permission) is a one-line failure naming the file, never a trace.
 */
function writeOutput(path: string, text: string, force: boolean): boolean {
  try {
    if (force) writeFileAtomic(path, text);
    else return createFileExclusive(path, text);
    return true;
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (typeof code !== "string") throw error;
    throw new RobotArmyError(`Cannot write the example config to "${path}": ${WHY[code] ?? code}; the file was not written`);
  }
}

/** What the file system's refusals mean for a file named on the command line. */
const WHY: Record<string, string> = {
  ENAMETOOLONG: "a name in that path is longer than the file system allows (ENAMETOOLONG)",
  EEXIST: "a file stands where that path needs a folder (EEXIST)",
  ENOTDIR: "a file stands where that path needs a folder (ENOTDIR)",
  EACCES: "permission denied (EACCES)",
  EPERM: "permission denied (EPERM)",
  EROFS: "the file system is read-only (EROFS)",
  ENOSPC: "the disk is full (ENOSPC)",
  EISDIR: "that path is a folder (EISDIR)",
};

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The example config's text. */
export function exampleConfig(schema: SchemaNode = configSchema()): string {
  const out = [
    "# robot-army config.toml",
    "#",
    ...comment(schema.description ?? ""),
    "#",
    ...comment("Every key is shown commented out with its default value, or an example value where it has none, so this file loads to the defaults as it stands. Uncomment a key to change it."),
    "#",
    ...comment("Generated by `robot-army example-config` from schema/config.schema.json."),
  ];
  for (const [section, table] of Object.entries(schema.properties ?? {})) {
    const entry = typeof table.additionalProperties === "object" ? table.additionalProperties : undefined;
    if (entry && !table.properties) {
      // A table of tables has no keys of its own: show one entry, header and all, commented out.
      const name = String(table.propertyNames?.examples?.[0] ?? "name");
      out.push("", ...comment(table.description ?? ""), ...comment(EXAMPLE_TABLE), `# [${section}.${tomlKey(name)}]`);
      out.push(...keyBlocks(entry));
    } else {
      out.push("", ...comment(table.description ?? ""), `[${section}]`, ...keyBlocks(table));
    }
  }
  return out.join("\n") + "\n";
}

const EXAMPLE_TABLE = "The table below is an example: uncomment its header and its keys, once for each one you add.";

/** Each key of a table: its description, its facts, and the key commented out with a value. */
function keyBlocks(table: SchemaNode): string[] {
  return Object.entries(table.properties ?? {}).flatMap(([key, node]) => [
    "",
    ...comment(node.description ?? ""),
    ...comment(facts(node, table.required?.includes(key) ?? false)),
    `# ${key} = ${tomlValue(shownValue(node))}`,
  ]);
}

/** `Type: whole number, at least 1. Default: 60.` */
function facts(node: SchemaNode, required: boolean): string {
  const kind = node.enum ? `One of ${node.enum.map((v) => JSON.stringify(v)).join(", ")}` : `Type: ${typeText(node)}`;
  const fallback = required ? "Required" : node.default === undefined ? "Optional, no default" : `Default: ${tomlValue(node.default)}`;
  return `${kind}. ${fallback}.`;
}

function typeText(node: SchemaNode): string {
  const limits = [
    node.minimum !== undefined ? `at least ${node.minimum}` : undefined,
    node.maximum !== undefined ? `at most ${node.maximum}` : undefined,
    node.minLength ? "not empty" : undefined,
    node.pattern ? `matching ${node.pattern}` : undefined,
  ].filter(Boolean);
  const base = node.format ? FORMAT_NAMES[node.format] ?? node.format
    : node.type === "integer" ? "whole number"
    : node.type === "array" ? `list of ${node.items?.type ?? "value"}s`
    : node.type ?? "value";
  return [base, ...limits].join(", ");
}

const FORMAT_NAMES: Record<string, string> = {
  duration: "duration (90s, 30m, 12h, 2d, 1h30m)",
  timer: "duration (30s, 10m, 1h30m), at most 24d 20h",
  url: "http:// or https:// URL",
  path: "path",
};

function shownValue(node: SchemaNode): unknown {
  return node.default !== undefined ? node.default : node.examples?.[0] ?? "";
}

function tomlValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  // JSON strings and numbers are valid TOML for the ASCII values a config holds.
  return JSON.stringify(value);
}

/** A bare key as it is, any other quoted: `widgets`, `"octo-org/widgets"`. */
function tomlKey(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name);
}

/** Text as `# ` lines wrapped to 88 columns. */
function comment(text: string, width = 88): string[] {
  const lines: string[] = [];
  let line = "#";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.length + 1 + word.length > width && line !== "#") {
      lines.push(line);
      line = "#";
    }
    line += ` ${word}`;
  }
  if (line !== "#") lines.push(line);
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
