import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PreconditionError } from "../errors.ts";
import { launchBrowser, VIEWPORT, withPage } from "./browser.ts";

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

test("a page from a loopback server rendered in chromium at the fixed viewport, and a click on its button posted to the server", () =>
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

test("withPage closes the context even when its function fails, and leaves a browser it was given open", async () => {
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

test("a missing chromium is one line saying how to install it", async () => {
  const failure = await launchBrowser({ RA_CHROMIUM: "/nonexistent/chromium" }).catch((e: Error) => e);
  assert.instance(failure, PreconditionError);
  assert.match((failure as Error).message, /^Debian's chromium is not installed: apt-get install chromium \(\.ci\/run does\)/);
});

test.run();
