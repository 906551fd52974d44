/** Every page of the dashboard, in the order of its navigation. */
import type { AnyPage } from "../page.ts";
import { activePage } from "./active.ts";
import { anomaliesPage } from "./anomalies.ts";
import { itemPage } from "./item.ts";
import { logPage } from "./log.ts";
import { needsPage } from "./needs.ts";
import { queuePage } from "./queue.ts";

export const PAGES: readonly AnyPage[] = [needsPage, activePage, queuePage, anomaliesPage, logPage, itemPage];
