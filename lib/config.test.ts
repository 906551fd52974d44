import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, EFFECT_LEVELS, configPath, configSchema, defaultConfig, keyLines, loadConfig, parseConfig } from "./config.ts";
import type { Config } from "./config.ts";
import { EXIT } from "./errors.ts";
import { makeTempDir, removeTempDir } from "./fixtures.ts";

const DEFAULTS: Config = {
  daemon: { tick_seconds: 60, effect_level: "plan" },
  github: { api_base: "https://api.github.com", label: "robot-army" },
  worker: { binary: "demo-worker", args: [], terminal: "tmux", max_sessions: 2 },
  episodes: { stranded_after: "12h" },
  notify: { max_per_cycle: 5 },
};

const PATH = "/x/config.toml";

async function configError(text: string): Promise<ConfigError> {
  try {
    await parseConfig(text, PATH, { HOME: "/home/owner" });
  } catch (error) {
    assert.instance(error, ConfigError);
    return error as ConfigError;
  }
  assert.unreachable(`config loaded: ${text}`);
  throw new Error("unreachable");
}

test("an empty file gives every default", async () => {
  assert.equal(await parseConfig("", PATH), DEFAULTS);
  assert.equal(await defaultConfig(), DEFAULTS);
});

test("set keys are kept and the rest of their table defaults", async () => {
  const config = await parseConfig(
    ["[daemon]", "effect_level = \"live\"", "", "[worker]", "binary = \"claude\"", "args = [\"--model\", \"opus\"]"].join("\n"),
    PATH,
  );
  assert.equal(config.daemon, { tick_seconds: 60, effect_level: "live" });
  assert.equal(config.worker, { binary: "claude", args: ["--model", "opus"], terminal: "tmux", max_sessions: 2 });
});

test("the config is frozen all the way down", async () => {
  const config = await parseConfig("[worker]\nargs = [\"a\"]\n", PATH);
  assert.ok(Object.isFrozen(config));
  assert.ok(Object.isFrozen(config.worker));
  assert.ok(Object.isFrozen(config.worker.args));
  assert.throws(() => {
    (config.daemon as { tick_seconds: number }).tick_seconds = 1;
  });
});

test("a wrong type names the file, the key and the line", async () => {
  const error = await configError("# robot-army\n\n[daemon]\n\ntick_seconds = \"fast\"\n");
  assert.is(error.message, 'Cannot read config "/x/config.toml": key "daemon.tick_seconds" must be a number (line 5)');
  assert.is(error.key, "daemon.tick_seconds");
  assert.is(error.line, 5);
  assert.is(error.exitCode, EXIT.precondition);
});

test("a fraction where a whole number belongs says so", async () => {
  const error = await configError("[worker]\nmax_sessions = 1.5\n");
  assert.is(error.message, 'Cannot read config "/x/config.toml": key "worker.max_sessions" must be a whole number (line 2)');
});

test("an enum lists what is allowed and what it got", async () => {
  const error = await configError("[daemon]\neffect_level = \"yolo\"\n");
  assert.is(error.message, 'Cannot read config "/x/config.toml": key "daemon.effect_level" must be one of "plan", "local", "no-remote" or "live", got "yolo" (line 2)');
});

test("limits, formats and list items are checked, with lines", async () => {
  assert.match((await configError("[worker]\nmax_sessions = 0\n")).message, 'key "worker.max_sessions" must be at least 1 (line 2)');
  assert.match((await configError("[episodes]\nstranded_after = \"12 hours\"\n")).message, 'key "episodes.stranded_after" must be a duration such as 90s, 30m, 12h or 2d (line 2)');
  assert.match((await configError("[github]\napi_base = \"ftp://example.com\"\n")).message, 'key "github.api_base" must be an http:// or https:// URL (line 2)');
  assert.match((await configError("[github]\nlabel = \"\"\n")).message, 'key "github.label" must not be empty (line 2)');
  assert.match((await configError("[worker]\nargs = [\n  \"--a=1\",\n  2,\n]\n")).message, 'key "worker.args[1]" must be a string (line 2)');
  assert.match((await configError("daemon = 5\n")).message, 'key "daemon" must be a table (line 1)');
});

test("an unknown key is an error naming the key, its line and the keys that exist", async () => {
  const error = await configError("[daemon]\ntick_seconds = 30\ntick_secs = 30\n");
  assert.is(error.message, 'Cannot read config "/x/config.toml": unknown key "daemon.tick_secs" (line 3); known keys of [daemon]: tick_seconds, effect_level');
  assert.is(error.key, "daemon.tick_secs");
  assert.is(error.line, 3);
});

test("an unknown table is an error too", async () => {
  const error = await configError("[daemon]\n\n[deamon]\ntick_seconds = 1\n");
  assert.match(error.message, 'unknown key "deamon" (line 3); known keys: daemon, github, worker, episodes, notify');
});

test("a TOML syntax error names the line", async () => {
  const error = await configError("[daemon]\ntick_seconds = 60\neffect_level = \n");
  assert.match(error.message, /^Cannot read config "\/x\/config.toml": invalid TOML: .+ \(line 3\)$/);
  assert.is(error.line, 3);
});

