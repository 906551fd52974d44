/**
 * config.toml -> a validated, typed, frozen config with every default filled in.
 *
 * The file is `--config FILE`, else `RA_CONFIG`, else
 * `<XDG_CONFIG_HOME or ~/.config>/robot-army/config.toml`. `schema/config.schema.json`
 * is the single source of keys, types, descriptions and defaults, and its validator is
 * generated from it ahead of time (`npm run validators`); smol-toml and that validator are
 * loaded on first use, so commands that never read the config do not pay for them.
 */
import { readFileSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ParsedArgs } from "./cli.ts";
import { stringOption } from "./cli.ts";
import { formatAge, MAX_TIMER_MS } from "./duration.ts";
import { ConfigError, configPath } from "./config-path.ts";
import { displayKey, keyLines, lineOf } from "./_toml-lines.ts";
import { rememberConfiguredSecrets } from "./redact.ts";
/** Whether a text is an http:// or https:// URL, as the schema's `url` format checks it. */
export { isHttpUrl } from "./config-formats.ts";
import { secretFileFault } from "./secret-file.ts";

/** Where each key of a TOML text is defined, by dotted path (re-exported for tests and tools). */
export { keyLines };
/** Which file is the config, and the `--config` option, from the module light commands import. */
export { CONFIG_OPTION, ConfigError, checkConfigOption, configPath } from "./config-path.ts";

type Env = Record<string, string | undefined>;

/** How much of the world is real, least first (see DESIGN "effect level"). */
export const EFFECT_LEVELS = ["plan", "local", "no-remote", "live"] as const;
export type EffectLevel = (typeof EFFECT_LEVELS)[number];

/** The loaded config: the file's keys, with defaults for those it leaves out. */
export interface Config {
  readonly daemon: {
    readonly tick_seconds: number;
    readonly effect_level: EffectLevel;
    readonly poll_seconds: number;
    readonly max_concurrent_sessions: number;
    /** A duration such as `30s`. */
    readonly confirm_timeout: string;
    /** This machine's name in the claims on GitHub; empty for its hostname (`hostName`). */
    readonly host: string;
  };
  readonly claims: {
    /** A duration such as `10m`: how long a host's heartbeat may stand still before the host is taken for gone. */
    readonly lease: string;
  };
  readonly github: {
    readonly api_base: string;
    /** The GitHub login whose issues become work items; intake takes nothing without it. */
    readonly author?: string;
    /** Absolute: resolved against the config file's directory and `~`. */
    readonly token_file?: string;
    /** The name of the environment variable holding the token, never the token. */
    readonly token_env?: string;
    /** Besides the author, whose reviews and comments reach a worker (lib/intake/feedback.ts). */
    readonly reviewers: readonly string[];
    readonly label: string;
  };
  /** The repositories robot-army works on, keyed by `owner/name`; empty when the file names none. */
  readonly repos: Readonly<Record<string, RepoConfig>>;
  readonly worker: {
    readonly binary: string;
    /** Which agent the worker is (lib/dispatch/profiles.ts); when the file leaves it out, from the binary's name. */
    readonly profile: WorkerProfile;
    readonly args: readonly string[];
    readonly resume_args: readonly string[];
    readonly launcher: "tmux" | "process" | "kitty";
    readonly tmux_session: string;
    /** The tmux server's socket name (`tmux -L`); unset means tmux's own choice. */
    readonly tmux_socket?: string;
    readonly max_sessions: number;
  };
  readonly dispatch: {
    readonly order: "oldest" | "priority";
  };
  readonly worktrees: {
    /** Absolute when set; unset means `<state dir>/worktrees`. */
    readonly root?: string;
    /** Commands run in a new worktree, each an argv list. */
    readonly post_create: readonly (readonly string[])[];
  };
  readonly episodes: {
    /** A duration such as `12h`; `parseDuration` turns it into milliseconds. */
    readonly stranded_after: string;
  };
  readonly cleanup: {
    /** Reclaim a done item's worktree and branch on the next pass. */
    readonly on_issue_close: boolean;
    /** A duration such as `30d`: how long a deleted branch's bundle is kept. */
    readonly keep_bundles: string;
    /** Build output deleted with a worktree: folder names ending in `/` and name patterns (lib/boundaries/worktree-contents.ts). */
    readonly disposable: readonly string[];
  };
  readonly health: {
    /** The generic webhook every notification and health alert is POSTed to as JSON. */
    readonly webhook_url?: string;
    /** Absolute: a 0600 file holding the webhook's URL, for a URL that carries a secret. */
    readonly webhook_url_file?: string;
    /** A duration such as `5m`: a heartbeat older than this, its daemon alive, is HUNG. */
    readonly max_age: string;
  };
  /** Both files or neither (checked on load). */
  readonly pushover: {
    readonly token_file?: string;
    readonly user_key_file?: string;
    readonly api_url: string;
  };
  readonly notifications: {
    readonly events: readonly NotificationEvent[];
    readonly max_per_cycle: number;
    /** A duration such as `10s`: one delivery to one channel, at most. */
    readonly timeout: string;
  };
  /** The dashboard `robot-army serve` runs. */
  readonly web: {
    readonly bind: string;
    /** 0: any free port. */
    readonly port: number;
    /** Absolute: a 0600 file holding the token a request needs; required beyond loopback (checked by serve). */
    readonly token_file?: string;
    /** Host names a request's Host header may carry besides the address bound. */
    readonly allowed_hosts: readonly string[];
    /** Where the owner reaches the dashboard (`https://robot.lan:8443`): notifications link to an item's page there. */
    readonly public_url?: string;
  };
}

