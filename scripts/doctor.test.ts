import { test } from "uvu";
import { noRegistryLine } from "../lib/worker-profiles.ts";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { quickOptions } from "../lib/testing/github-kit.ts";
import { connectGitHub } from "../lib/boundaries/github.ts";
import { git } from "../lib/testing/fixtures.ts";
import { CheckFailedError } from "../lib/errors.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import type { TestForge } from "../lib/testing/forge.ts";
import { DEMO_WORKER_SCRIPT } from "../lib/boundaries/launchers/demo-worker.ts";
import { runCommand } from "../lib/run-command.ts";
import { acknowledgeAnomaly, raiseAnomaly } from "../lib/store/anomalies.ts";
import { withStore } from "../lib/store/open.ts";
import { recordClaudeTrust, recordCodexTrust } from "../lib/dispatch/agent-trust.ts";
import { checkDisk, describeAgentEnv, run } from "./doctor.ts";
import type { DoctorDeps } from "./doctor.ts";

const template = forgeTemplate();
test.after(() => template.remove());

/** A config.toml for the test forge, with `extra` lines appended; returns its path. */
function writeConfig(t: TestForge, extra: string[] = [], github: string[] = [`token_file = ${JSON.stringify(join(t.dir, "tokens", "owner"))}`, 'author = "owner"']): string {
  const file = join(t.tmp, "config.toml");
  writeFileSync(file, ["[github]", `api_base = ${JSON.stringify(t.forge.url)}`, ...github, "", ...extra, ""].join("\n"));
  return file;
}

async function doctor(t: TestForge, options: { config?: string; json?: boolean; deps?: Partial<DoctorDeps> } = {}): Promise<{ text: string; error?: CheckFailedError }> {
  let text = "";
  const deps: DoctorDeps = {
    configFlag: options.config ?? writeConfig(t),
    env: { HOME: join(t.tmp, "home"), RA_STATE_DIR: join(t.tmp, "state") },
    connect: (config) => connectGitHub(config, null, quickOptions()),
    tmuxVersion: async () => "tmux 3.4",
    write: (chunk) => (text += chunk),
    ...options.deps,
  };
  try {
    await run({ json: options.json ?? false }, deps);
    return { text };
  } catch (error) {
    if (!(error instanceof CheckFailedError)) throw error;
    return { text, error };
  }
}

const line = (text: string, check: string) => text.split("\n").find((l) => l.slice(6).startsWith(check + " ")) ?? "";

test("against the forge with a private token file, every check passes", () =>
  template.use(async (t) => {
    const { text, error } = await doctor(t);
    assert.is(error, undefined);
    const token = join(t.dir, "tokens", "owner");
    assert.match(line(text, "config"), /^ok    config     .*config\.toml$/);
    assert.is(line(text, "token"), `ok    token      ${token} (mode 0600)`);
    assert.match(line(text, "git"), /^ok    git        git version \d/);
    assert.is(line(text, "tmux"), "ok    tmux       tmux 3.4");
    assert.is(line(text, "worker"), `ok    worker     ${DEMO_WORKER_SCRIPT}`, "the default worker is robot-army's own demo worker");
    assert.is(line(text, "state dir"), `ok    state dir  ${join(t.tmp, "state")} (not there yet; made on first use)`);
    assert.is(line(text, "github"), "ok    github     answers; the token is owner's");
    assert.is(line(text, "author"), "ok    author     issues opened by owner are taken");
    assert.is(line(text, "anomalies"), "ok    anomalies  none open");
    assert.is(line(text, "channels"), "ok    channels   none configured: nothing is sent ([health] webhook_url, [pushover] token_file and user_key_file)");
    assert.match(line(text, "disk"), new RegExp(`^ok    disk       worktrees ${join(t.tmp, "state", "worktrees")}: [0-9.]+ GiB free; state dir ${join(t.tmp, "state")}: [0-9.]+ GiB free$`));
    assert.is(line(text, "agent env"), "ok    agent env  none of ANTHROPIC_*, CLAUDE_CODE_*, OPENAI_*, CODEX_* is set");
    assert.match(text, /\nall 15 checks passed\n$/);
    assert.not.ok(existsSync(join(t.tmp, "state")), "doctor creates no state dir");
  }));

