/**
 * A real browser for tests: Debian's chromium driven by playwright-core, headless, on Node
 * and Deno alike. playwright-core never downloads a browser; this file only starts the one
 * the system has (`.ci/run` installs it). For tests only.
 */
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { PreconditionError } from "../errors.ts";

/** Where Debian puts its chromium; `RA_CHROMIUM` names another one. */
export const SYSTEM_CHROMIUM = "/usr/bin/chromium";

/** The page size every test and screenshot sees, so screenshots read the same each run. */
export const VIEWPORT = { width: 1280, height: 800 } as const;

/**
 * Chromium's switches: headless, no sandbox (CI runs as root in a container), and nothing that
 * talks to the network on its own (updates, sync, QUIC probes), since tests reach loopback only.
 * Playwright gives each launch a fresh temporary profile (`--user-data-dir`).
 */
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The chromium binary tests run: `RA_CHROMIUM` when set, else Debian's. */
export function chromiumPath(env: Record<string, string | undefined> = process.env): string {
  return env.RA_CHROMIUM || SYSTEM_CHROMIUM;
}

/**
 * Starts headless chromium; close it when done. Fails with one line saying how to install
 * chromium when the binary is not there.
 *
 * @example
 * const browser = await launchBrowser();
 * try { ... } finally { await browser.close(); }
 */
export async function launchBrowser(env: Record<string, string | undefined> = process.env): Promise<Browser> {
  const executablePath = chromiumPath(env);
  if (!existsSync(executablePath)) {
    throw new PreconditionError(`Debian's chromium is not installed: apt-get install chromium (.ci/run does); looked for "${executablePath}"`);
  }
  return await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}

/** What `withPage` can be given: a browser to reuse, and options for the page's context. */
export interface PageOptions {
  /** A browser from `launchBrowser` to open the page in; by default one is launched and closed. */
  browser?: Browser;
  /** More context options (a base URL, extra headers); the viewport is always `VIEWPORT`. */
  context?: Omit<BrowserContextOptions, "viewport">;
}

/**
 * Runs `fn` with a page in a fresh browser context (its own cookies, viewport `VIEWPORT`),
 * then closes the context, and the browser when it launched one, whether `fn` fails or not.
 *
 * @example
 * await withPage(async (page) => {
 *   await page.goto(url);
 *   await page.getByRole("button", { name: "keep" }).click();
 * });
 */
export async function withPage<T>(fn: (page: Page) => Promise<T>, options: PageOptions = {}): Promise<T> {
  const browser = options.browser ?? (await launchBrowser());
  try {
    const context = await browser.newContext({ ...options.context, viewport: VIEWPORT });
    try {
      return await fn(await context.newPage());
    } finally {
      await context.close();
    }
  } finally {
    if (!options.browser) await browser.close();
  }
}
