/**
 * A real browser for tests, driven by playwright-core, headless, on Node and Deno alike.
 *
 * The browser comes with `npm install`: the devDependency @sparticuz/chromium ships a build
 * of Chromium's headless shell inside its npm tarball (brotli-compressed), with the few
 * libraries it links beyond glibc (NSS, NSPR, expat), and dejavu-fonts-ttf ships the fonts
 * (DejaVu, the ones Debian's fonts-dejavu-core has, a monospace among them for xterm.js's
 * cells). Nothing is downloaded from a browser vendor's site, which a machine with the npm
 * registry alone cannot reach, and nothing is needed from apt. The first launch unpacks the
 * browser, once, into `node_modules/.cache/robot-army/chromium-<version>/` (into a folder of
 * its own, then renamed into place, so test files starting side by side never run a
 * half-written binary). It runs with only these libraries and fonts, so a page renders the
 * same on every machine.
 *
 * `RA_CHROMIUM=<path>` prefers another Chromium (Debian's `/usr/bin/chromium`, say). Where
 * none can run (the shipped build is Linux x64 only), `browserUnavailable` says why, and the
 * browser tests are skipped with that reason, never passed (`browserTest`). For tests only.
 */
import { brotliDecompressSync } from "node:zlib";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { PreconditionError } from "../errors.ts";
import { PROJECT_ROOT } from "../runtime.ts";
import { writeFileAtomic } from "../atomic.ts";
import type { Test } from "uvu";
import { skipWhen } from "./skip.ts";

/** Where npm puts the packages that ship the browser and its fonts. */
const SHIPPED = join(PROJECT_ROOT, "node_modules", "@sparticuz", "chromium");
const FONTS = join(PROJECT_ROOT, "node_modules", "dejavu-fonts-ttf", "ttf");
const CACHE = join(PROJECT_ROOT, "node_modules", ".cache", "robot-army");

/** The page size every test and screenshot sees, so screenshots read the same each run. */
export const VIEWPORT = { width: 1280, height: 800 } as const;

/** A phone's screen (an iPhone 14's 390 x 844 CSS pixels), touch and all: what the dashboard must work on. */
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } as const;

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

/** A browser that can be started: its binary and the environment it runs with. */
interface Runnable {
  executablePath: string;
  env: Record<string, string>;
}

/**
 * Why no browser can run here, or null when one can: `RA_CHROMIUM` naming nothing, or no
 * shipped build for this platform (or the package not installed) and no `RA_CHROMIUM`.
 */
export function browserUnavailable(env: Record<string, string | undefined> = process.env): string | null {
  if (env.RA_CHROMIUM) return existsSync(env.RA_CHROMIUM) ? null : `RA_CHROMIUM names "${env.RA_CHROMIUM}", which does not exist`;
  if (process.platform !== "linux" || process.arch !== "x64") {
    return `the Chromium @sparticuz/chromium ships is for Linux x64 and this is ${process.platform} ${process.arch}; set RA_CHROMIUM to a Chromium's path`;
  }
  if (!existsSync(join(SHIPPED, "bin", "chromium.br"))) return `@sparticuz/chromium is not installed (${SHIPPED}): run npm install`;
  if (!existsSync(FONTS)) return `dejavu-fonts-ttf is not installed (${FONTS}): run npm install`;
  return null;
}

/** `test` for a test that drives the browser: skipped, with the reason printed, where none can run. */
export function browserTest(test: Test): Test {
  const why = browserUnavailable();
  return skipWhen(test, why && `no browser: ${why}`);
}

/** The browser tests run: `RA_CHROMIUM` as it is, else the shipped one, unpacked on first use. */
function runnable(env: Record<string, string | undefined>): Runnable {
  const unavailable = browserUnavailable(env);
  if (unavailable) throw new PreconditionError(`No browser for the tests: ${unavailable}`);
  const inherited = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  if (env.RA_CHROMIUM) return { executablePath: env.RA_CHROMIUM, env: inherited };
  const dir = unpacked();
  return {
    executablePath: join(dir, "chromium"),
    env: {
      ...inherited,
      // Its own NSS, NSPR and expat, whatever the machine has; and the fonts npm brought, nothing else.
      LD_LIBRARY_PATH: [join(dir, "lib"), env.LD_LIBRARY_PATH].filter(Boolean).join(":"),
      FONTCONFIG_FILE: fontConfig(),
    },
  };
}

