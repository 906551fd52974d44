import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { PROJECT_ROOT } from "../runtime.ts";
import { browserTest, browserUnavailable, launchBrowser, untar, VIEWPORT, withPage } from "./browser.ts";
import { makeTempDir, removeTempDir } from "./fixtures.ts";

const inBrowser = browserTest(test);

/** A loopback page with a button whose click the server hears as a POST. */
const PAGE = `<!doctype html><title>browser fixture</title>
<p id="count">0 presses</p><form method="post" action="/press"><button>press</button></form>`;

async function withServer(fn: (url: string, presses: () => number) => Promise<void>): Promise<void> {
  let presses = 0;
  const server = createServer((req, res) => {
    if (req.method === "POST" && req.url === "/press") {
      presses++;
      res.writeHead(303, { location: "/" }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE.replace("0 presses", `${presses} presses`));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, () => presses);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

inBrowser("a page from a loopback server rendered in chromium at the fixed viewport, and a click on its button posted to the server", () =>
  withServer(async (url, presses) => {
    await withPage(async (page) => {
      await page.goto(url);
      assert.is(await page.title(), "browser fixture");
      assert.equal(page.viewportSize(), VIEWPORT);
      await page.getByRole("button", { name: "press" }).click();
      await page.waitForURL(url);
      assert.is(await page.locator("#count").textContent(), "1 presses");
    });
    assert.is(presses(), 1);
  }));

inBrowser("withPage closes the context even when its function fails, and leaves a browser it was given open", async () => {
  const browser = await launchBrowser();
  try {
    const failure = await withPage(async () => {
      throw new Error("the test's own failure");
    }, { browser }).catch((e: Error) => e);
    assert.is((failure as Error).message, "the test's own failure");
    assert.is(browser.contexts().length, 0);
    assert.ok(browser.isConnected());
  } finally {
    await browser.close();
  }
});

/** The environment of a machine with nothing but what npm installed: no RA_CHROMIUM, no library path of its own. */
const BARE = { PATH: "/usr/bin:/bin", HOME: process.env.HOME };

test("the browser comes with npm install: with no RA_CHROMIUM, the Chromium @sparticuz/chromium ships runs, from its own unpacked folder", async () => {
  const unavailable = browserUnavailable(BARE);
  if (process.platform !== "linux" || process.arch !== "x64") {
    assert.match(unavailable ?? "", /is for Linux x64 and this is/);
    return;
  }
  assert.is(unavailable, null, "npm install brought a browser");
  const browser = await launchBrowser(BARE);
  try {
    const shipped = JSON.parse(readFileSync(join(PROJECT_ROOT, "node_modules", "@sparticuz", "chromium", "package.json"), "utf8")).version;
    // The package's major version is the Chromium it ships: 153.0.0 ships Chromium 153.x, not the machine's own.
    assert.is(browser.version().split(".")[0], shipped.split(".")[0], browser.version());
    const page = await browser.newPage();
    await page.setContent("<p>rendered</p>");
    assert.is(await page.textContent("p"), "rendered");
  } finally {
    await browser.close();
  }
  const cache = join(PROJECT_ROOT, "node_modules", ".cache", "robot-army");
  const unpacked = readdirSync(cache).filter((name) => name.startsWith("chromium-"));
  assert.ok(unpacked.some((name) => existsSync(join(cache, name, "chromium")) && existsSync(join(cache, name, "lib", "libnss3.so"))), unpacked.join(", "));
  assert.equal(unpacked.filter((name) => name.endsWith(".partial")), [], "no half-unpacked folder left behind");
});

test("RA_CHROMIUM naming nothing is one line saying so", async () => {
  assert.match(browserUnavailable({ RA_CHROMIUM: "/nonexistent/chromium" }) ?? "", /^RA_CHROMIUM names "\/nonexistent\/chromium", which does not exist$/);
  const failure = await launchBrowser({ RA_CHROMIUM: "/nonexistent/chromium" }).catch((e: Error) => e);
  assert.instance(failure, PreconditionError);
  assert.match((failure as Error).message, /^No browser for the tests: RA_CHROMIUM names "\/nonexistent\/chromium"/);
});

/** A ustar archive of these entries, as tar writes one: 512-byte headers, contents padded to 512, two empty blocks. */
function tarOf(entries: Array<{ name: string; type?: "0" | "5"; body?: string }>): Uint8Array {
  const blocks: Uint8Array[] = [];
  for (const { name, type = "0", body = "" } of entries) {
    const header = new Uint8Array(512);
    const put = (at: number, text: string) => header.set(new TextEncoder().encode(text), at);
    const content = new TextEncoder().encode(body);
    put(0, name);
    put(100, "0000644\0");
    put(124, content.length.toString(8).padStart(11, "0") + "\0");
    put(156, type);
    put(257, "ustar\0");
    blocks.push(header, content, new Uint8Array((512 - (content.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const block of blocks) (out.set(block, at), (at += block.length));
  return out;
}

test("untar writes an archive's folders and files, and refuses a name that would leave its folder", () => {
  const dir = makeTempDir();
  try {
    untar(tarOf([{ name: "lib/", type: "5" }, { name: "lib/libx.so", body: "x".repeat(700) }, { name: "fonts.conf", body: "<fontconfig/>" }]), dir);
    assert.is(readFileSync(join(dir, "lib", "libx.so"), "utf8"), "x".repeat(700));
    assert.is(readFileSync(join(dir, "fonts.conf"), "utf8"), "<fontconfig/>");
    assert.throws(() => untar(tarOf([{ name: "../escaped", body: "no" }]), dir), /leaves its folder/);
    assert.not.ok(existsSync(join(dir, "..", "escaped")));
  } finally {
    removeTempDir(dir);
  }
});

test.run();