/** What the owner can be told of (`[notifications] events`). */
export const NOTIFICATION_EVENTS = ["dispatch", "completion", "failure", "needs_info", "anomaly"] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** The agents robot-army knows how to read and bring back (`worker.profile`). */
export const WORKER_PROFILES = ["claude", "codex", "demo", "generic"] as const;
export type WorkerProfile = (typeof WORKER_PROFILES)[number];

/**
 * The profile a binary implies when `worker.profile` is not set: `claude`, `codex` and
 * `demo-worker` by their basename (a path such as `/opt/bin/claude` counts), anything else generic.
 */
export function defaultProfile(binary: string): WorkerProfile {
  const name = binary.split("/").at(-1) ?? "";
  if (name === "claude") return "claude";
  if (name === "codex") return "codex";
  if (name === "demo-worker") return "demo";
  return "generic";
}

/** This machine's name among the hosts working on the same repositories: `daemon.host`, else its hostname, fitted (`fitHostName`). */
export function hostName(config: Config): string {
  return config.daemon.host || fitHostName(hostname());
}

/**
 * A machine's hostname as `daemon.host` must be, fit for a git reference's name: letters,
 * digits, `_` and `-` in dot-separated parts, starting with a letter or digit, at most 64
 * characters, not ending in `.lock`; anything else becomes `-`.
 * @example fitHostName("Jo's MacBook.local") // "Jo-s-MacBook.local"
 */
export function fitHostName(name: string): string {
  const parts = name.replace(/[^A-Za-z0-9._-]+/g, "-").split(".").filter(Boolean);
  const fitted = parts.join(".").replace(/^[^A-Za-z0-9]+/, "").slice(0, 64).replace(/\.+$/, "").replace(/\.lock$/, "-lock");
  return fitted || "robot-army-host";
}

/** One `[repos."owner/name"]` table. */
export interface RepoConfig {
  /** The local clone; absolute, resolved like `github.token_file`. */
  readonly path: string;
  /** Set in the config; else the default branch onboarding recorded (lib/repos/base-branch.ts `baseBranchOf`). */
  readonly base_branch?: string;
  /** The table's own limit, else `worker.max_sessions`. */
  readonly max_sessions: number;
  /** Higher goes first. */
  readonly priority: number;
}

/** The config for a command that takes `CONFIG_OPTION` as `--config`. */
export async function configFromArgs(args: ParsedArgs, env: Env = process.env): Promise<Config> {
  return await loadConfig({ path: stringOption(args, "config"), env });
}

/**
 * Reads and validates the config file. A missing file at the default path means all
 * defaults; a missing file named by `--config` or `RA_CONFIG` is an error.
 */
export async function loadConfig(options: { path?: string; env?: Env } = {}): Promise<Config> {
  const env = options.env ?? process.env;
  const { path, text } = readConfigText(options.path, env);
  return await configFromText(text, path, env);
}

/**
 * Which file is the config and what it holds now: "" for a missing file at the default path
 * (all defaults); a missing file named by `--config` or `RA_CONFIG` is a ConfigError.
 */
