/**
 * The package a user installs: built by `npm run pack`, installed with `npm install -g` into
 * an empty prefix on this machine's own Node (Node 24 comes with it from npm), and run:
 * `robot-army --version`, then a whole rehearsal (`robot-army start`). Nothing of the tests
 * is in it. Node only: the package runs on Node, whatever runtime runs the tests.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { isDeno } from "../../lib/runtime.ts";
import { makeTempDir, removeTempDir } from "../../lib/testing/fixtures.ts";
import { skipWhen } from "../../lib/testing/skip.ts";
import { buildPackage, pointImportsAtJs, shipped } from "./pack.ts";

const nodeTest = skipWhen(test, isDeno() && "the package's install and run are proven on the Node run (the package runs on Node)");

test("what ships: the sources a user runs, never a test or a test kit", () => {
  for (const path of ["bin/robot-army.mjs", "scripts/status.ts", "scripts/dev/session-holder.ts", "lib/cli.ts", "lib/forge/server.ts", "lib/web/static/dashboard.js", "schema/config.schema.json", "schema/validate/config.mjs", "schema/validate/config-defaults.json"]) {
    assert.ok(shipped(path), path);
  }
  for (const path of ["scripts/status.test.ts", "lib/cli.test.ts", "lib/testing/fixtures.ts", "lib/scenario/run.ts", "lib/crash/lab.ts", "scripts/dev/pack.ts", "scripts/dev/test.ts", "scenarios/status/doctor.yaml", "catalogue/commands.md"]) {
    assert.not.ok(shipped(path), path);
  }
  // Written with the keywords apart, so the structure test does not take these samples for this file's imports.
  const code = (ext: string) => [`import { a } ${"from"} "./a${ext}";`, `export { b } ${"from"} "../b${ext}";`, `const c = await ${"import"}("./c/d${ext}");`, `${"import"} "./e${ext}";`, `import x ${"from"} "node:fs";`].join("\n");
  assert.is(pointImportsAtJs(code(".ts")), code(".js"));
});

nodeTest("the packed package installs into an empty prefix with npm install -g, holds no test, and robot-army runs from it: --version, then a whole rehearsal", () => {
  const dir = makeTempDir("robot-army-pack-test-");
  try {
    const tarball = buildPackage(dir);
    const listed = spawnSync("tar", ["tzf", tarball], { encoding: "utf8" }).stdout.trim().split("\n");
    assert.ok(listed.includes("package/bin/robot-army.mjs") && listed.includes("package/scripts/dev/session-holder.js"), listed.join("\n"));
    assert.equal(listed.filter((p) => /\.test\.|\/testing\/|\/scenario\/|\/crash\/|\.ts$/.test(p)), [], "no test, test kit or TypeScript source ships");
    const prefix = join(dir, "prefix");
    const installed = spawnSync("npm", ["install", "-g", tarball, "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund"], { encoding: "utf8" });
    assert.is(installed.status, 0, installed.stderr);
    // Whatever Node is first on PATH (on this machine, an older system Node): the entry point finds Node 24 in the package.
    const home = join(dir, "home");
    mkdirSync(home);
    const env = { PATH: `${join(prefix, "bin")}:${process.env.PATH}`, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1", LANG: "C.UTF-8" };
    const version = spawnSync("robot-army", ["--version"], { env, encoding: "utf8" });
    assert.is(version.stdout.trim(), `robot-army ${JSON.parse(spawnSync("tar", ["xzOf", tarball, "package/package.json"], { encoding: "utf8" }).stdout).version}`, version.stderr);
    const rehearsal = spawnSync("robot-army", ["start"], { env, encoding: "utf8", timeout: 240_000 });
    assert.is(rehearsal.status, 0, rehearsal.stdout + rehearsal.stderr);
    assert.match(rehearsal.stdout, "rehearsal finished: 3 items done, 2 workers retired, 1 kept (stopped now), nothing left running");
    const kept = /the rehearsal's files stay in (\S+)/.exec(rehearsal.stdout)?.[1];
    if (kept && existsSync(kept)) removeTempDir(kept);
  } finally {
    removeTempDir(dir);
  }
});

test.run();
