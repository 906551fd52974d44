/**
 * The dashboard in a real browser: `robot-army serve` started as a child of the runtime
 * running this test, on a real state dir that real commands made (a sandbox forge, two demo
 * workers dispatched at live and idle with their pull requests open, and an item whose worker
 * could not start, under a hostile title; later a worker that prints a line when told),
 * driven by the Chromium npm installs (lib/testing/browser.ts). On Node the catalogue's screenshots of the main pages are
 * taken too (lib/scenario/dashboard-shots.ts): into catalogue/screenshots/ when
 * `npm run catalogue` runs this file, else into the run's temp dir.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { isDeno } from "../runtime.ts";
import { DASHBOARD_SHOTS, SHOTS_DIR } from "../scenario/dashboard-shots.ts";
import { isolatedEnv } from "../scenario/run.ts";
import { setup as dashboardWorkers, useWorker } from "../scenario/setups/forge-with-dashboard-workers.ts";
import { HTML_TITLE } from "../scenario/setups/forge-with-html-title.ts";
import type { SetupContext, SetupResult } from "../scenario/setup.ts";
import { browserTest, browserUnavailable, launchBrowser, withPage } from "../testing/browser.ts";
import type { PageOptions } from "../testing/browser.ts";
import { startDashboard } from "../testing/dashboard.ts";
import type { Dashboard } from "../testing/dashboard.ts";
import { raiseAnomaly } from "../store/anomalies.ts";
import { openStore } from "../store/open.ts";
import { makeTempDir, removeTempDir } from "../testing/fixtures.ts";
import { waitFor } from "../testing/wait.ts";
import { send } from "../testing/web-requests.ts";
import { runCli } from "../testing/soak.ts";

/** The world's items: two demo workers, the failed one under the hostile title, and (from the terminal's test on) the paced worker. */
const DEMO_ITEMS = [1, 2];
const FAILED_ITEM = 3;
const PACED_ITEM = 4;

interface World {
  dir: string;
  env: Record<string, string>;
  cwd: string;
  config: string;
  made: SetupResult;
  /** Makes `script` the worker the next dispatch starts. */
  useWorker(name: string, script: string): void;
  /** Opens an issue on the forge as the owner, labelled for robot-army; its number. */
  openIssue(title: string): Promise<number>;
  robotArmy(argv: string[], env?: Record<string, string>, timeoutMs?: number): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Like `robotArmy`, and throws with its output unless it exits 0; its stdout. */
  must(argv: string[]): Promise<string>;
}

let world: World;
let dashboard: Dashboard;
let browser: Browser;

/** Every test here drives the dashboard in the browser but one, which needs no browser. */
const inBrowser = browserTest(test);

test.before(async () => {
  world = await buildWorld();
  dashboard = await startDashboard({ env: world.env, cwd: world.cwd });
  if (!browserUnavailable()) browser = await launchBrowser();
});

test.after(async () => {
  await browser?.close();
  await dashboard?.stop();
  await world?.made.cleanup?.();
  if (world) removeTempDir(world.dir);
});

/** A fresh page in the shared browser (a phone's, when asked); a wait that does not end fails in ten seconds, not playwright's thirty. */
const page = <T>(fn: (page: Page) => Promise<T>, options: Omit<PageOptions, "browser"> = {}) =>
  withPage((p) => {
    p.setDefaultTimeout(10_000);
    return fn(p);
  }, { ...options, browser });

/** A phone in Auckland: a small touch screen, and a zone far from UTC. */
const PHONE_IN_AUCKLAND: Omit<PageOptions, "browser"> = { phone: true, context: { timezoneId: "Pacific/Auckland" } };

inBrowser("needs me lists the item whose worker could not start, with its reason", () =>
  page(async (p) => {
    await p.goto(dashboard.url + "/");
    const card = p.locator(`article.card[data-item="${FAILED_ITEM}"]`);
    await card.waitFor();
    const text = await card.innerText();
    assert.match(text, /failed/);
    assert.match(text, /could not start/, "the card shows the item's reason");
    assert.match(text, /broken-worker\.sh/);
    assert.ok(await p.locator("#freshness").count(), "the page says when it was read");
    for (const item of DEMO_ITEMS) assert.is(await p.locator(`article.card[data-item="${item}"]`).count(), 0, `item ${item} needs nothing`);
    await screenshot(p, "/");
  }));

