import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { branchName, SLUG_MAX, titleSlug } from "./branch-name.ts";

/** What git says of a name as a branch: the name it would use, or undefined when it refuses it. */
function gitBranchCheck(name: string): string | undefined {
  // argv straight to git, no shell: the names under test are exactly what git receives.
  const result = spawnSync("git", ["check-ref-format", "--branch", name], { cwd: tmpdir(), encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

const SHAPE = /^robot-army\/issue-[1-9][0-9]*(-[a-z0-9]+)*$/;

function assertSafe(name: string, title: string): void {
  const why = `title ${JSON.stringify(title.slice(0, 80))} gave ${JSON.stringify(name)}`;
  assert.ok(SHAPE.test(name), why);
  assert.ok(name.length <= "robot-army/issue-".length + 16 + 1 + SLUG_MAX, why);
  assert.not.match(name, /[\s'"`$;&|<>()\\~^:?*[\]{}@!#%]|\.\.|\.lock$|^-/, why);
  assert.is(gitBranchCheck(name), name, `git refused or rewrote it: ${why}`);
}

const HOSTILE = [
  `'; rm -rf / #`,
  `"quoted" and 'single' and "unterminated`,
  "$(rm -rf /)",
  "`rm -rf ~` backticks",
  "a; b && c || d | e > f < g",
  "line one\nline two\r\nline three\0nul",
  "../../etc/passwd ..",
  "feature..branch",
  "HEAD@{1} and @{-1} and @",
  "~^:?*[\\ all the ref specials ] ~1 ^2",
  "-leading dash",
  "--force --upload-pack=touch /tmp/x",
  "trailing .lock",
  "name.lock",
  "ends with a dot.",
  "/leading/and/trailing/slashes/",
  "refs/heads/main",
  "🚀🔥 emoji only 👩‍👩‍👧",
  "修复登录页面的错误",
  "\u202eevil\u202c right-to-left override \u200f\u200e marks",
  "\u0627\u0644\u0639\u0631\u0628\u064a\u0629 Arabic words",
  "tab\there\vvertical\fform feed",
  "%00 %2e%2e url-encoded",
  "\u{1F600}".repeat(5000),
  "x".repeat(10_000),
  "word ".repeat(2000),
  "\ud800 lone surrogate \udfff",
];

test("a plain title becomes lower-case words joined by dashes under robot-army/issue-<n>", () => {
  assert.is(branchName(42, "Fix the login page"), "robot-army/issue-42-fix-the-login-page");
  assert.is(branchName(7, "  Add   CSV export (v2)!!  "), "robot-army/issue-7-add-csv-export-v2");
  assert.is(branchName(3, "snake_case and kebab-case/and.dots"), "robot-army/issue-3-snake-case-and-kebab-case-and-dots");
});

test("accents are folded to their letters, compatibility forms to ASCII", () => {
  assert.is(branchName(1, "Crème brûlée à la façon de Zoë"), "robot-army/issue-1-creme-brulee-a-la-facon-de-zoe");
  assert.is(branchName(2, "İstanbul Ångström ﬁle Ｆｕｌｌｗｉｄｔｈ ①"), "robot-army/issue-2-istanbul-angstrom-file-fullwidth-1");
});

test("a title with nothing ASCII to keep falls back to robot-army/issue-<n> alone", () => {
  for (const title of ["", "   ", "!!!", "🚀🔥", "修复错误", "\u202e\u200f", "--..--", "@{~^:}"]) {
    assert.is(branchName(9, title), "robot-army/issue-9", JSON.stringify(title));
  }
});

test("the slug is at most SLUG_MAX characters, cut at a word boundary", () => {
  const slug = titleSlug("Make the dispatcher respect repository priority when several items wait");
  assert.is(slug, "make-the-dispatcher-respect-repository");
  assert.ok(slug.length <= SLUG_MAX);
  const exact = "a".repeat(20) + " " + "b".repeat(19); // 40 with the dash
  assert.is(titleSlug(exact), "a".repeat(20) + "-" + "b".repeat(19));
  assert.is(titleSlug(exact + " c"), "a".repeat(20) + "-" + "b".repeat(19));
  assert.is(titleSlug("a".repeat(20) + " " + "b".repeat(20)), "a".repeat(20));
});

test("a single word longer than the limit is cut to the limit", () => {
  assert.is(titleSlug("x".repeat(10_000)), "x".repeat(SLUG_MAX));
  assert.is(branchName(5, "Supercalifragilisticexpialidocious-and-then-some-more"), "robot-army/issue-5-supercalifragilisticexpialidocious-and");
});

test("a slug never starts or ends with a dash and never holds two in a row", () => {
  for (const title of ["-a-", "a -- b", "  a  ", "a---b", "a-" + "b".repeat(SLUG_MAX)]) {
    assert.not.match(titleSlug(title), /^-|-$|--/, JSON.stringify(title));
  }
});

test("every hostile title gives a name git accepts as a branch, unchanged, with none of the dangerous characters", () => {
  for (const [index, title] of HOSTILE.entries()) assertSafe(branchName(index + 1, title), title);
  assertSafe(branchName(Number.MAX_SAFE_INTEGER, HOSTILE[2]), HOSTILE[2]);
});

test("random titles over the whole of Unicode all give safe names git accepts", () => {
  let seed = 0x5eed;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pools = [[0x00, 0x7f], [0x80, 0x24f], [0x300, 0x36f], [0x590, 0x6ff], [0x2000, 0x206f], [0x4e00, 0x9fff], [0xd800, 0xdfff], [0xff00, 0xffef], [0x1f300, 0x1faff]];
  for (let n = 1; n <= 100; n++) {
    let title = "";
    const length = Math.floor(random() * 120);
    for (let i = 0; i < length; i++) {
      const [low, high] = pools[Math.floor(random() * pools.length)];
      title += String.fromCodePoint(low + Math.floor(random() * (high - low + 1)));
    }
    assertSafe(branchName(n, title), title);
  }
});

test("an issue number that is not a positive integer is a RangeError", () => {
  for (const issue of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
    assert.throws(() => branchName(issue, "title"), (error: unknown) => error instanceof RangeError, String(issue));
  }
});

test.run();
