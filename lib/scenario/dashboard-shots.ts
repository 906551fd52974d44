/**
 * The dashboard's screenshots in the catalogue (`catalogue/screenshots/`): which pages, in
 * which files, with what caption. The browser tests (lib/web/browser.test.ts) take them
 * from a real run in the Chromium npm installs (lib/testing/browser.ts), into the catalogue when `npm run catalogue` runs
 * them; the catalogue's dashboard page shows them. They differ from run to run (times, temp
 * paths), so the catalogue's check asks only that each is there, never that its bytes are
 * the same.
 */

/** One screenshot: the page it shows, its file under `catalogue/screenshots/`, and what it shows. */
export interface DashboardShot {
  readonly page: string;
  readonly file: string;
  readonly caption: string;
}

/** The folder under `catalogue/` the screenshots are in. */
export const SHOTS_DIR = "screenshots";

export const DASHBOARD_SHOTS: readonly DashboardShot[] = [
  { page: "/", file: "needs-me.png", caption: "What needs you: a failed item with its reason, and what to run" },
  { page: "/active", file: "active.png", caption: "Active sessions: two demo workers, each with its keep button; the kept section below" },
  { page: "/items/<id>", file: "item.png", caption: "An item's page, its worker's terminal drawn live by xterm.js" },
  { page: "/log", file: "log.png", caption: "The audit log, newest first, filterable by kind and item" },
  { page: "/items/<id> (phone)", file: "item-phone.png", caption: "A failed item's page on a phone (390 x 844): what to decide by, and its buttons" },
];