test("the disk check warns under its threshold with every figure, and fails nothing; agent variables are named, never their values", () =>
  template.use(async (t) => {
    const [status, detail] = checkDisk([["worktrees", join(t.tmp, "not", "there", "yet")]], Number.MAX_SAFE_INTEGER);
    assert.is(status, "warn");
    assert.match(detail, new RegExp(`^worktrees ${join(t.tmp, "not", "there", "yet")}: [0-9.]+ GiB free \\(under [0-9.]+ GiB: make room before workers fill it\\)$`));
    assert.equal(checkDisk([["state dir", t.tmp]], 1)[0], "ok");
    const said = describeAgentEnv({ ANTHROPIC_BASE_URL: "http://127.0.0.1:1", CLAUDE_CODE_USE_BEDROCK: "1", OPENAI_API_KEY: "sk-secret", CODEX_HOME: "/x", HOME: "/h", ANTHROPIC_MODEL: undefined });
    assert.is(said, "set here, and passed to every worker a daemon started from here starts: ANTHROPIC_BASE_URL, CLAUDE_CODE_USE_BEDROCK, CODEX_HOME, OPENAI_API_KEY");
    const { text, error } = await doctor(t, { deps: { env: { HOME: join(t.tmp, "home"), RA_STATE_DIR: join(t.tmp, "state"), OPENAI_API_KEY: "sk-secret" } } });
    assert.is(error, undefined, "a variable named is no failure");
    assert.is(line(text, "agent env"), "ok    agent env  set here, and passed to every worker a daemon started from here starts: OPENAI_API_KEY");
    assert.not.match(text, "sk-secret");
  }));

test("with no config file doctor warns, naming every path it looked at and a file XDG_CONFIG_HOME leaves unread", () =>
  template.use(async (t) => {
    const home = join(t.tmp, "home");
    const xdg = join(t.tmp, "xdg");
    mkdirSync(join(home, ".config", "robot-army"), { recursive: true });
    const env = { HOME: home, XDG_CONFIG_HOME: xdg, RA_STATE_DIR: join(t.tmp, "state") };
    const looked = join(xdg, "robot-army", "config.toml");
    const usual = join(home, ".config", "robot-army", "config.toml");
    const none = await doctor(t, { config: undefined, deps: { configFlag: undefined, env } });
    assert.is(line(none.text, "config"), `warn  config     no config file: looked at ${looked}, not ${usual} (XDG_CONFIG_HOME is ${xdg}); every setting has its default, so no repository is worked on ("robot-army example-config --output ${looked}" writes one to fill in)`);
    writeFileSync(usual, "[github]\n");
    const unread = await doctor(t, { config: undefined, deps: { configFlag: undefined, env } });
    assert.match(line(unread.text, "config"), `; ${usual} exists but is not read while XDG_CONFIG_HOME is set: move it, or pass --config ${usual}; every setting`);
  }));

test("a token file others can read fails its check (exit 4), says how to fix it, and GitHub is not tried with it", () =>
  template.use(async (t) => {
    const token = join(t.dir, "tokens", "owner");
    chmodSync(token, 0o644);
    const { text, error } = await doctor(t);
    assert.instance(error, CheckFailedError);
    assert.is(error!.exitCode, 4);
    assert.is(error!.message, "1 of 15 checks failed: token");
    assert.is(line(text, "token"), `FAIL  token      Token file "${token}" has mode 0644; it must be 0600 (chmod 600 "${token}")`);
    assert.is(line(text, "github"), "skip  github     needs a usable token");
    assert.not.match(text, "checks passed");
  }));

test("--json gives every check and whether all passed", () =>
  template.use(async (t) => {
    chmodSync(join(t.dir, "tokens", "owner"), 0o640);
    const { text } = await doctor(t, { json: true });
    const json = JSON.parse(text);
    assert.is(json.ok, false);
    assert.equal(json.checks.map((c: { check: string; status: string }) => `${c.check}=${c.status}`),
      ["config=ok", "token=FAIL", "git=ok", "tmux=ok", "worker=ok", "state dir=ok", "disk=ok", "github=skip", "repos=ok", "author=ok", "trust=ok", "workers=ok", "anomalies=ok", "channels=ok", "agent env=ok"]);
  }));

