/**
 * `onboardHere` stands in for `robot-army onboard` in scenario setups and the crash suite, so
 * it must record exactly what the command records: two worlds alike, one onboarded by the
 * real command and one here, hold the same rows in every table of the store.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { isolatedEnv } from "../scenario/run.ts";
import { robotArmyCommand } from "../scenario/setup.ts";
import { setup as forgeWithClone } from "../scenario/setups/forge-with-clone.ts";
import type { SetupResult } from "../scenario/setup.ts";
import { openStore } from "../store/open.ts";
import { makeTempDir, removeTempDir } from "./fixtures.ts";
import { onboardHere } from "./onboard-here.ts";
import { rejects } from "./rejects.ts";

interface World {
  dir: string;
  env: Record<string, string>;
  made: SetupResult;
}

async function world(): Promise<World> {
  const dir = makeTempDir("robot-army-onboard-here-");
  const env = isolatedEnv(dir);
  mkdirSync(env.HOME, { recursive: true });
  const made = await forgeWithClone({ dir, env, runtime: "node", robotArmy: () => Promise.reject(new Error("not used")) });
  return { dir, env, made };
}

async function close(w: World): Promise<void> {
  await w.made.cleanup?.();
  removeTempDir(w.dir);
}

/** Every row of every table, the world's own folder, forge and token written as placeholders. */
async function rowsOf(w: World): Promise<string> {
  const store = await openStore(w.env.RA_STATE_DIR);
  try {
    const tables = store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>;
    const dump = Object.fromEntries(tables.map(({ name }) => [name, store.db.prepare(`SELECT * FROM "${name}"`).all().map((row) => ({ ...row }))]));
    const token = readFileSync(w.made.vars!.OWNER_TOKEN, "utf8").trim();
    return JSON.stringify(dump, null, 1)
      .replaceAll(w.dir, "<dir>")
      .replaceAll(w.made.vars!.FORGE_URL, "<forge>")
      .replaceAll(token, "<token>")
      .replace(/token sha256:[0-9a-f]+/g, "token sha256:<key>");
  } finally {
    store.close();
  }
}

function onboardByCommand(w: World): Promise<number | null> {
  const [bin, ...args] = robotArmyCommand("node");
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...args, "onboard", "demo/widgets"], { cwd: w.made.cwd, env: w.env, stdio: "ignore" });
    child.on("error", reject);
    child.on("close", resolve);
  });
}

test("onboardHere records what `robot-army onboard` records, row for row", async () => {
  const [byCommand, here] = [await world(), await world()];
  try {
    assert.is(await onboardByCommand(byCommand), 0);
    await onboardHere({ env: here.env }, "demo/widgets");
    const recorded = await rowsOf(here);
    const repos = (JSON.parse(recorded) as { repos: Array<{ name: string }> }).repos;
    assert.is(repos.length, 1, "the repository is onboarded");
    assert.fixture(recorded, await rowsOf(byCommand));
  } finally {
    await Promise.all([close(byCommand), close(here)]);
  }
});

test("onboardHere needs the clock the command would run at, and keeps one clock for the process", async () => {
  const { RA_NOW: _now, ...noClock } = isolatedEnv("/nonexistent");
  await rejects(onboardHere({ env: noClock as Record<string, string> }, "demo/widgets"), Error, "needs RA_NOW");
  assert.is(process.env.RA_NOW, undefined, "the clock is put back");
});

test.run();
