import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "./errors.ts";
import { redact } from "./redact.ts";
import { withTempDir } from "./testing/fixtures.ts";
import { readSecretFile } from "./secret-file.ts";

const role = { file: "Pushover token file", key: "pushover.token_file", holds: "the application's API token" };

const refused = (path: string, message: string) =>
  assert.throws(() => readSecretFile(path, role), (e: unknown) => e instanceof PreconditionError && e.exitCode === 3 && e.message === message);

test("a 0600 (or 0400) file is read trimmed, and what it holds is redacted from then on", () =>
  withTempDir((dir) => {
    const file = join(dir, "token");
    writeFileSync(file, "  azsecretsecretsecretsecret12\n", { mode: 0o600 });
    assert.is(readSecretFile(file, role), "azsecretsecretsecretsecret12");
    assert.is(redact("token=azsecretsecretsecretsecret12"), "token=[redacted]");
    chmodSync(file, 0o400);
    assert.is(readSecretFile(file, role), "azsecretsecretsecretsecret12");
  }));

test("a file group or others can read, an empty one, a missing one and a folder are refused in the role's words", () =>
  withTempDir((dir) => {
    const file = join(dir, "token");
    writeFileSync(file, "azsecret\n", { mode: 0o600 });
    chmodSync(file, 0o660);
    refused(file, `Pushover token file "${file}" has mode 0660; it must be 0600 (chmod 600 "${file}")`);
    const empty = join(dir, "empty");
    writeFileSync(empty, " \n", { mode: 0o600 });
    refused(empty, `Pushover token file "${empty}" is empty`);
    refused(join(dir, "missing"), `Cannot read Pushover token file "${join(dir, "missing")}": ENOENT`);
    refused(dir, `Pushover token file "${dir}" is a directory; pushover.token_file must name the file holding the application's API token`);
    const dangling = join(dir, "link-to-nothing");
    symlinkSync(join(dir, "nowhere"), dangling);
    refused(dangling, `Cannot read Pushover token file "${dangling}": ENOENT`);
  }));

test.run();