test("a config that does not load fails and the checks that need it are skipped", () =>
  template.use(async (t) => {
    const file = join(t.tmp, "broken.toml");
    writeFileSync(file, "[daemon]\ntick_seconds = \"soon\"\n");
    const { text, error } = await doctor(t, { config: file });
    assert.is(error!.message, "1 of 15 checks failed: config");
    assert.match(line(text, "config"), /^FAIL  config     Cannot read config ".*broken.toml": key "daemon.tick_seconds" must be a number \(line 2\); fix the file/);
    for (const check of ["token", "worker", "github", "author"]) assert.match(line(text, check), /^skip  .*needs the config$/);
  }));

test("a missing author, a token nobody accepts and a missing tmux each fail with what to do", () =>
  template.use(async (t) => {
    const bad = join(t.tmp, "bad-token");
    writeFileSync(bad, "ghp_not_a_token_the_forge_knows_1234\n", { mode: 0o600 });
    const config = writeConfig(t, [], [`token_file = ${JSON.stringify(bad)}`]);
    const { text, error } = await doctor(t, { config, deps: { tmuxVersion: async () => undefined } });
    assert.is(error!.message, "3 of 15 checks failed: tmux, github, author");
    assert.is(line(text, "tmux"), 'FAIL  tmux       tmux does not run: install tmux, or set [worker] launcher = "process"');
    assert.match(line(text, "github"), new RegExp(`^FAIL  github     ${t.forge.url.replaceAll(".", "\\.")}: GitHub answered 401 .*Bad credentials; check github.api_base, the network and the token$`));
    assert.is(line(text, "author"), 'FAIL  author     github.author is not set, so no issue is ever taken: set [github] author = "<your GitHub login>"');
  }));

test("tmux is not needed by the process launcher; no token at all fails; an existing state dir is written to", () =>
  template.use(async (t) => {
    mkdirSync(join(t.tmp, "state"), { mode: 0o700 });
    const config = writeConfig(t, ["[worker]", 'launcher = "process"'], ['author = "owner"']);
    const { text, error } = await doctor(t, { config, deps: { tmuxVersion: () => Promise.reject(new Error("tmux is not asked")) } });
    assert.is(line(text, "tmux"), "ok    tmux       not needed: worker.launcher is process");
    assert.match(line(text, "token"), /^FAIL  token      no token: set github.token_file/);
    assert.is(line(text, "state dir"), `ok    state dir  ${join(t.tmp, "state")} (writable)`);
    assert.is(error!.message, "1 of 15 checks failed: token");
  }));

test("a state dir others can read fails its check, with the chmod that fixes it", () =>
  template.use(async (t) => {
    const state = join(t.tmp, "state");
    mkdirSync(state);
    chmodSync(state, 0o755);
    const config = writeConfig(t, ["[worker]", 'launcher = "process"'], ['author = "owner"']);
    const { text, error } = await doctor(t, { config });
    assert.is(line(text, "state dir"), `FAIL  state dir  ${state} has mode 0755, so others can read the store and the sessions' output: chmod 700 "${state}"`);
    assert.match(error!.message, /checks failed: .*state dir/);
    chmodSync(state, 0o700);
    assert.is(line((await doctor(t, { config })).text, "state dir"), `ok    state dir  ${state} (writable)`);
  }));

