import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fetchBase } from "../boundaries/worktrees.ts";
import { commitFile, git, originCloneTemplate, withTempDir } from "../testing/fixtures.ts";
import type { OriginClone } from "../testing/fixtures.ts";
import { AGENT_FILES, agentFingerprint, readAgentFiles } from "./agent-files.ts";
import { describeClaudeSettings, describeMcpServers } from "./agent-summary.ts";

const template = originCloneTemplate();
test.after(() => template.remove());

const withRepo = (fn: (w: OriginClone) => Promise<void>) => () => withTempDir(async (dir) => await fn(template.copy(dir)));
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Commits in the seed, pushes to origin, and returns what the clone's fetch of main names. */
async function land(w: OriginClone, files: Record<string, string>): Promise<string> {
  for (const [path, content] of Object.entries(files)) commitFile(w.seed, path, content, `Change ${path}`);
  git(w.seed, "push", "--quiet", w.origin, "main");
  return await fetchBase(w.clone, "octo/app", "main");
}

test("every named agent file is in the fingerprint, absent as null; files under .claude/ and .codex/ join it by their SHA-256", withRepo(async (w) => {
  const commit = await land(w, {
    ".claude/settings.json": '{"hooks":{}}\n',
    ".claude/hooks/check.sh": "echo check\n",
    ".codex/prompts/x.md": "x\n",
    ".robot-army/instructions.md": "Run the tests.\n",
    "CLAUDE.md": "words only\n",
    "src/app.js": "1\n",
  });
  const agent = await readAgentFiles(w.clone, commit);
  assert.is(agent.commit, commit);
  const fingerprint = agentFingerprint(agent);
  assert.equal(fingerprint, {
    "agent_file:.claude/hooks/check.sh": sha256("echo check\n"),
    "agent_file:.claude/robot-army.md": null,
    "agent_file:.claude/settings.json": sha256('{"hooks":{}}\n'),
    "agent_file:.claude/settings.local.json": null,
    "agent_file:.codex/config.toml": null,
    "agent_file:.codex/hooks.json": null,
    "agent_file:.codex/prompts/x.md": sha256("x\n"),
    "agent_file:.mcp.json": null,
    "agent_file:.robot-army/instructions.md": sha256("Run the tests.\n"),
  });
  for (const path of AGENT_FILES) assert.ok(`agent_file:${path}` in fingerprint, path);
}));

test("the files are read from the commit, never from the clone's working tree", withRepo(async (w) => {
  const commit = await land(w, { ".claude/settings.json": "{}\n" });
  git(w.clone, "merge", "--quiet", "--ff-only", "origin/main");
  writeFileSync(join(w.clone, ".claude", "settings.json"), '{"hooks":{"Stop":[]}}\n');
  writeFileSync(join(w.clone, ".mcp.json"), "{}\n");
  const agent = await readAgentFiles(w.clone, commit);
  assert.is(agentFingerprint(agent)["agent_file:.claude/settings.json"], sha256("{}\n"));
  assert.is(agentFingerprint(agent)["agent_file:.mcp.json"], null);
}));

test("a symbolic link's value changes when what it points at inside the repository changes", withRepo(async (w) => {
  mkdirSync(join(w.seed, "config"), { recursive: true });
  writeFileSync(join(w.seed, "config", "claude.json"), "{}\n");
  mkdirSync(join(w.seed, ".claude"), { recursive: true });
  symlinkSync("../config/claude.json", join(w.seed, ".claude", "settings.json"));
  symlinkSync("config", join(w.seed, ".robot-army"));
  git(w.seed, "add", "--", "config", ".claude", ".robot-army");
  git(w.seed, "commit", "--quiet", "-m", "Links");
  git(w.seed, "push", "--quiet", w.origin, "main");
  const first = await readAgentFiles(w.clone, await fetchBase(w.clone, "octo/app", "main"));
  const link = first.files.find((f) => f.path === ".claude/settings.json")!;
  assert.equal([link.kind, link.target], ["symlink", "../config/claude.json"]);
  assert.is(first.files.find((f) => f.path === ".robot-army")?.kind, "symlink", "a link where a named file's folder is counts too");
  const second = await readAgentFiles(w.clone, await land(w, { "config/claude.json": '{"hooks":{"Stop":[]}}\n' }));
  const before = agentFingerprint(first);
  const after = agentFingerprint(second);
  assert.is.not(after["agent_file:.claude/settings.json"], before["agent_file:.claude/settings.json"]);
  assert.is.not(after["agent_file:.robot-army"], before["agent_file:.robot-army"]);
}));

test("Claude Code's settings in words: hooks with their events and commands, permission rules, variable names but never values, and commands other settings run", () => {
  const lines = describeClaudeSettings(JSON.stringify({
    hooks: {
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./.claude/hooks/check.sh" }] }],
      Stop: [{ hooks: [{ type: "command", command: "curl -s https://example.test/\u001b[2J" }] }],
    },
    permissions: { allow: ["Bash(npm test)", "Read"], deny: ["Bash(rm:*)"], defaultMode: "acceptEdits" },
    env: { API_TOKEN: "s3cret", DEBUG: "1" },
    apiKeyHelper: "./get-key.sh",
    model: "opus",
  }));
  assert.equal(lines, [
    "hooks: PreToolUse (Bash): ./.claude/hooks/check.sh; Stop: curl -s https://example.test/\\u001b[2J",
    "permissions allow: Bash(npm test), Read",
    "permissions deny: Bash(rm:*)",
    "permissions defaultMode: acceptEdits",
    "env: API_TOKEN, DEBUG",
    "apiKeyHelper runs: ./get-key.sh",
    "also sets: model",
  ]);
  assert.not.ok(lines.join("\n").includes("s3cret"));
  assert.equal(describeClaudeSettings("not json"), ["not a JSON object: Claude Code may refuse it; the whole file is fingerprinted"]);
  assert.equal(describeMcpServers('{"mcpServers":{"db":{"command":"npx","args":["db-mcp","--port","1"]},"web":{"url":"https://mcp.test"}}}'), [
    "server db runs: npx db-mcp --port 1",
    "server web at https://mcp.test",
  ]);
});

test.run();
