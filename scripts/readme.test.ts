/**
 * The README's examples run as printed: each ```sh block marked `<!-- readme-test: runs -->`
 * (or `runs in a git repository`) is run by `sh -e`, against the robot-army command the
 * README's set-up installs (`npm install -g .`, here into a private prefix, offline), with
 * HOME, the state dir and the session root of the test's own. A pause follows each
 * command, as a person reading the README needs one before typing the next: an example
 * must not depend on being run faster than that.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";
import { PROJECT_ROOT } from "../lib/runtime.ts";
import { listRecords } from "../lib/sessions/records.ts";
import { stopSession } from "../lib/sessions/stop.ts";
import { git, withTempDir } from "../lib/testing/fixtures.ts";

/** A ```sh block the README marks as runnable, and where it runs. */
interface RunnableBlock {
  line: number;
  inGitRepo: boolean;
  text: string;
}

/** The marked blocks of a Markdown text. */
export function runnableBlocks(markdown: string): RunnableBlock[] {
  const lines = markdown.split("\n");
  const blocks: RunnableBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const mark = /^<!-- readme-test: runs( in a git repository)? -->$/.exec(lines[i]);
    if (!mark) continue;
    assert.is(lines[i + 1], "```sh", `README.md line ${i + 1}: the mark is followed by a sh block`);
    const end = lines.indexOf("```", i + 2);
    assert.ok(end > i, `README.md line ${i + 2}: the block ends`);
    blocks.push({ line: i + 2, inGitRepo: !!mark[1], text: lines.slice(i + 2, end).join("\n") });
  }
  return blocks;
}

/** The block with a pause after each command line. */
function atHumanPace(text: string, seconds = 1.1): string {
  return text.split("\n").flatMap((line) => (line.trim() && !line.trim().startsWith("#") ? [line, `sleep ${seconds}`] : [line])).join("\n");
}

test("the README's runnable examples run as printed, with the command its set-up installs", () =>
  withTempDir(async (dir) => {
    const blocks = runnableBlocks(readFileSync(join(PROJECT_ROOT, "README.md"), "utf8"));
    assert.ok(blocks.length >= 2, "the journal and the managed-session examples are marked");
    const env: Record<string, string | undefined> = { ...process.env, HOME: join(dir, "home"), RA_STATE_DIR: join(dir, "state") };
    for (const key of ["RA_SESSION_ROOT", "RA_CONFIG", "RA_NOW", "RA_EPISODE_KEY", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "TMUX", "TMUX_PANE"]) delete env[key];
    mkdirSync(env.HOME!);

    const prefix = join(dir, "prefix");
    const install = spawnSync("npm", ["install", "-g", "."], {
      cwd: PROJECT_ROOT, encoding: "utf8",
      env: { ...env, npm_config_prefix: prefix, npm_config_offline: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" },
    });
    assert.is(install.status, 0, `npm install -g . failed: ${install.stderr}`);
    const bin = join(prefix, "bin");
    assert.is(realpathSync(join(bin, "robot-army")), realpathSync(join(PROJECT_ROOT, "bin", "robot-army.mjs")), "the installed command is this checkout's");
    env.PATH = [bin, ...(env.PATH ?? "").split(delimiter)].join(delimiter);

    try {
      for (const block of blocks) {
        const cwd = join(dir, `block-${block.line}`);
        mkdirSync(cwd);
        if (block.inGitRepo) git(cwd, "init", "--quiet");
        const result = spawnSync("sh", ["-e", "-c", atHumanPace(block.text)], { cwd, env, encoding: "utf8", timeout: 60_000 });
        assert.is(result.status, 0, `README.md block at line ${block.line} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`);
        assert.not.match(result.stderr, /^robot-army: /m, `README.md block at line ${block.line} printed an error`);
      }
    } finally {
      const root = join(env.RA_STATE_DIR!, "sessions");
      for (const record of listRecords(root)) await stopSession(root, record, { graceMs: 2_000 }).catch(() => {});
    }
  }));

test.run();