inBrowser("a hostile title is shown as text on every page it reaches: no dialog, no script or link of its own", () =>
  page(async (p) => {
    const dialogs: string[] = [];
    p.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    for (const path of ["/", `/items/${FAILED_ITEM}`]) {
      await p.goto(dashboard.url + path);
      await p.locator("#page").waitFor();
      assert.ok((await p.locator("#page").innerText()).includes(HTML_TITLE), `${path} shows the title as text`);
      const scripts = await p.locator("script").evaluateAll((all) => all.map((s) => ({ src: s.getAttribute("src"), text: s.textContent })));
      for (const script of scripts) assert.ok(script.src?.startsWith("/static/") && !script.text, `${path}: only our own scripts: ${JSON.stringify(script)}`);
      assert.is(await p.locator('a[href^="javascript:"]').count(), 0, `${path}: no javascript: link`);
      assert.is(await p.locator("img[onerror]").count(), 0, `${path}: no image of the title's`);
    }
    await p.waitForTimeout(200);
    assert.equal(dialogs, [], "no dialog opened");
  }));

inBrowser("/active has a row for each of the two running demo workers: its session, idle, its pull request, a keep button", () =>
  page(async (p) => {
    await p.goto(dashboard.url + "/active");
    for (const item of DEMO_ITEMS) {
      const row = p.locator(`table#active tr[data-item="${item}"]`);
      await row.waitFor();
      const text = await row.innerText();
      assert.match(text, new RegExp(`ra-widgets-${item}`));
      assert.match(text, /idle/, "the demo worker waits at its prompt");
      assert.match(text, /#\d+\s+open/, "its pull request, open");
      assert.is(await row.locator(`form[action="/items/${item}/keep"]`).count(), 1);
    }
    assert.is(await p.locator("table#active tr[data-item]").count(), DEMO_ITEMS.length);
    assert.is(await p.locator("#kept tr[data-item]").count(), 0, "nothing kept yet");
    await screenshot(p, "/active");
  }));

inBrowser("keep moves the row to the kept section and the CLI's keeps agree; release takes it out again", () =>
  page(async (p) => {
    const [item] = DEMO_ITEMS;
    await p.goto(dashboard.url + "/active");
    await p.locator(`table#active tr[data-item="${item}"]`).getByRole("button", { name: "keep" }).click();
    const kept = p.locator(`#kept tr[data-item="${item}"]`);
    await kept.waitFor();
    assert.is(await p.locator(`table#active tr[data-item="${item}"] form[action="/items/${item}/keep"]`).count(), 0, "no keep button on a kept row");
    assert.equal(await keptItems(), [item]);

    await kept.getByRole("button", { name: "release" }).click();
    await kept.waitFor({ state: "detached" });
    await p.locator(`table#active tr[data-item="${item}"] form[action="/items/${item}/keep"]`).waitFor();
    assert.equal(await keptItems(), []);
  }));

inBrowser("a keep placed at the terminal reaches an open /active without a reload", () =>
  page(async (p) => {
    const item = DEMO_ITEMS[1];
    await p.goto(dashboard.url + "/active");
    await p.locator(`table#active tr[data-item="${item}"]`).waitFor();
    // Gone if the page were loaded again: the update must come from dashboard.js's refresh.
    await p.evaluate(() => ((globalThis as unknown as { stillThisPage: boolean }).stillThisPage = true));
    await world.must(["keep", String(item)]);
    try {
      await p.locator(`#kept tr[data-item="${item}"]`).waitFor();
      await p.locator(`table#active tr[data-item="${item}"] .kept`).waitFor();
      assert.ok(await p.evaluate(() => (globalThis as unknown as { stillThisPage?: boolean }).stillThisPage === true), "the page was not reloaded");
    } finally {
      await world.must(["unkeep", String(item)]);
    }
  }));

inBrowser("the item page's terminal shows the worker's output as it writes", async () => {
  // A worker that prints one line, then another once told: a new issue opened, labelled and dispatched now.
  const go = join(world.dir, "go");
  world.useWorker("paced-worker.sh", `#!/bin/sh\necho "first line"\nwhile [ ! -e ${JSON.stringify(go)} ]; do sleep 0.1; done\necho "second line"\nexec sleep 120\n`);
  const issue = await world.openIssue("Print as it goes");
  await world.must(["poll", "--effect-level", "live"]);
  const ran = await world.must(["run", "--once", "--effect-level", "live"]);
  assert.ok(ran.includes(`dispatched demo/widgets#${issue} as ra-widgets-${issue} (item ${PACED_ITEM})`), ran);
  await page(async (p) => {
    await p.goto(`${dashboard.url}/items/${PACED_ITEM}`);
    assert.is(await p.locator("#terminal").getAttribute("data-stream"), `/api/items/${PACED_ITEM}/terminal`);
    const rows = p.locator("#terminal .xterm-rows");
    await waitFor("the terminal's first line", async () => (await rows.innerText().catch(() => "")).includes("first line"));
    assert.not.match(await rows.innerText(), /second line/);
    writeFileSync(go, "");
    await waitFor("the line the worker wrote after the page opened", async () => (await rows.innerText()).includes("second line"));
    await screenshot(p, "/items/<id>");
  });
});

inBrowser("an open anomaly's acknowledge button acknowledges it as the CLI would", async () => {
  // Raised as the daemon's sweep raises one; no pass runs after this, so nothing retracts it.
  const store = await openStore(world.env.RA_STATE_DIR);
  let anomaly: { id: number };
  try {
    ({ anomaly } = raiseAnomaly(store, { kind: "orphan_worktree", actionId: "/nowhere/stray", repo: "demo/widgets", detail: "a worktree no item claims: /nowhere/stray" }));
  } finally {
    store.close();
  }
  await page(async (p) => {
    await p.goto(dashboard.url + "/anomalies");
    const row = p.locator(`table#anomalies tr[data-anomaly="${anomaly.id}"]`);
    assert.match(await row.innerText(), /orphan_worktree/);
    await row.getByRole("button", { name: "acknowledge" }).click();
    await p.locator(`tr[data-anomaly="${anomaly.id}"]`).waitFor({ state: "detached" });
  });
  const listed = JSON.parse(await world.must(["anomalies", "--all", "--json"])) as { anomalies: Array<{ id: number; acknowledged_at: string | null }> };
  assert.ok(listed.anomalies.find((a) => a.id === anomaly.id)?.acknowledged_at, "anomalies --all --json shows it acknowledged");
});

inBrowser("the audit log pages", () =>
  page(async (p) => {
    await p.goto(dashboard.url + "/log");
    await p.locator("#page").waitFor();
    assert.match(await p.locator("#page").innerText(), /state\.work_item/);
    await screenshot(p, "/log");
  }));

test("bound beyond loopback without [web] token_file, serve refuses to start (exit 3)", async () => {
  // Were it to start, it would listen until killed: the run is ended after 20 seconds, failing the test.
  const refused = await world.robotArmy(["serve", "--bind", "0.0.0.0", "--port", "0"], {}, 20_000);
  assert.is(refused.code, 3, refused.stderr);
  assert.match(refused.stderr, /\[web\] token_file/);
  assert.not.match(refused.stderr, /^\s+at /m, "one line, no stack trace");
});

inBrowser("with a token: the login, a wrong token refused, a POST without its CSRF token refused, a foreign Host refused", async () => {
  const token = "correct-horse-battery-staple-0123456789";
  const tokenFile = join(world.dir, "web-token");
  writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
  const config = join(world.dir, "config-with-token.toml");
  writeFileSync(config, readFileSync(world.config, "utf8") + `\n[web]\ntoken_file = ${JSON.stringify(tokenFile)}\n`);
  const guarded = await startDashboard({ env: { ...world.env, RA_CONFIG: config }, cwd: world.cwd });
  try {
    const api = await fetch(`${guarded.url}/api/active`);
    assert.is(api.status, 401, "the API without the token");
    const bearer = await fetch(`${guarded.url}/api/active`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(bearer.status, 200, "the API with the bearer token");

    await page(async (p) => {
      await p.goto(guarded.url + "/active");
      await p.waitForURL(/\/login(\?|$)/);
      assert.is(await p.locator("table#active").count(), 0, "no page before the login");
      const wrong = p.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/login");
      await p.locator('input[name="token"]').fill("not-the-token");
      await p.locator('input[name="token"]').press("Enter");
      assert.is((await wrong).status(), 401, "a wrong token refused");
      await p.locator('input[name="token"]').waitFor();
      assert.is(await p.locator("table#active").count(), 0);

      await p.goto(guarded.url + "/login");
      await p.locator('input[name="token"]').fill(token);
      await p.locator('input[name="token"]').press("Enter");
      await p.waitForURL(guarded.url + "/");
      await p.locator(`article.card[data-item="${FAILED_ITEM}"]`).waitFor();

      // Logged in, same origin, but no CSRF token: refused, and nothing kept.
      const status = await p.evaluate(async (item) => (await fetch(`/items/${item}/keep`, { method: "POST" })).status, DEMO_ITEMS[0]);
      assert.is(status, 403, "a POST without its CSRF token");
      assert.equal(await keptItems(), []);
    });

    const port = Number(new URL(guarded.url).port);
    const foreign = await send({ port, host: `127.0.0.1:${port}`, close: guarded.stop }, "/", { host: "rebound.example" });
    assert.is(foreign.status, 421, "a foreign Host is refused by the Host check");
    assert.not.match(foreign.body, /data-item/);
  } finally {
    await guarded.stop();
  }
});

inBrowser("on a phone (390 x 844) every page fits the screen's width, every button is a finger's size, and times read in the phone's zone", () =>
  page(async (p) => {
    const paths = ["/", "/active", `/items/${FAILED_ITEM}`, `/items/${DEMO_ITEMS[0]}`, `/items/${PACED_ITEM}`, "/queue", "/anomalies", "/log", `/items/${FAILED_ITEM}/confirm/reset`];
    for (const path of paths) {
      await p.goto(dashboard.url + path);
      await p.locator("#page").waitFor();
      // Measured in the page (a string: this file's types have no DOM).
      const fit = await p.evaluate(`({
        wide: document.documentElement.scrollWidth,
        screen: window.innerWidth,
        small: [...document.querySelectorAll("button, a.button")].filter((b) => b.offsetParent !== null)
          .map((b) => [b.textContent, b.getBoundingClientRect().height, b.getBoundingClientRect().width]).filter(([, h, w]) => h < 44 || w < 44),
      })`) as { wide: number; screen: number; small: unknown[] };
      assert.ok(fit.wide <= fit.screen, `${path} is ${fit.wide} px wide on a ${fit.screen} px screen`);
      assert.equal(fit.small, [], `${path}: buttons smaller than 44 px`);
    }
    await p.goto(`${dashboard.url}/items/${FAILED_ITEM}`);
    const time = p.locator("#item-state time").first();
    const utc = await time.getAttribute("datetime");
    assert.match(utc ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const shown = await time.innerText();
    assert.not.match(shown, /Z$/, `shown in the phone's zone: ${shown}`);
    assert.is(await time.getAttribute("title"), utc!.replace("T", " ").replace("Z", " UTC"));
    // The headless browser's locale is en-US: the time as that locale writes it in Auckland.
    const auckland = new Intl.DateTimeFormat("en-US", { timeZone: "Pacific/Auckland", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    assert.is(shown, auckland.format(new Date(utc!)), `${utc} in Auckland`);
    await time.tap();
    assert.is(await time.innerText(), utc!.replace("T", " ").replace("Z", " UTC"), "a tap shows the UTC time");
    assert.match(await p.locator("#item-state").innerText(), /What to decide by[\s\S]*worktree[\s\S]*uncommitted: /);
    await screenshot(p, "/items/<id> (phone)");
  }, PHONE_IN_AUCKLAND));

inBrowser("from a phone, a button answers in its command's words without a reload, the same form sent twice acts once, and unpause undoes it", () =>
  page(async (p) => {
    await p.goto(dashboard.url + "/");
    await p.evaluate(() => ((globalThis as unknown as { stillThisPage: boolean }).stillThisPage = true));
    // A double tap that gets through: the same form sent twice before either is answered.
    await p.locator('form[action="/dispatch/pause"]').evaluate((form) => {
      const submit = form as unknown as { requestSubmit(): void };
      submit.requestSubmit();
      submit.requestSubmit();
    });
    await p.locator("#said pre").waitFor();
    assert.match(await p.locator("#said").innerText(), /^paused: no worker session is dispatched until "robot-army unpause"/);
    const pauses = JSON.parse(await world.must(["log", "--kind", "control.pause", "--json"])) as Array<{ body: { actor?: string } }>;
    assert.is(pauses.length, 1, "paused once");
    assert.match(pauses[0].body.actor ?? "", /^web \(no login\) from 127\.0\.0\.1$/);
    const card = p.locator("article.card.paused");
    await card.waitFor();
    await card.getByRole("button", { name: "unpause" }).tap();
    await waitFor("the answer to unpause", async () => /^unpaused: dispatch runs again/.test(await p.locator("#said").innerText()));
    await card.waitFor({ state: "detached" });
    assert.ok(await p.evaluate(() => (globalThis as unknown as { stillThisPage?: boolean }).stillThisPage === true), "the page was not reloaded");
    assert.match(await world.must(["status"]), /^(?![\s\S]*paused since)/, "status no longer says paused");
  }, PHONE_IN_AUCKLAND));

inBrowser("from a phone, reset goes through its confirmation, which says what the worktree holds; refused at the daemon's plan level, done at live, the item's page showing the answer", async () => {
  // At the config's level (plan, as the world's daemon would run), reset removes nothing, and says so as the command does.
  await page(async (p) => {
    await p.goto(`${dashboard.url}/items/${FAILED_ITEM}/confirm/reset`);
    await p.getByRole("button", { name: `yes, reset item ${FAILED_ITEM}` }).tap();
    await p.locator("section.error").waitFor();
    assert.match(await p.locator("section.error").innerText(), /Reset removes a real worktree and branch: run it with --effect-level local or above \(now plan\); nothing was removed/);
    // The answer stays as it is: nothing on it refreshes from the address the form was posted to.
    await p.waitForTimeout(3500);
    assert.not.match(await p.locator("#freshness").innerText(), /cannot be reached/);
  }, PHONE_IN_AUCKLAND);
  const config = join(world.dir, "config-live.toml");
  writeFileSync(config, readFileSync(world.config, "utf8") + '\n[daemon]\neffect_level = "live"\n');
  const live = await startDashboard({ env: { ...world.env, RA_CONFIG: config }, cwd: world.cwd });
  try {
    await page(async (p) => {
    await p.goto(`${live.url}/items/${FAILED_ITEM}`);
    await p.getByRole("link", { name: "reset…" }).first().tap();
    await p.waitForURL(new RegExp(`/items/${FAILED_ITEM}/confirm/reset`));
    const confirm = await p.locator("section.confirm").innerText();
    assert.match(confirm, new RegExp(`reset item ${FAILED_ITEM}\\?`));
    assert.match(confirm, /What its worktree holds now\s+uncommitted: none\s+commits: 0 not on main/, confirm);
    assert.is((await world.robotArmy(["show", String(FAILED_ITEM), "--json"])).stdout.includes('"state": "failed"'), true, "nothing acted before the confirmation");
    await p.getByRole("button", { name: `yes, reset item ${FAILED_ITEM}` }).tap();
    await p.waitForURL(new RegExp(`/items/${FAILED_ITEM}\\?said=`)).catch(async (error) => {
      throw new Error(`${error.message}: ${await p.locator("#page").innerText()}`);
    });
    const said = await p.locator("#said").innerText();
    const state = (JSON.parse(await world.must(["show", String(FAILED_ITEM), "--json"])) as { state: string }).state;
    assert.match(said, state === "ready" ? `work item ${FAILED_ITEM} (demo/widgets#${FAILED_ITEM}): ready` : `work item ${FAILED_ITEM} stays ${state}`);
    const moved = JSON.parse(await world.must(["log", "--kind", "worktree.remove", "--item", String(FAILED_ITEM), "--json"])) as Array<{ body: { actor?: string } }>;
    assert.ok(moved.length > 0 && moved.every((r) => /^web \(no login\)/.test(r.body.actor ?? "")), "the removal is the web session's");
    }, PHONE_IN_AUCKLAND);
  } finally {
    await live.stop();
  }
});

inBrowser("a form whose CSRF token is wrong is refused from the page's own origin, nothing changed; a read-only dashboard has no buttons and refuses", async () => {
  await page(async (p) => {
    await p.goto(`${dashboard.url}/items/${DEMO_ITEMS[0]}`);
    const status = await p.evaluate(async (item) => (await fetch(`/items/${item}/keep`, { method: "POST", body: new URLSearchParams({ csrf: "wrong", once: crypto.randomUUID() }) })).status, DEMO_ITEMS[0]);
    assert.is(status, 403);
    assert.equal(await keptItems(), []);
  });
  const readOnly = await startDashboard({ env: world.env, cwd: world.cwd, args: ["--read-only"] });
  try {
    await page(async (p) => {
      for (const path of ["/", `/items/${DEMO_ITEMS[0]}`, "/active"]) {
        await p.goto(readOnly.url + path);
        await p.locator("#page").waitFor();
        assert.is(await p.locator("form, a.button").count(), 0, `${path}: nothing to press`);
      }
      const status = await p.evaluate(async (item) => (await fetch(`/items/${item}/keep`, { method: "POST", body: new URLSearchParams({ once: crypto.randomUUID() }) })).status, DEMO_ITEMS[0]);
      assert.is(status, 403);
    }, PHONE_IN_AUCKLAND);
  } finally {
    await readOnly.stop();
  }
  assert.equal(await keptItems(), []);
});

/** The items `robot-army keeps --json` lists. */
async function keptItems(): Promise<number[]> {
  const run = await world.robotArmy(["keeps", "--json"]);
  assert.is(run.code, 0, run.stderr);
  return (JSON.parse(run.stdout) as { keeps: Array<{ item: number }> }).keeps.map((k) => k.item);
}

/**
 * The catalogue's screenshot of `page` (its entry in DASHBOARD_SHOTS), taken on Node only (one
 * runtime takes them, so runs on both never write the same file at once): into the folder
 * $RA_SCREENSHOTS names (`npm run catalogue` names catalogue/screenshots), else into this
 * run's temp dir, so `npm test` leaves the checkout as it found it.
 */
async function screenshot(p: Page, page: string): Promise<void> {
  if (isDeno()) return;
  const shot = DASHBOARD_SHOTS.find((s) => s.page === page);
  if (!shot) throw new Error(`no screenshot of ${page} in DASHBOARD_SHOTS`);
  const dir = process.env.RA_SCREENSHOTS || join(world.dir, SHOTS_DIR);
  mkdirSync(dir, { recursive: true });
  await p.screenshot({ path: join(dir, shot.file) });
  assert.ok(statSync(join(dir, shot.file)).size > 1000, `the screenshot of ${page} was written`);
}

/** The world, made by real commands: the setup `forge-with-dashboard-workers` (items 1 and 2 idle demo workers, item 3 failed under HTML_TITLE). */
async function buildWorld(): Promise<World> {
  const dir = makeTempDir("robot-army-web-");
  const env: Record<string, string> = isolatedEnv(dir);
  mkdirSync(env.HOME, { recursive: true });
  const robotArmy = (argv: string[], cwd: string, more: Record<string, string> = {}, timeoutMs?: number) => runRobotArmy(argv, cwd, { ...env, ...more }, timeoutMs);
  const ctx: SetupContext = { dir, env, runtime: isDeno() ? "deno" : "node", robotArmy: (argv, o = {}) => robotArmy(argv, o.cwd ?? dir, o.env) };
  let made: SetupResult;
  try {
    made = await dashboardWorkers(ctx);
  } catch (error) {
    removeTempDir(dir);
    throw error;
  }
  const { CONFIG: config, FORGE_URL: forge, OWNER_TOKEN: tokenFile } = made.vars!;
  const run: World["robotArmy"] = (argv, more, timeoutMs) => robotArmy(argv, made.cwd, { ...made.env, ...more }, timeoutMs);
  return {
    dir, env: { ...env, ...made.env }, cwd: made.cwd, config, made, robotArmy: run,
    async must(argv) {
      const ran = await run(argv);
      if (ran.code !== 0) throw new Error(`robot-army ${argv.join(" ")} exited ${ran.code}: ${(ran.stderr || ran.stdout).trim()}`);
      return ran.stdout;
    },
    useWorker(name, script) {
      const path = join(dir, name);
      writeFileSync(path, script);
      chmodSync(path, 0o755);
      useWorker(config, path);
    },
    async openIssue(title) {
      const token = readFileSync(tokenFile, "utf8").trim();
      const res = await fetch(`${forge}/repos/demo/widgets/issues`, {
        method: "POST", headers: { authorization: `token ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ title, body: "Opened by the browser test", labels: ["robot-army"] }),
      });
      if (res.status !== 201) throw new Error(`the forge answered ${res.status} to a new issue: ${await res.text()}`);
      return ((await res.json()) as { number: number }).number;
    },
  };
}

/** Runs `robot-army argv` as a child of this runtime (the soak's runner); one still running after `timeoutMs` is killed (by its pid). */
async function runRobotArmy(argv: string[], cwd: string, env: Record<string, string>, timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const answer = await runCli(argv, env, cwd, timeoutMs);
  return { code: answer.code ?? 128, stdout: answer.stdout, stderr: answer.stderr };
}

test.run();