/** The shipped browser's folder, unpacked from the package on first use: once per version. */
function unpacked(): string {
  const { version } = JSON.parse(readFileSync(join(SHIPPED, "package.json"), "utf8")) as { version: string };
  const dir = join(CACHE, `chromium-${version}`);
  if (existsSync(join(dir, "chromium"))) return dir;
  const partial = `${dir}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const bin = join(SHIPPED, "bin");
  writeFileSync(join(partial, "chromium"), brotliDecompressSync(readFileSync(join(bin, "chromium.br"))), { mode: 0o755 });
  untar(brotliDecompressSync(readFileSync(join(bin, "al2023.tar.br"))), partial);
  try {
    renameSync(partial, dir);
  } catch (error) {
    // Another test file unpacked it first: its copy stands.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(dir, "chromium"))) throw error;
  }
  return dir;
}

/**
 * The fontconfig file the browser reads: DejaVu from npm and nothing of the machine's, with
 * the generic families named (a config with no aliases leaves `monospace` to chance). Written
 * whole, and only when it differs, so launches side by side read one or the other whole.
 */
function fontConfig(): string {
  const path = join(CACHE, "fonts.conf");
  const alias = (generic: string, family: string) => `  <alias><family>${generic}</family><prefer><family>${family}</family></prefer></alias>\n`;
  const text = `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${FONTS}</dir>\n  <cachedir>${join(CACHE, "fonts-cache")}</cachedir>\n` +
    alias("monospace", "DejaVu Sans Mono") + alias("sans-serif", "DejaVu Sans") + alias("serif", "DejaVu Serif") + "</fontconfig>\n";
  if (!existsSync(path) || readFileSync(path, "utf8") !== text) {
    mkdirSync(CACHE, { recursive: true });
    writeFileAtomic(path, text);
  }
  return path;
}

/**
 * Writes the regular files and folders of a tar archive (ustar, as the package's are) under
 * `dest`; a name that would leave `dest` is refused.
 */
export function untar(archive: Uint8Array, dest: string): void {
  const text = (at: number, length: number) => new TextDecoder().decode(archive.subarray(at, at + length)).replace(/\0.*$/s, "");
  for (let at = 0; at + 512 <= archive.length;) {
    const name = text(at, 100);
    if (!name) break;
    const prefix = text(at + 345, 155);
    const path = prefix ? `${prefix}/${name}` : name;
    const size = parseInt(text(at + 124, 12).trim() || "0", 8);
    const type = text(at + 156, 1) || "0";
    if (path.split("/").some((part) => part === "..") || path.startsWith("/")) throw new Error(`tar entry "${path}" leaves its folder`);
    const target = join(dest, path);
    if (type === "5") mkdirSync(target, { recursive: true });
    else if (type === "0") {
      mkdirSync(join(target, ".."), { recursive: true });
      const mode = parseInt(text(at + 100, 8).trim() || "644", 8);
      writeFileSync(target, archive.subarray(at + 512, at + 512 + size), { mode });
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
}

/**
 * Starts headless Chromium; close it when done. Fails with one line saying why when no
 * browser can run here (see `browserUnavailable`).
 *
 * @example
 * const browser = await launchBrowser();
 * try { ... } finally { await browser.close(); }
 */
export async function launchBrowser(env: Record<string, string | undefined> = process.env): Promise<Browser> {
  const { executablePath, env: browserEnv } = runnable(env);
  return await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS, env: browserEnv });
}

/** What `withPage` can be given: a browser to reuse, and options for the page's context. */
export interface PageOptions {
  /** A browser from `launchBrowser` to open the page in; by default one is launched and closed. */
  browser?: Browser;
  /** More context options (a base URL, extra headers, a time zone); the viewport is `VIEWPORT` unless `phone`. */
  context?: Omit<BrowserContextOptions, "viewport">;
  /** A phone's screen and touch (`PHONE`) instead of a laptop's. */
  phone?: boolean;
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
    const context = await browser.newContext(options.phone ? { ...options.context, ...PHONE } : { ...options.context, viewport: VIEWPORT });
    try {
      return await fn(await context.newPage());
    } finally {
      await context.close();
    }
  } finally {
    if (!options.browser) await browser.close();
  }
}
