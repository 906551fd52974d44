import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "./config.ts";
import { REDACTED, redact, redactAll, rememberConfiguredSecrets, rememberSecret } from "./redact.ts";

const body36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

test("every GitHub token format is replaced, wherever it sits in the text", () => {
  for (const prefix of ["ghp_", "gho_", "ghs_", "ghu_", "ghr_"]) {
    const token = prefix + body36;
    assert.is(redact(`fatal: could not read ${token}\n`, []), `fatal: could not read ${REDACTED}\n`, prefix);
    assert.is(redact(`https://x:${token}@127.0.0.1/o/r.git`, []), `https://x:${REDACTED}@127.0.0.1/o/r.git`, prefix);
    assert.is(redact(`TOKEN=${token}`, []), `TOKEN=${REDACTED}`, prefix);
    assert.is(redact(`TOKEN${token}`, []), `TOKEN${REDACTED}`, prefix);
  }
  const pat = `github_pat_11ABCDEFG0${"x".repeat(20)}_${"Y".repeat(59)}`;
  assert.is(redact(`token "${pat}" expired`, []), `token "${REDACTED}" expired`);
  assert.is(redact(`two: ghp_${body36} gho_${body36}`, []), `two: ${REDACTED} ${REDACTED}`);
});

test("words that only start like a token are left alone", () => {
  for (const text of ["ghp_", "see ghp_short", "the gh_pages branch", "aghp_" + body36.slice(0, 10), "github_pat_"]) {
    assert.is(redact(text, []), text);
  }
});

test("a configured secret is replaced literally, regex characters and all", () => {
  const secret = "s3cr.t*(x)+[y]$^|\\d{2}?";
  assert.is(redact(`step printed ${secret} twice: ${secret}.`, [secret]), `step printed ${REDACTED} twice: ${REDACTED}.`);
  // As a pattern it would have matched this; as a value it does not.
  assert.is(redact("s3cr_t__(x)", [secret]), "s3cr_t__(x)");
  // A secret holding another is replaced whole, not left half-shown.
  assert.is(redact("long-secret-value", ["secret", "long-secret-value"]), REDACTED);
});

test("empty and blank secrets are ignored, not turned into a placeholder between every character", () => {
  assert.is(redact("nothing secret here", ["", " ", "\n"]), "nothing secret here");
  rememberSecret("");
  rememberSecret(undefined);
  rememberSecret(null);
  assert.is(redact("nothing secret here"), "nothing secret here");
});

test("redactAll reaches every string of a nested body and keeps the rest as it is", () => {
  const body = { ok: false, error: "a ghp_" + body36, nested: { lines: ["fine", "x opaque-1234 y"], code: 7, none: null } };
  assert.equal(redactAll(body, ["opaque-1234"]), {
    ok: false, error: `a ${REDACTED}`, nested: { lines: ["fine", `x ${REDACTED} y`], code: 7, none: null },
  });
});

test("redactAll copies only the way to what it replaced: its argument is left as it was, and what holds no secret comes back itself", () => {
  // A dashboard page's data passes through it on every request: 200 rows rebuilt each time were most of the page's garbage.
  const rows = [{ id: 1, title: "fine" }, { id: 2, title: "fine too" }];
  const page = { rows, note: "x opaque-1234 y", kept: [{ id: 3, tags: ["a", "b"] }] };
  const shown = redactAll(page, ["opaque-1234"]);
  assert.is(shown.note, `x ${REDACTED} y`);
  assert.is(page.note, "x opaque-1234 y", "the argument is never changed");
  assert.is.not(shown, page);
  assert.is(shown.rows, rows, "a part with no secret is given back as it is");
  assert.is(shown.kept, page.kept);
  assert.is(redactAll(page, ["nowhere-here"]), page);
  const deep = { a: [{ b: ["ok", "ghp_" + body36] }] };
  const out = redactAll(deep, []);
  assert.equal(out, { a: [{ b: ["ok", REDACTED] }] });
  assert.is(deep.a[0].b[1], "ghp_" + body36);
});

test("a token the config names (a file, or a variable) is known to the redactor once the config is loaded", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ra-redact-"));
  try {
    // Neither is in a GitHub format: only knowing the configured value catches them.
    writeFileSync(join(dir, "token"), "opaque-file-token-42\n", { mode: 0o600 });
    chmodSync(join(dir, "token"), 0o600);
    writeFileSync(join(dir, "config.toml"), `[github]\ntoken_file = "token"\n`);
    assert.is(redact("leaked opaque-file-token-42"), "leaked opaque-file-token-42");
    await loadConfig({ path: join(dir, "config.toml"), env: { HOME: dir } });
    assert.is(redact("leaked opaque-file-token-42 and again opaque-file-token-42"), `leaked ${REDACTED} and again ${REDACTED}`);

    rememberConfiguredSecrets({ github: { token_env: "RA_TEST_TOKEN" } }, { RA_TEST_TOKEN: "opaque-env-token-43" });
    assert.is(redact("env opaque-env-token-43"), `env ${REDACTED}`);

    // A token_file that cannot be read (missing, a folder) is left to the reader that needs it.
    mkdirSync(join(dir, "folder"));
    rememberConfiguredSecrets({ github: { token_file: join(dir, "folder") } });
    rememberConfiguredSecrets({ github: { token_file: join(dir, "missing") } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