export function readConfigText(flag: string | undefined, env: Env = process.env): { path: string; text: string } {
  const { path, explicit } = configPath(flag, env);
  try {
    return { path, text: readFileSync(path, "utf8") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !explicit) return { path, text: "" };
    if (code === "ENOENT") throw new ConfigError(path, "no such file");
    throw new ConfigError(path, (error as Error).message);
  }
}

/** The config this text holds, validated whole, its credential files checked and its secrets given to the redactor. */
export async function configFromText(text: string, path: string, env: Env = process.env): Promise<Config> {
  const config = await parseConfig(text, path, env);
  checkCredentialFiles(config, path, keyLines(text));
  // The redactor learns the configured credentials before any outside text is stored or printed.
  rememberConfiguredSecrets(config, env);
  return config;
}

/** Validates config text as read from `path` (which names it in errors and anchors relative paths). */
export async function parseConfig(text: string, path: string, env: Env = process.env): Promise<Config> {
  const lines = keyLines(text);
  // No key at all (no file, or whitespace only): every default, as the validator would fill them in, without loading it.
  const data = holdsNoKey(text) ? schemaDefaults() : await validated(text, path, lines);
  refuseInexactIntegers(data, configSchema(), [], data, path, lines);
  resolvePaths(data, configSchema(), dirname(path), homeOf(env));
  inheritSessionLimits(data);
  inferProfile(data);
  checkChannels(data, path, lines);
  return deepFreeze(data) as unknown as Config;
}

/** The TOML text as plain objects, refused if it holds a credential, validated whole with the schema's defaults filled in. */
async function validated(text: string, path: string, lines: Map<string, number>): Promise<Record<string, unknown>> {
  const validate = await validator();
  const data = await parseToml(text, path);
  refuseCredentials(data, path, lines);
  if (!validate(data)) throw schemaError(validate.errors?.[0], data, path, lines);
  return data;
}

/** Whether config text holds no key: no file, or TOML's whitespace and newlines only. */
function holdsNoKey(text: string): boolean {
  return /^(?:[ \t\n]|\r\n)*$/.test(text);
}

/**
 * What the validator makes of a config with no key: every default of the schema, written
 * ahead of time by `npm run validators` (schema/validate/config-defaults.json), so a command
 * run without a config loads neither the TOML parser nor the validator (about a tenth of
 * `status`'s start). A fresh copy each time: the caller resolves and freezes it.
 */
function schemaDefaults(): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL("../schema/validate/config-defaults.json", import.meta.url), "utf8")) as Record<string, unknown>;
}

/** The TOML text as plain objects; text that holds no key is not even parsed. */
async function parseToml(text: string, path: string): Promise<Record<string, unknown>> {
  if (holdsNoKey(text)) return {};
  const { parse, TomlError } = await import("smol-toml");
  try {
    // smol-toml's tables have a null prototype; the config is made of plain objects.
    return plain(parse(text)) as Record<string, unknown>;
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    // smol-toml's message is "Invalid TOML document: <what>" followed by a code excerpt.
    const what = error.message.replace(/^Invalid TOML document: /, "").split("\n")[0];
    throw new ConfigError(path, `invalid TOML: ${what}`, { line: error.line });
  }
}

/** A JSON Schema node, as far as this module and `example-config` read one. */
export interface SchemaNode {
  description?: string;
  type?: string;
  enum?: unknown[];
  format?: string;
  default?: unknown;
  examples?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  /** A schema here makes the table a map: any name `propertyNames` allows, each value this. */
  additionalProperties?: boolean | SchemaNode;
  propertyNames?: SchemaNode;
}

let schema: SchemaNode | undefined;

/** `schema/config.schema.json`, parsed once. */
export function configSchema(): SchemaNode {
  schema ??= JSON.parse(readFileSync(new URL("../schema/config.schema.json", import.meta.url), "utf8")) as SchemaNode;
  return schema;
}

/** The config a missing file gives: every default from the schema. */
export async function defaultConfig(): Promise<Config> {
  return await parseConfig("", "(defaults)", {});
}

// Validation, and errors that say what is wrong where.

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  /** Set when a table's key name, not its value, broke `propertyNames`. */
  propertyName?: string;
}

type Validate = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

let compiled: Promise<Validate> | undefined;