test("a worker program that cannot be found fails its check, looked up on the PATH its launcher gives it", () =>
  template.use(async (t) => {
    const bin = join(t.tmp, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "agent"), "#!/bin/sh\n", { mode: 0o755 });
    const env = { HOME: join(t.tmp, "home"), RA_STATE_DIR: join(t.tmp, "state"), PATH: `${bin}:${process.env.PATH}`, TMUX_TMPDIR: t.tmp };
    const headless = await doctor(t, { config: writeConfig(t, ["[worker]", 'launcher = "process"', 'binary = "no-such-agent"']), deps: { env } });
    assert.is(headless.error!.message, "1 of 15 checks failed: worker");
    assert.is(line(headless.text, "worker"), 'FAIL  worker     the worker program "no-such-agent" is not on the PATH (worker.binary): install it there, or set [worker] binary to its absolute path');
    const codex = writeConfig(t, ["[worker]", `binary = ${JSON.stringify(join(bin, "agent"))}`, 'profile = "codex"']);
    assert.is(line((await doctor(t, { config: codex, deps: { env } })).text, "worker"), `ok    worker     ${join(bin, "agent")}`, "Codex's hooks are a registry: nothing to warn of");
    assert.is(noRegistryLine("codex"), null);
    // A program of no known profile works, but is never taken for idle: the check says so and still passes.
    const generic = await doctor(t, { config: writeConfig(t, ["[worker]", 'launcher = "process"', 'binary = "agent"']), deps: { env } });
    assert.is(line(generic.text, "worker"), `ok    worker     ${join(bin, "agent")}; worker profile generic: no registry, so its workers are never taken for idle (never retired); set [worker] profile to claude, codex or demo if it is one of those`);

    // Under tmux the window's PATH is the tmux server's, which here lacks the folder robot-army's own PATH has.
    const socket = `ra-doctor-${process.pid}`;
    const tmux = (...args: string[]) => runCommand(["tmux", "-L", socket, ...args], env);
    try {
      const started = await tmux("new-session", "-d", "-s", "other", "sleep 30", ";", "set-environment", "-g", "PATH", "/usr/bin:/bin");
      assert.is(started.code, 0, started.stderr);
      const windowed = await doctor(t, { config: writeConfig(t, ["[worker]", 'binary = "agent"', `tmux_socket = "${socket}"`]), deps: { env } });
      assert.is(line(windowed.text, "worker"), 'FAIL  worker     the worker program "agent" is not on the PATH a tmux window gets (worker.binary): install it there, or set [worker] binary to its absolute path');
      assert.not.match(windowed.text, "checks passed");
    } finally {
      await tmux("kill-server");
    }
  }));

test("an interactive agent under the process launcher fails the worker check with the launcher that fixes it; the demo worker and a generic program do not", () =>
  template.use(async (t) => {
    const bin = join(t.tmp, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), "#!/bin/sh\n", { mode: 0o755 });
    const env = { HOME: join(t.tmp, "home"), RA_STATE_DIR: join(t.tmp, "state"), PATH: `${bin}:${process.env.PATH}` };
    for (const [binary, profile, agent] of [["claude", "claude", "Claude Code"], ["claude", "codex", "Codex"]]) {
      const headless = await doctor(t, { config: writeConfig(t, ["[worker]", 'launcher = "process"', `binary = "${binary}"`, `profile = "${profile}"`]), deps: { env } });
      assert.is(headless.error!.message, "1 of 15 checks failed: worker");
      assert.is(line(headless.text, "worker"), `FAIL  worker     worker profile ${profile} (${agent}) is an interactive agent and needs a terminal, which the process launcher does not give it (it would answer one turn and exit): set [worker] launcher = "tmux" (or "kitty")`);
    }
    // The profile a binary implies counts as one set by hand.
    const implied = await doctor(t, { config: writeConfig(t, ["[worker]", 'launcher = "process"', `binary = ${JSON.stringify(join(bin, "claude"))}`]), deps: { env } });
    assert.match(line(implied.text, "worker"), /^FAIL  worker     worker profile claude \(Claude Code\) is an interactive agent/);
    for (const binary of ["demo-worker", "claude-wrapper"]) {
      writeFileSync(join(bin, "claude-wrapper"), "#!/bin/sh\n", { mode: 0o755 });
      const fine = await doctor(t, { config: writeConfig(t, ["[worker]", 'launcher = "process"', `binary = "${binary}"`]), deps: { env } });
      assert.match(line(fine.text, "worker"), /^ok    worker /);
    }
    // Without tmux, the headless launcher is no way out for an interactive agent.
    const noTmux = await doctor(t, { config: writeConfig(t, ["[worker]", `binary = ${JSON.stringify(join(bin, "claude"))}`]), deps: { env, tmuxVersion: async () => undefined } });
    assert.is(line(noTmux.text, "tmux"), 'FAIL  tmux       tmux does not run: install tmux, or set [worker] launcher = "kitty" (worker profile claude needs a terminal)');
  }));

test("a token from token_env passes when the variable is set and fails when it is not", () =>
  template.use(async (t) => {
    const config = writeConfig(t, [], ['token_env = "RA_DOCTOR_TOKEN"', 'author = "owner"']);
    const unset = await doctor(t, { config });
    assert.is(line(unset.text, "token"), 'FAIL  token      github.token_env names the environment variable "RA_DOCTOR_TOKEN", which is not set or empty');
    const env = { HOME: join(t.tmp, "home"), RA_STATE_DIR: join(t.tmp, "state"), RA_DOCTOR_TOKEN: t.token("owner") };
    const set = await doctor(t, { config, deps: { env, connect: (c) => connectGitHub(c, null, quickOptions([], { env })) } });
    assert.is(set.error, undefined);
    assert.is(line(set.text, "token"), "ok    token      from the environment variable RA_DOCTOR_TOKEN");
  }));

