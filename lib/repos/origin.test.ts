import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../testing/fixtures.ts";
import { expectedRemotes, originMatches, redactedRemote, remoteTarget } from "./origin.ts";

const GITHUB = { clone_url: "https://github.com/demo/widgets.git", html_url: "https://github.com/demo/widgets" };

test("every usual spelling of a GitHub repository is that repository", () => {
  const spellings = [
    "https://github.com/demo/widgets.git",
    "https://github.com/demo/widgets",
    "https://github.com/demo/widgets/",
    "http://github.com/demo/widgets.git",
    "git@github.com:demo/widgets.git",
    "git@github.com:demo/widgets",
    "github.com:demo/widgets.git",
    "ssh://git@github.com/demo/widgets.git",
    "ssh://git@ssh.github.com:443/demo/widgets.git",
    "git://github.com/demo/widgets.git",
    "https://GitHub.com/Demo/Widgets.git",
    "https://x-access-token:ghs_secret@github.com/demo/widgets.git",
    "  https://github.com/demo/widgets.git\n",
  ];
  for (const origin of spellings) assert.ok(originMatches(origin, GITHUB), `${JSON.stringify(origin)} is demo/widgets`);
});

test("another owner, another name, another host or a longer path is another repository", () => {
  const others = [
    "https://github.com/someone/widgets.git",
    "https://github.com/demo/widgets-fork.git",
    "git@github.com:demo/gadgets.git",
    "https://gitlab.com/demo/widgets.git",
    "git@ghe.example.com:demo/widgets.git",
    "https://github.com/demo/widgets/tree/main",
    "https://github.com/demo",
    "/srv/git/demo/widgets.git",
    "",
    "ftp://github.com/demo/widgets.git",
    "https://[broken",
  ];
  for (const origin of others) assert.not.ok(originMatches(origin, GITHUB), `${JSON.stringify(origin)} is not demo/widgets`);
});

test("a GitHub Enterprise repository matches on its own host", () => {
  const ghe = { clone_url: "https://ghe.example.com/demo/widgets.git", html_url: "https://ghe.example.com/demo/widgets" };
  assert.ok(originMatches("git@ghe.example.com:demo/widgets.git", ghe));
  assert.not.ok(originMatches("git@github.com:demo/widgets.git", ghe));
});

test("the forge's plain path matches as written, without .git, as file:// and relative to the clone", () =>
  withTempDir((dir) => {
    const bare = join(dir, "forge/git/demo/widgets.git");
    mkdirSync(bare, { recursive: true });
    const forge = { clone_url: bare, html_url: "http://127.0.0.1:4567/demo/widgets" };
    const clone = join(dir, "widgets");
    mkdirSync(clone);
    assert.ok(originMatches(bare, forge));
    assert.ok(originMatches(bare + "/", forge));
    assert.ok(originMatches(join(dir, "forge/git/demo/widgets"), forge), "git finds <name>.git for <name>");
    assert.ok(originMatches(`file://${bare}`, forge));
    assert.ok(originMatches("../forge/git/demo/widgets.git", forge, clone));
    assert.ok(originMatches("http://127.0.0.1:4567/demo/widgets.git", forge), "its web address too");
    symlinkSync(join(dir, "forge"), join(dir, "link"));
    assert.ok(originMatches(join(dir, "link/git/demo/widgets.git"), forge), "a path through a symlink is the same place");
    assert.not.ok(originMatches(join(dir, "forge/git/demo/gadgets.git"), forge));
    assert.not.ok(originMatches("https://github.com/demo/widgets.git", forge));
  }));

test("remoteTarget reduces a URL to host and owner/name, or a local path", () => {
  assert.equal(remoteTarget("git@github.com:Demo/widgets.git"), { kind: "hosted", host: "github.com", path: "demo/widgets" });
  assert.equal(remoteTarget("/nowhere/x.git"), { kind: "local", path: "/nowhere/x.git" });
  assert.is(remoteTarget("svn+ssh://host/demo/widgets"), undefined);
});

test("the expected remotes are the clone URL and the web URL, once each", () => {
  assert.equal(expectedRemotes(GITHUB), ["https://github.com/demo/widgets.git", "https://github.com/demo/widgets"]);
  assert.equal(expectedRemotes({ clone_url: "/x.git", html_url: "/x.git" }), ["/x.git"]);
});

test("a credential written into a remote URL is never printed", () => {
  assert.is(redactedRemote("https://x-access-token:ghs_secret@github.com/demo/widgets.git"), "https://***@github.com/demo/widgets.git");
  assert.is(redactedRemote("https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/demo/widgets.git"), "https://***@github.com/demo/widgets.git");
  assert.is(redactedRemote("ssh://git@github.com/demo/widgets.git"), "ssh://git@github.com/demo/widgets.git");
  assert.is(redactedRemote("git@github.com:demo/widgets.git"), "git@github.com:demo/widgets.git");
  assert.is(redactedRemote("/srv/git/widgets.git"), "/srv/git/widgets.git");
});

test.run();