/** The config's validator: ajv's standalone code for the schema (schema/validate/config.mjs, `npm run validators`), loaded once. */
function validator(): Promise<Validate> {
  compiled ??= import(new URL("../schema/validate/config.mjs", import.meta.url).href).then((module) => module.validate as Validate);
  return compiled;
}

const FORMAT_TEXT: Record<string, string> = {
  duration: "must be a duration such as 90s, 30m, 12h or 2d",
  timer: `must be a duration such as 30s or 10m, at most ${formatAge(MAX_TIMER_MS)} (the longest a timer can wait)`,
  url: "must be an http:// or https:// URL",
  path: "must be a path",
};

function schemaError(error: AjvError | undefined, data: unknown, path: string, lines: Map<string, number>): ConfigError {
  if (!error) return new ConfigError(path, "is not valid");
  const segments = pointerSegments(error.instancePath);
  if (error.keyword === "additionalProperties") {
    const unknown = [...segments, String(error.params.additionalProperty)];
    const known = Object.keys(schemaAt(segments)?.properties ?? {});
    const key = displayKey(unknown, data);
    const hint = known.length ? `known keys${segments.length ? ` of [${displayKey(segments, data)}]` : ""}: ${known.join(", ")}` : undefined;
    return new ConfigError(path, `unknown key "${key}"`, { key, line: lineOf(unknown, lines), hint });
  }
  if (error.propertyName !== undefined) {
    const named = [...segments, error.propertyName];
    const key = displayKey(named, data);
    const hint = exampleHint(schemaAt(segments)?.propertyNames);
    const problem = `is not a valid name: it ${problemText(error, error.propertyName)}`;
    return new ConfigError(path, `key "${key}" ${problem}`, { key, line: lineOf(named, lines), hint });
  }
  if (error.keyword === "required") {
    const key = displayKey([...segments, String(error.params.missingProperty)], data);
    return new ConfigError(path, `key "${key}" is required`, { key, line: lineOf(segments, lines) });
  }
  const key = displayKey(segments, data);
  const value = valueAt(segments, data);
  const hint = error.keyword === "pattern" ? exampleHint(schemaAt(segments)) : undefined;
  return new ConfigError(path, `key "${key}" ${problemText(error, value)}`, { key, line: lineOf(segments, lines), hint });
}

function exampleHint(node: SchemaNode | undefined): string | undefined {
  const example = node?.examples?.[0];
  return example === undefined ? undefined : `for example ${JSON.stringify(example)}`;
}

function problemText(error: AjvError, value: unknown): string {
  const p = error.params;
  switch (error.keyword) {
    case "type":
      if (p.type === "integer") return typeof value === "number" ? "must be a whole number" : "must be a number";
      if (p.type === "object") return "must be a table";
      return `must be ${p.type === "array" ? "an" : "a"} ${p.type}`;
    case "enum": {
      const allowed = (p.allowedValues as unknown[]).map((v) => JSON.stringify(v));
      return `must be one of ${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}, got ${JSON.stringify(value)}`;
    }
    case "minimum":
      return `must be at least ${p.limit}`;
    case "maximum":
      return `must be at most ${p.limit}`;
    case "minLength":
      return "must not be empty";
    case "pattern":
      // The value is not echoed: a pattern guards names, and a secret may sit where a name belongs.
      return `must match ${p.pattern}`;
    case "format":
      return FORMAT_TEXT[String(p.format)] ?? `must be a ${p.format}`;
    default:
      return error.message ?? "is not valid";
  }
}

const CREDENTIAL_NAME = /token|passw(or)?d|secret|credential|api[_-]?key|private[_-]?key/i;
/** Names that say where a credential lives (a file, an environment variable), not the credential. */
const CREDENTIAL_POINTER = /_(file|env)$/;
const CREDENTIAL_VALUE = /^(gh[opusr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})/;
const WEBHOOK_HINT = "a webhook URL that carries its own secret goes whole into a file only you can read (chmod 600), named by health.webhook_url_file";
const CREDENTIAL_HINT = "credentials live in 0600 files named by a *_file key such as github.token_file, or in an environment variable named by github.token_env";

/**
 * DESIGN rule 5: a credential written into config.toml is a load error, its value never
 * echoed. Runs before the schema, so a misspelt key cannot slip a credential past it. The
 * names of a map's entries (`[repos."acme/token-service"]`) are data, not setting names.
 */
