import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, EFFECT_LEVELS, configPath, configSchema, defaultConfig, keyLines, loadConfig, parseConfig } from "./config.ts";
import type { Config } from "./config.ts";
import { EXIT } from "./errors.ts";
import { makeTempDir, removeTempDir } from "./testing/fixtures.ts";

const DEFAULTS: Config = {
  daemon: { tick_seconds: 60, effect_level: "plan", poll_seconds: 60, max_concurrent_sessions: 4, confirm_timeout: "30s", host: "" },
  claims: { lease: "10m" },
  github: { api_base: "https://api.github.com", reviewers: [], label: "robot-army" },
  repos: {},
  worker: { binary: "demo-worker", profile: "demo", args: [], resume_args: [], launcher: "tmux", tmux_session: "robot-army", max_sessions: 2 },
  dispatch: { order: "priority" },
  worktrees: { post_create: [] },
  episodes: { stranded_after: "12h" },
  cleanup: { on_issue_close: false, keep_bundles: "30d", disposable: ["node_modules/", "target/", "dist/", "build/", "out/", ".next/", ".nuxt/", ".turbo/", ".cache/", "__pycache__/", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/", ".venv/", ".tox/", ".gradle/", "coverage/", "*.pyc", "*.o"] },
  health: { max_age: "5m" },
  pushover: { api_url: "https://api.pushover.net/1/messages.json" },
  notifications: { events: ["failure", "needs_info"], max_per_cycle: 5, timeout: "10s" },
  web: { bind: "127.0.0.1", port: 8787, allowed_hosts: [] },
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

test("a config with no key is the defaults written ahead of time, exactly what the validator makes of a file of comments only", async () => {
  const env = { HOME: "/home/owner" };
  // A comment is a key-less file that goes through the TOML parser and the validator; an empty one takes the defaults file.
  const validated = await parseConfig("# nothing set yet\n", PATH, env);
  assert.equal(await parseConfig("", PATH, env), validated);
  assert.equal(await parseConfig("", "/elsewhere/config.toml", { HOME: "/home/other" }), await parseConfig("# nothing\n", "/elsewhere/config.toml", { HOME: "/home/other" }));
  assert.ok(Object.isFrozen((await parseConfig("", PATH, env)).daemon), "frozen as a validated config is");
  assert.is.not(await parseConfig("", PATH, env), await parseConfig("", PATH, env), "a fresh copy each time");
});

test("a file of TOML's whitespace and newlines only is every default; a carriage return alone or a no-break space is still refused", async () => {
  assert.equal(await parseConfig(" \n\t\r\n\n", "/x/config.toml"), await defaultConfig());
  // What TOML refuses is still refused: a carriage return without its newline, a no-break space.
  for (const text of ["\r", "\u00a0\n"]) {
    try {
      await parseConfig(text, "/x/config.toml");
      assert.unreachable(`${JSON.stringify(text)} was taken for an empty file`);
    } catch (error) {
      assert.instance(error, ConfigError);
      assert.match((error as Error).message, /invalid TOML/);
    }
  }
});

test("set keys are kept and the rest of their table defaults", async () => {
  const config = await parseConfig(
    ["[daemon]", "effect_level = \"live\"", "", "[worker]", "binary = \"claude\"", "args = [\"--model\", \"opus\"]"].join("\n"),
    PATH,
  );
  assert.equal(config.daemon, { ...DEFAULTS.daemon, effect_level: "live" });
  assert.equal(config.worker, { ...DEFAULTS.worker, binary: "claude", profile: "claude", args: ["--model", "opus"] });
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

test("[web] public_url is an address without a path, query or credentials", async () => {
  assert.is((await parseConfig('[web]\npublic_url = "https://robot.lan:8443"\n', PATH)).web.public_url, "https://robot.lan:8443");
  for (const bad of ["https://robot.lan/dash", "https://robot.lan/?t=1", "robot.lan", "ftp://robot.lan"]) {
    const error = await configError(`[web]\npublic_url = "${bad}"\n`);
    assert.is(error.key, "web.public_url", bad);
  }
  assert.match((await configError('[web]\npublic_url = "https://me:secret@robot.lan"\n')).message, "credentials");
});

test("a duration that sets a timer is bounded by the longest a timer can wait; the others by 100 years", async () => {
  const timer = await configError('[daemon]\nconfirm_timeout = "30d"\n');
  assert.is(timer.message, 'Cannot read config "/x/config.toml": key "daemon.confirm_timeout" must be a duration such as 30s or 10m, at most 24d 20h (the longest a timer can wait) (line 2)');
  const tick = await configError("[daemon]\ntick_seconds = 99999999999\n");
  assert.is(tick.message, 'Cannot read config "/x/config.toml": key "daemon.tick_seconds" must be at most 2147483 (line 2)');
  const stranded = await configError('[episodes]\nstranded_after = "9999999w"\n');
  assert.is(stranded.message, 'Cannot read config "/x/config.toml": key "episodes.stranded_after" must be a duration such as 90s, 30m, 12h or 2d (line 2)');
});

test("a fraction where a whole number belongs says so", async () => {
  const error = await configError("[worker]\nmax_sessions = 1.5\n");
  assert.is(error.message, 'Cannot read config "/x/config.toml": key "worker.max_sessions" must be a whole number (line 2)');
});

test("a whole number past 2^53-1 is refused where the schema sets no maximum: it is not the number written", async () => {
  // TOML refuses such an integer, but a float like 1e16 or 1e300 passed as a whole number; past 2^53 a number is not exact.
  const big = await configError("[worker]\nmax_sessions = 1e16\n");
  assert.is(big.message, 'Cannot read config "/x/config.toml": key "worker.max_sessions" must be a whole number from -9007199254740991 to 9007199254740991 (line 2)');
  const float = await configError('[daemon]\npoll_seconds = 1e300\n');
  assert.is(float.message, 'Cannot read config "/x/config.toml": key "daemon.poll_seconds" must be a whole number from -9007199254740991 to 9007199254740991 (line 2)');
  const repo = await configError('[repos."a/b"]\npath = "/src/b"\npriority = -1e17\n');
  assert.match(repo.message, 'key "repos.\"a/b\".priority" must be a whole number from -9007199254740991 to 9007199254740991 (line 3)');
  assert.is((await parseConfig("[worker]\nmax_sessions = 9007199254740991\n", PATH, {})).worker.max_sessions, 9007199254740991);
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
  assert.is(error.message, 'Cannot read config "/x/config.toml": unknown key "daemon.tick_secs" (line 3); known keys of [daemon]: tick_seconds, effect_level, poll_seconds, max_concurrent_sessions, confirm_timeout, host');
  assert.is(error.key, "daemon.tick_secs");
  assert.is(error.line, 3);
});

test("an unknown table is an error too", async () => {
  const error = await configError("[daemon]\n\n[deamon]\ntick_seconds = 1\n");
  assert.match(error.message, 'unknown key "deamon" (line 3); known keys: daemon, claims, github, repos, worker, dispatch, worktrees, episodes, cleanup, health, pushover, notifications');
});

test("a TOML syntax error names the line", async () => {
  const error = await configError("[daemon]\ntick_seconds = 60\neffect_level = \n");
  assert.match(error.message, /^Cannot read config "\/x\/config.toml": invalid TOML: .+ \(line 3\)$/);
  assert.is(error.line, 3);
});

test("a credential-looking key is refused without echoing it, saying where credentials live", async () => {
  for (const [text, key, line] of [
    ["[github]\nlabel = \"x\"\ntoken = \"ghp_supersecretvalue\"\n", "github.token", 3],
    ["[notifications]\npassword = \"hunter2\"\n", "notifications.password", 2],
    ["[health]\nwebhook_secret = \"s3cr3t\"\n", "health.webhook_secret", 2],
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

test("a URL with credentials in it is refused wherever it is, without echoing them", async () => {
  for (const [text, key, line] of [
    [`[github]\napi_base = "http://x:ghp_${"d".repeat(36)}@127.0.0.1:8080"\n`, "github.api_base", 2],
    [`[github]\nlabel = "x"\napi_base = "https://sekrit@api.github.com"\n`, "github.api_base", 3],
    [`[worker]\nargs = ["--remote", "https://owner:hunter2@example.com/repo.git"]\n`, "worker.args[1]", 2],
  ] as const) {
    const error = await configError(text);
    assert.is(error.key, key);
    assert.is(error.line, line);
    assert.match(error.message, `key "${key}" holds a URL with credentials in it`);
    assert.match(error.message, "credentials live in 0600 files");
    assert.not.match(error.message, /ddddd|sekrit|hunter2/);
  }
  // An @ that is not userinfo (a path, an address in a label) is no credential.
  assert.is((await parseConfig(`[github]\napi_base = "http://127.0.0.1:8080/api/@v3"\n`, PATH)).github.api_base, "http://127.0.0.1:8080/api/@v3");
});

test("token, api_token and friends are refused wherever they are, repository tables included", async () => {
  for (const [text, key, line] of [
    ["[github]\ntoken = \"abc\"\n", "github.token", 2],
    ["[github]\napi_token = \"abc\"\n", "github.api_token", 2],
    ["[github]\ntoken_envs = \"abc\"\n", "github.token_envs", 2],
    ["[repos.\"octo-org/widgets\"]\npath = \"w\"\ntoken = \"abc\"\n", 'repos."octo-org/widgets".token', 3],
  ] as const) {
    const error = await configError(text);
    assert.is(error.key, key);
    assert.is(error.line, line);
    assert.match(error.message, `key "${key}" looks like a credential (line ${line}); credentials live in 0600 files`);
    assert.not.match(error.message, "abc");
  }
});

test("github.author and github.token_env (a variable's name, not a credential) are accepted", async () => {
  const config = await parseConfig("[github]\nauthor = \"octocat\"\ntoken_env = \"GITHUB_TOKEN\"\n", PATH);
  assert.equal(config.github, { api_base: "https://api.github.com", author: "octocat", token_env: "GITHUB_TOKEN", reviewers: [], label: "robot-army" });
  assert.is((await parseConfig("[github]\ntoken_env = \"_RA_TOKEN2\"\n", PATH)).github.token_env, "_RA_TOKEN2");
});

test("github.token_env must be an environment variable's name, and the bad value is not echoed", async () => {
  for (const name of ["github-token", "gh_token", "1TOKEN", ""]) {
    const error = await configError(`[github]\nlabel = "x"\ntoken_env = ${JSON.stringify(name)}\n`);
    assert.is(error.message, 'Cannot read config "/x/config.toml": key "github.token_env" must match ^[A-Z_][A-Z0-9_]*$ (line 3); for example "GITHUB_TOKEN"');
    assert.is(error.line, 3);
  }
  assert.match((await configError("[github]\nauthor = \"\"\n")).message, 'key "github.author" must not be empty (line 2)');
});

test("a GitHub token is refused even where a variable's name belongs", async () => {
  for (const token of [`ghp_${"b".repeat(36)}`, `github_pat_${"c".repeat(40)}`]) {
    const error = await configError(`[github]\ntoken_env = "${token}"\n`);
    assert.is(error.key, "github.token_env");
    assert.match(error.message, 'key "github.token_env" holds what looks like a GitHub token (line 2)');
    assert.not.match(error.message, /bbbb|cccc/);
  }
});

test("a *_file key naming a credential file is allowed, resolved against the config's dir or ~", async () => {
  const relative = await parseConfig("[github]\ntoken_file = \"secrets/gh\"\n", PATH, { HOME: "/home/owner" });
  assert.is(relative.github.token_file, "/x/secrets/gh");
  const home = await parseConfig("[github]\ntoken_file = \"~/.config/robot-army/gh\"\n", PATH, { HOME: "/home/owner" });
  assert.is(home.github.token_file, "/home/owner/.config/robot-army/gh");
});

test("repository tables: paths resolved like token_file, defaults filled, max_sessions from [worker]", async () => {
  const text = [
    "[worker]",
    "max_sessions = 4",
    "",
    "[repos.\"octo-org/widgets\"]",
    "path = \"~/src/widgets\"",
    "",
    "[repos.\"octo-org/gadgets.js\"]",
    "path = \"clones/gadgets\"",
    "base_branch = \"trunk\"",
    "max_sessions = 1",
    "priority = -2",
    "",
    "[repos.\"Some_User/a-b\"]",
    "path = \"/abs/a-b\"",
    "priority = 10",
  ].join("\n");
  const config = await parseConfig(text, PATH, { HOME: "/home/owner" });
  assert.equal(config.repos, {
    "octo-org/widgets": { path: "/home/owner/src/widgets", max_sessions: 4, priority: 0 },
    "octo-org/gadgets.js": { path: "/x/clones/gadgets", base_branch: "trunk", max_sessions: 1, priority: -2 },
    "Some_User/a-b": { path: "/abs/a-b", max_sessions: 4, priority: 10 },
  });
  assert.ok(Object.isFrozen(config.repos));
  assert.ok(Object.isFrozen(config.repos["octo-org/widgets"]));
});

test("a repository table may also be written inline or with dotted keys", async () => {
  const inline = await parseConfig("repos = { \"a/b\" = { path = \"b\" } }\n", PATH);
  const dotted = await parseConfig("[repos]\n\"a/b\".path = \"b\"\n", PATH);
  const expected = { "a/b": { path: "/x/b", max_sessions: 2, priority: 0 } };
  assert.equal(inline.repos, expected);
  assert.equal(dotted.repos, expected);
});

test("a repository name is data: words like token or secret in it are not credentials", async () => {
  const config = await parseConfig("[repos.\"acme/token-service\"]\npath = \"t\"\n[repos.\"acme/secrets\"]\npath = \"s\"\n", PATH);
  assert.equal(Object.keys(config.repos), ["acme/token-service", "acme/secrets"]);
});

test("a repository key that is not owner/name is an error naming the key and its line", async () => {
  const error = await configError("[github]\nlabel = \"x\"\n\n[repos.widgets]\npath = \"w\"\n");
  assert.is(error.message, 'Cannot read config "/x/config.toml": key "repos.widgets" is not a valid name: it must match ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ (line 4); for example "octo-org/widgets"');
  assert.is(error.key, "repos.widgets");
  assert.is(error.line, 4);
  for (const [name, line] of [["a/b/c", 3], ["octo org/widgets", 3], ["/widgets", 3], ["octo-org/", 3]] as const) {
    const bad = await configError(`[repos."x/y"]\npath = "y"\n[repos.${JSON.stringify(name)}]\npath = "w"\n`);
    assert.is(bad.key, `repos.${JSON.stringify(name)}`);
    assert.is(bad.line, line);
  }
});

test("an unknown key in a repository table names the table, the key and its line", async () => {
  const error = await configError("[repos.\"octo-org/widgets\"]\npath = \"w\"\nbranch = \"dev\"\n");
  assert.is(
    error.message,
    'Cannot read config "/x/config.toml": unknown key "repos."octo-org/widgets".branch" (line 3); known keys of [repos."octo-org/widgets"]: path, base_branch, max_sessions, priority',
  );
  assert.is(error.key, 'repos."octo-org/widgets".branch');
  assert.is(error.line, 3);
});

test("repository values are checked: max_sessions at least 1, path required, whole numbers, tables", async () => {
  const widgets = "[repos.\"octo-org/widgets\"]\npath = \"w\"\n";
  assert.match((await configError(`${widgets}max_sessions = 0\n`)).message, 'key "repos."octo-org/widgets".max_sessions" must be at least 1 (line 3)');
  assert.match((await configError(`${widgets}priority = 1.5\n`)).message, 'key "repos."octo-org/widgets".priority" must be a whole number (line 3)');
  assert.match((await configError(`${widgets}base_branch = ""\n`)).message, 'key "repos."octo-org/widgets".base_branch" must not be empty (line 3)');
  assert.match((await configError("[daemon]\n[repos.\"a/b\"]\nbase_branch = \"dev\"\n")).message, 'key "repos."a/b".path" is required (line 2)');
  assert.match((await configError("[repos]\n\"a/b\" = \"~/src/b\"\n")).message, 'key "repos."a/b"" must be a table (line 2)');
  assert.match((await configError("repos = [\"a/b\"]\n")).message, 'key "repos" must be a table (line 1)');
});

test("worker.profile defaults from the binary's basename: claude, codex, demo-worker, else generic", async () => {
  const profileOf = async (text: string) => (await parseConfig(text, PATH, {})).worker.profile;
  assert.is(await profileOf(""), "demo");
  assert.is(await profileOf('[worker]\nbinary = "claude"\n'), "claude");
  assert.is(await profileOf('[worker]\nbinary = "/opt/tools/bin/codex"\n'), "codex");
  assert.is(await profileOf('[worker]\nbinary = "aider"\n'), "generic");
  assert.is(await profileOf('[worker]\nbinary = "claude-wrapper"\n'), "generic");
  // Set, it wins over the name: a wrapper script around Claude Code is still Claude Code.
  assert.is(await profileOf('[worker]\nbinary = "my-claude.sh"\nprofile = "claude"\n'), "claude");
});

test("a worker.profile robot-army does not know is a load error naming the profiles there are", async () => {
  const error = await configError('[worker]\nprofile = "cursor"\n');
  assert.is(error.message, 'Cannot read config "/x/config.toml": key "worker.profile" must be one of "claude", "codex", "demo" or "generic", got "cursor" (line 2)');
});

test("notification channels: Pushover's files both or neither, the webhook by URL or by file, and no query or fragment where a secret may hide", async () => {
  for (const [text, key, problem] of [
    // The key given is named, with its line; the message names the one missing.
    ['[pushover]\ntoken_file = "t"\n', "pushover.token_file", "needs both pushover.token_file and pushover.user_key_file, or neither; pushover.user_key_file is missing"],
    ['[pushover]\nuser_key_file = "u"\n', "pushover.user_key_file", "pushover.token_file is missing"],
    ['[health]\nwebhook_url = "https://h.example/x"\nwebhook_url_file = "f"\n', "health.webhook_url_file", "sets both health.webhook_url and health.webhook_url_file"],
    ['[health]\nwebhook_url = "https://fn.example/api/hook?code=c2VjcmV0"\n', "health.webhook_url", "holds a URL with a query or fragment"],
    ['[health]\nwebhook_url = "https://h.example/hook#token=c2VjcmV0"\n', "health.webhook_url", "holds a URL with a query or fragment"],
    ['[pushover]\napi_url = "https://p.example/1/messages.json?t=c2VjcmV0"\n', "pushover.api_url", "holds a URL with a query or fragment"],
    ['[health]\nwebhook_url = "https://u:pw@h.example/x"\n', "health.webhook_url", "holds a URL with credentials in it"],
  ] as const) {
    const error = await configError(text);
    assert.is(error.key, key, text);
    assert.match(error.message, problem);
    assert.not.match(error.message, "c2VjcmV0");
  }
  const both = await parseConfig('[health]\nwebhook_url = "https://ntfy.sh/topic"\n\n[pushover]\ntoken_file = "t"\nuser_key_file = "u"\n', PATH);
  assert.equal([both.pushover.token_file, both.pushover.user_key_file], ["/x/t", "/x/u"]);
});

test("a channel's credential file must be a regular file readable by its owner only, checked where the config is loaded", async () => {
  const dir = makeTempDir();
  try {
    const config = join(dir, "config.toml");
    writeFileSync(join(dir, "token"), "t".repeat(30), { mode: 0o644 });
    writeFileSync(join(dir, "user"), "u".repeat(30), { mode: 0o600 });
    writeFileSync(config, '[pushover]\ntoken_file = "token"\nuser_key_file = "user"\n');
    const loose = await loadConfig({ path: config, env: {} }).catch((error) => error as ConfigError);
    assert.instance(loose, ConfigError);
    assert.match((loose as ConfigError).message, `key "pushover.token_file" names "${join(dir, "token")}", which has mode 0644; a credential file must be 0600 (line 2)`);
    writeFileSync(config, '[pushover]\ntoken_file = "nowhere"\nuser_key_file = "user"\n');
    assert.match(((await loadConfig({ path: config, env: {} }).catch((error) => error)) as Error).message, "which cannot be read: ENOENT");
    writeFileSync(config, '[pushover]\ntoken_file = "user"\nuser_key_file = "user"\n');
    assert.is((await loadConfig({ path: config, env: {} })).pushover.token_file, join(dir, "user"));
  } finally {
    removeTempDir(dir);
  }
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
    writeFileSync(join(dir, "robot-army", "config.toml"), "[notifications]\nmax_per_cycle = 9\n");
    const config = await loadConfig({ env: { XDG_CONFIG_HOME: dir } });
    assert.is(config.notifications.max_per_cycle, 9);
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
    const entry = typeof table.additionalProperties === "object" ? table.additionalProperties : undefined;
    if (entry) assert.ok(table.propertyNames?.examples?.length, `${section} needs an example name`);
    for (const [key, node] of Object.entries({ ...table.properties, ...entry?.properties })) {
      assert.ok(node.description, `${section}.${key}`);
      assert.ok(node.default !== undefined || node.examples?.length, `${section}.${key}`);
    }
  }
});

test("no key the schema defines is refused as a credential", async () => {
  const text = [
    "[github]",
    "author = \"octocat\"",
    "token_file = \"gh\"",
    "token_env = \"GITHUB_TOKEN\"",
    "[repos.\"octo-org/widgets\"]",
    "path = \"w\"",
    "base_branch = \"main\"",
    "max_sessions = 1",
    "priority = 0",
  ].join("\n");
  const config = await parseConfig(text, PATH);
  assert.is(config.github.token_env, "GITHUB_TOKEN");
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
    "[repos.\"octo-org/widgets\"]", //   13
    "path = \"w\"", //                   14
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
    "repos.octo-org/widgets": 13,
    "repos.octo-org/widgets.path": 14,
  });
});

test("a machine's hostname is fitted to what daemon.host allows, which a git reference's name can hold", async () => {
  const { fitHostName } = await import("./config.ts");
  const validate = (await import(new URL("../schema/validate/config.mjs", import.meta.url).href)).validate as (value: unknown) => boolean;
  for (const [name, fitted] of [
    ["laptop", "laptop"], ["Jo's MacBook.local", "Jo-s-MacBook.local"], ["a..b", "a.b"], [".hidden", "hidden"], ["db.lock", "db-lock"],
    ["-x", "x"], ["", "robot-army-host"], ["é", "robot-army-host"], ["h".repeat(80), "h".repeat(64)], ["a.b.", "a.b"],
  ] as const) {
    assert.is(fitHostName(name), fitted, name);
    assert.ok(validate({ daemon: { host: fitHostName(name) } }), `${fitted} is a host name the config accepts`);
  }
});

test.run();