test("a credential-looking key is refused without echoing it, saying where credentials live", async () => {
  for (const [text, key, line] of [
    ["[github]\nlabel = \"x\"\ntoken = \"ghp_supersecretvalue\"\n", "github.token", 3],
    ["[notify]\npassword = \"hunter2\"\n", "notify.password", 2],
    ["[notify]\nwebhook_secret = \"s3cr3t\"\n", "notify.webhook_secret", 2],
    ["github_token = \"abc\"\n", "github_token", 1],
  ] as const) {
    const error = await configError(text);
    assert.is(error.key, key);
    assert.is(error.line, line);
    assert.match(error.message, `key "${key}" looks like a credential`);
    assert.match(error.message, "credentials live in 0600 files");
    assert.not.match(error.message, /supersecret|hunter2|s3cr3t|abc"/);
  }
});

test("a GitHub token pasted as a value is refused too", async () => {
  const error = await configError(`[worker]\nargs = ["--token", "ghp_${"a".repeat(36)}"]\n`);
  assert.match(error.message, 'key "worker.args[1]" holds what looks like a GitHub token');
  assert.not.match(error.message, "aaaa");
});

test("a *_file key naming a credential file is allowed, resolved against the config's dir or ~", async () => {
  const relative = await parseConfig("[github]\ntoken_file = \"secrets/gh\"\n", PATH, { HOME: "/home/owner" });
  assert.is(relative.github.token_file, "/x/secrets/gh");
  const home = await parseConfig("[github]\ntoken_file = \"~/.config/robot-army/gh\"\n", PATH, { HOME: "/home/owner" });
  assert.is(home.github.token_file, "/home/owner/.config/robot-army/gh");
});

test("the config file is --config, else RA_CONFIG, else under XDG_CONFIG_HOME or ~/.config", () => {
  const env = { RA_CONFIG: "/env/config.toml", XDG_CONFIG_HOME: "/xdg", HOME: "/home/owner" };
  assert.equal(configPath("/flag/config.toml", env), { path: "/flag/config.toml", explicit: true });
  assert.equal(configPath(undefined, env), { path: "/env/config.toml", explicit: true });
  assert.equal(configPath(undefined, { ...env, RA_CONFIG: undefined }), { path: "/xdg/robot-army/config.toml", explicit: false });
  assert.equal(configPath(undefined, { HOME: "/home/owner" }), { path: "/home/owner/.config/robot-army/config.toml", explicit: false });
});

test("a missing file at the default path means defaults; named explicitly it is an error", async () => {
  const dir = makeTempDir();
  try {
    assert.equal(await loadConfig({ env: { XDG_CONFIG_HOME: dir } }), DEFAULTS);
    const missing = join(dir, "nope.toml");
    for (const options of [{ path: missing, env: {} }, { env: { RA_CONFIG: missing } }]) {
      try {
        await loadConfig(options);
        assert.unreachable("loaded a missing file");
      } catch (error) {
        assert.instance(error, ConfigError);
        assert.is((error as Error).message, `Cannot read config "${missing}": no such file`);
      }
    }
  } finally {
    removeTempDir(dir);
  }
});

test("the file at the default path is read", async () => {
  const dir = makeTempDir();
  try {
    mkdirSync(join(dir, "robot-army"));
    writeFileSync(join(dir, "robot-army", "config.toml"), "[notify]\nmax_per_cycle = 9\n");
    const config = await loadConfig({ env: { XDG_CONFIG_HOME: dir } });
    assert.is(config.notify.max_per_cycle, 9);
  } finally {
    removeTempDir(dir);
  }
});

test("the effect levels in code are the schema's, in order", () => {
  assert.equal(configSchema().properties?.daemon.properties?.effect_level.enum, [...EFFECT_LEVELS]);
});

test("every schema key has a description, and every required-looking key a default or an example", () => {
  for (const [section, table] of Object.entries(configSchema().properties ?? {})) {
    assert.ok(table.description, section);
    for (const [key, node] of Object.entries(table.properties ?? {})) {
      assert.ok(node.description, `${section}.${key}`);
      assert.ok(node.default !== undefined || node.examples?.length, `${section}.${key}`);
    }
  }
});

test("key lines follow tables, dotted and quoted keys, and skip multi-line values", () => {
  const text = [
    "title = \"x\"", //                 1
    "[daemon]", //                      2
    "tick_seconds = 1 # a comment", //  3
    "notes = \"\"\"", //                4
    "fake = 1", //                      5 (inside a string)
    "\"\"\"", //                        6
    "args = [", //                      7
    "  \"a = b\",", //                  8 (inside an array)
    "]", //                             9
    "worker.binary = \"x\"", //         10
    "[\"quoted key\"]", //              11
    "'lit' = 2", //                     12
  ].join("\n");
  assert.equal(Object.fromEntries(keyLines(text)), {
    title: 1,
    daemon: 2,
    "daemon.tick_seconds": 3,
    "daemon.notes": 4,
    "daemon.args": 7,
    "daemon.worker.binary": 10,
    "quoted key": 11,
    "quoted key.lit": 12,
  });
});

test.run();