test("an open anomaly is a finding, with the command that lists it; once acknowledged it is not", () =>
  template.use(async (t) => {
    const state = join(t.tmp, "state");
    await withStore(state, (store) => {
      raiseAnomaly(store, { kind: "effect_unfinished", actionId: "a-1", repo: "demo/widgets", item: 1, detail: "a comment was never posted" });
      raiseAnomaly(store, { kind: "spool_damaged", actionId: "a-2", detail: "a file set aside" });
    });
    const { text, error } = await doctor(t);
    assert.is(error!.message, "1 of 15 checks failed: anomalies");
    assert.is(line(text, "anomalies"), 'FAIL  anomalies  2 open (effect_unfinished, spool_damaged): "robot-army anomalies" says what to check, "robot-army anomalies ack <id>" once you have looked');
    await withStore(state, (store) => [1, 2].forEach((id) => acknowledgeAnomaly(store, id)));
    assert.is((await doctor(t)).error, undefined);
  }));


test("the channels check names each configured channel (the webhook by its host) and the events told, and no credential", () =>
  template.use(async (t) => {
    const secret = (name: string, text: string) => {
      const file = join(t.tmp, name);
      writeFileSync(file, text, { mode: 0o600 });
      return file;
    };
    const token = secret("pushover-token", "aTokenNobodySees123");
    const user = secret("pushover-user", "uUserKeyNobodySees45");
    const both = await doctor(t, { config: writeConfig(t, [
      "[health]", 'webhook_url = "https://ntfy.sh/my-private-topic"', "",
      "[pushover]", `token_file = ${JSON.stringify(token)}`, `user_key_file = ${JSON.stringify(user)}`, "",
      "[notifications]", 'events = ["failure", "needs_info"]',
    ]) });
    assert.is(both.error, undefined);
    assert.is(line(both.text, "channels"), "ok    channels   webhook (ntfy.sh), pushover; told of failure, needs_info");
    assert.not.match(both.text, "NobodySees");
    assert.not.match(both.text, "my-private-topic");

    const url = secret("webhook-url", "https://hooks.example.com/t/abcSecretPath");
    const fromFile = await doctor(t, { config: writeConfig(t, ["[health]", `webhook_url_file = ${JSON.stringify(url)}`]) });
    assert.match(line(fromFile.text, "channels"), `ok    channels   webhook (its URL in ${url}); told of `);
    assert.not.match(fromFile.text, "abcSecretPath");
  }));