function refuseCredentials(data: Record<string, unknown>, path: string, lines: Map<string, number>): void {
  const refuse = (segments: string[], problem: string): never => {
    const key = displayKey(segments, data);
    const hint = key === "health.webhook_url" ? WEBHOOK_HINT : CREDENTIAL_HINT;
    throw new ConfigError(path, `key "${key}" ${problem}`, { key, line: lineOf(segments, lines), hint });
  };
  const visit = (value: unknown, node: SchemaNode | undefined, segments: string[]): void => {
    if (typeof value === "string" && CREDENTIAL_VALUE.test(value)) refuse(segments, "holds what looks like a GitHub token");
    if (typeof value === "string" && hasUrlCredentials(value)) refuse(segments, "holds a URL with credentials in it (user:password@, token@, or a token or key in its query)");
    if (Array.isArray(value)) {
      value.forEach((entry, index) => visit(entry, node?.items, [...segments, String(index)]));
    } else if (isTable(value)) {
      for (const [name, entry] of Object.entries(value)) {
        const isEntryName = !node?.properties?.[name] && entrySchema(node) !== undefined;
        if (!isEntryName && CREDENTIAL_NAME.test(name) && !CREDENTIAL_POINTER.test(name)) {
          refuse([...segments, name], "looks like a credential");
        }
        visit(entry, childSchema(node, name), [...segments, name]);
      }
    }
  };
  visit(data, configSchema(), []);
}

/** Query parameters that carry a credential (`?auth=`, `?token=`, `?api_key=`, `?sig=`). */
const CREDENTIAL_QUERY = /token|auth|key|secret|passw(or)?d|sig(nature)?|credential|session/i;

/**
 * Whether `value` is a URL carrying userinfo (`user:pass@`, `token@`) or a credential in
 * its query (`?auth=...`, `?token=...`): a credential however it is spelt.
 */
function hasUrlCredentials(value: string): boolean {
  if (!value.includes("@") && !value.includes("?")) return false;
  try {
    const url = new URL(value);
    if (url.username !== "" || url.password !== "") return true;
    return [...url.searchParams.keys()].some((name) => CREDENTIAL_QUERY.test(name));
  } catch {
    return false;
  }
}

/** Every key naming a credential file: the channels' and the dashboard's token. */
const CREDENTIAL_FILE_KEYS = [["pushover", "token_file"], ["pushover", "user_key_file"], ["health", "webhook_url_file"], ["web", "token_file"]] as const;

/**
 * The notification channels as configured (DESIGN rule 5): Pushover's two files both or
 * neither (a half channel can never send, so it is an error, not silence), and the webhook
 * by URL or by file, not both. The files themselves are checked by `checkCredentialFiles`
 * when the config is loaded from its file, and read where a message is sent.
 */