test("each configured repository: a clone of it the token may push to warns until onboarded; a token whose account may not push warns below live and fails at live, where issues are claimed with git references; another origin or a missing path fails", () =>
  template.use(async (t) => {
    const clone = join(t.tmp, "widgets");
    git(t.tmp, "clone", "--quiet", t.seeded.repository.clone_url, clone);
    const other = join(t.tmp, "other");
    mkdirSync(other);
    git(other, "init", "--quiet");
    git(other, "remote", "add", "origin", "https://github.com/someone/else.git");
    const repos = (path: string) => ['[repos."demo/widgets"]', `path = ${JSON.stringify(path)}`];
    const env = { HOME: join(t.tmp, "home"), RA_STATE_DIR: join(t.tmp, "state") };
    const owner = await doctor(t, { config: writeConfig(t, repos(clone)), deps: { env } });
    assert.is(owner.error, undefined, "a repository not onboarded yet is a warning: a step to take, not a fault");
    assert.is(line(owner.text, "repos"), `warn  repos      demo/widgets: ${clone} is a clone of it, the token's account may read its issues, comment, push (and so claim issues with git references) and open pull requests, not onboarded, so nothing is dispatched to it: "robot-army onboard demo/widgets"`);
    const strangerToken = [`token_file = ${JSON.stringify(join(t.dir, "tokens", "stranger"))}`, 'author = "owner"'];
    const stranger = await doctor(t, { config: writeConfig(t, repos(clone), strangerToken), deps: { env } });
    assert.is(stranger.error, undefined, "below live robot-army itself only reads and comments");
    assert.match(line(stranger.text, "repos"), "warn  repos      demo/widgets: " + `${clone} is a clone of it, the token's account may read its issues and comment, not push: robot-army reads and comments with it below the live effect level, but at live it claims each issue with a git reference, which needs push (contents: write)`);
    const strangerLive = await doctor(t, { config: writeConfig(t, [...repos(clone), "", "[daemon]", 'effect_level = "live"'], strangerToken), deps: { env } });
    assert.match(line(strangerLive.text, "repos"), "FAIL  repos      demo/widgets: " + `${clone} is a clone of it, the token's account may read its issues and comment, not push: at the live effect level robot-army claims each issue on GitHub with a git reference before its worker starts, which needs push (contents: write), so nothing is dispatched to it`);
    const elsewhere = await doctor(t, { config: writeConfig(t, repos(other)), deps: { env } });
    assert.match(line(elsewhere.text, "repos"), `FAIL  repos      demo/widgets: the origin of ${other} is https://github.com/someone/else.git, not `);
    const missing = await doctor(t, { config: writeConfig(t, repos(join(t.tmp, "nowhere"))), deps: { env } });
    assert.is(line(missing.text, "repos"), `FAIL  repos      demo/widgets: ${join(t.tmp, "nowhere")} does not exist: clone the repository there, or fix [repos."demo/widgets"] path`);
  }));

test("with Claude Code as the worker, doctor says whether Claude Code trusts each clone, and how to record the owner's yes", () =>
  template.use(async (t) => {
    const bin = join(t.tmp, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), "#!/bin/sh\n", { mode: 0o755 });
    const clone = join(t.tmp, "widgets");
    git(t.tmp, "clone", "--quiet", t.seeded.repository.clone_url, clone);
    const home = join(t.tmp, "home");
    mkdirSync(home);
    const env = { HOME: home, RA_STATE_DIR: join(t.tmp, "state"), PATH: `${bin}:${process.env.PATH}`, TMUX_TMPDIR: t.tmp };
    const config = writeConfig(t, ["[worker]", `binary = ${JSON.stringify(join(bin, "claude"))}`, "", '[repos."demo/widgets"]', `path = ${JSON.stringify(clone)}`]);
    const before = await doctor(t, { config, deps: { env } });
    assert.is(before.error!.message, "1 of 15 checks failed: trust");
    assert.is(line(before.text, "trust"), `FAIL  trust      Claude Code has not been told to trust ${clone} (demo/widgets): every worker there stops at "Is this a project you trust?" before any hook runs, until you attach and answer; "robot-army trust demo/widgets" records your yes in ${join(home, ".claude.json")}`);
    recordClaudeTrust(join(home, ".claude.json"), clone);
    const after = await doctor(t, { config, deps: { env } });
    assert.is(after.error, undefined);
    assert.is(line(after.text, "trust"), `ok    trust      Claude Code trusts the clone of demo/widgets (${join(home, ".claude.json")}): their worktrees open without the folder-trust question`);
    assert.is(line(after.text, "workers"), "ok    workers    none waiting before its first hook");

    // With Codex, its own config and question; Claude Code's answer counts for nothing there.
    writeFileSync(join(bin, "codex"), "#!/bin/sh\n", { mode: 0o755 });
    const codex = writeConfig(t, ["[worker]", `binary = ${JSON.stringify(join(bin, "codex"))}`, "", '[repos."demo/widgets"]', `path = ${JSON.stringify(clone)}`]);
    const codexFile = join(home, ".codex", "config.toml");
    assert.is(line((await doctor(t, { config: codex, deps: { env } })).text, "trust"), `FAIL  trust      Codex has not been told to trust ${clone} (demo/widgets): every worker there stops at "Trust this folder?" before any hook runs, until you attach and answer; "robot-army trust demo/widgets" records your yes in ${codexFile}`);
    mkdirSync(join(home, ".codex"));
    recordCodexTrust(codexFile, clone);
    assert.is(line((await doctor(t, { config: codex, deps: { env } })).text, "trust"), `ok    trust      Codex trusts the clone of demo/widgets (${codexFile}): their worktrees open without the folder-trust question`);
  }));

test.run();