function checkChannels(data: Record<string, unknown>, path: string, lines: Map<string, number>): void {
  const config = data as unknown as Pick<Config, "pushover" | "health">;
  const fail = (segments: string[], problem: string, hint?: string): never => {
    const key = segments.join(".");
    throw new ConfigError(path, problem, { key, line: lineOf(segments, lines), hint });
  };
  const { token_file, user_key_file } = config.pushover;
  if ((token_file === undefined) !== (user_key_file === undefined)) {
    const missing = token_file === undefined ? "token_file" : "user_key_file";
    fail(["pushover", token_file === undefined ? "user_key_file" : "token_file"],
      `[pushover] needs both pushover.token_file and pushover.user_key_file, or neither; pushover.${missing} is missing`,
      "a Pushover message needs the application's token and your user key: give both files, or leave [pushover] out");
  }
  // A query or a fragment is where a URL's secret goes when it is not in its user-info (?code=, #token=): the config holds none.
  for (const segments of [["health", "webhook_url"], ["pushover", "api_url"]] as const) {
    const value = (config[segments[0]] as Record<string, string | undefined>)[segments[1]];
    if (value !== undefined && /[?#]/.test(value)) {
      fail([...segments], `key "${segments.join(".")}" holds a URL with a query or fragment, where a credential may be`, WEBHOOK_HINT);
    }
  }
  if (config.health.webhook_url !== undefined && config.health.webhook_url_file !== undefined) {
    fail(["health", "webhook_url_file"], "[health] sets both health.webhook_url and health.webhook_url_file; keep one, so it is clear where notifications go");
  }
}

/**
 * Every credential file a channel or the dashboard names is a regular file only its owner can read or write
 * (0600), checked when the config is loaded from its file (DESIGN rule 5), so a loose one
 * is a load error, not a channel that fails on its first message.
 */
function checkCredentialFiles(config: Config, path: string, lines: Map<string, number>): void {
  const fail = (segments: readonly string[], problem: string, hint?: string): never => {
    throw new ConfigError(path, problem, { key: segments.join("."), line: lineOf([...segments], lines), hint });
  };
  for (const segments of CREDENTIAL_FILE_KEYS) {
    const file = (config[segments[0]] as Record<string, string | undefined>)[segments[1]];
    if (file === undefined) continue;
    const names = `key "${segments.join(".")}" names "${file}", which`;
    const fault = secretFileFault(file);
    if (fault?.fault === "unreadable") fail(segments, `${names} cannot be read: ${fault.code}`);
    if (fault?.fault === "directory" || fault?.fault === "not_regular") fail(segments, `${names} is not a regular file`);
    if (fault?.fault === "loose") fail(segments, `${names} has mode ${fault.mode}; a credential file must be 0600`, `chmod 600 "${file}"`);
  }
}

/**
 * A whole number the schema takes must be exact: TOML allows 64 bits, but past 2^53-1 a
 * number is not the one written (`9007199254740993` reads as ...992), and `1e300` passes as
 * "integer" where no maximum is set. Runs after the schema, so the value is of its key's type.
 */
function refuseInexactIntegers(value: unknown, node: SchemaNode | undefined, segments: string[], data: unknown, path: string, lines: Map<string, number>): void {
  if (node?.type === "integer" && typeof value === "number" && !Number.isSafeInteger(value)) {
    const key = displayKey(segments, data);
    throw new ConfigError(path, `key "${key}" must be a whole number from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`, { key, line: lineOf(segments, lines) });
  }
  if (Array.isArray(value)) value.forEach((entry, index) => refuseInexactIntegers(entry, node?.items, [...segments, String(index)], data, path, lines));
  else if (isTable(value)) {
    for (const [name, entry] of Object.entries(value)) refuseInexactIntegers(entry, childSchema(node, name), [...segments, name], data, path, lines);
  }
}

/** `format: "path"` values: `~` is the home dir, a relative path is relative to the config file. */
function resolvePaths(table: Record<string, unknown>, node: SchemaNode, base: string, home: string): void {
  for (const [name, value] of Object.entries(table)) {
    const child = childSchema(node, name);
    if (child?.format === "path" && typeof value === "string") {
      table[name] = value === "~" || value.startsWith("~/") ? join(home, value.slice(1)) : resolve(base, value);
    } else if (child && isTable(value)) {
      resolvePaths(value, child, base, home);
    }
  }
}

/** A repository without its own `max_sessions` gets `worker.max_sessions`, so no reader needs the fallback. */
function inheritSessionLimits(data: Record<string, unknown>): void {
  const config = data as { worker: { max_sessions: number }; repos: Record<string, { max_sessions?: number }> };
  for (const repo of Object.values(config.repos)) repo.max_sessions ??= config.worker.max_sessions;
}

/** A worker without `profile` gets the one its binary's name implies, so no reader needs the fallback. */
function inferProfile(data: Record<string, unknown>): void {
  const worker = (data as { worker: { binary: string; profile?: WorkerProfile } }).worker;
  worker.profile ??= defaultProfile(worker.binary);
}

/** The schema of a table's key, of a map's entry (`[repos."owner/name"]`) or of a list's item. */
function childSchema(node: SchemaNode | undefined, segment: string): SchemaNode | undefined {
  return node?.properties?.[segment] ?? entrySchema(node) ?? node?.items;
}

function entrySchema(node: SchemaNode | undefined): SchemaNode | undefined {
  return typeof node?.additionalProperties === "object" ? node.additionalProperties : undefined;
}

function schemaAt(segments: string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = configSchema();
  for (const segment of segments) node = childSchema(node, segment);
  return node;
}

function pointerSegments(pointer: string): string[] {
  if (!pointer) return [];
  return pointer.slice(1).split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function valueAt(segments: string[], data: unknown): unknown {
  let value = data;
  for (const segment of segments) value = (value as Record<string, unknown> | undefined)?.[segment];
  return value;
}

function homeOf(env: Env): string {
  return env.HOME || homedir();
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value !== "object" || value === null || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, plain(entry)]));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
