/**
 * Setup `forge-with-html-title`: `forge-with-worker` where issue 1's title is markup a
 * careless page would run: a `<script>`, an `<img>` whose error handler runs script,
 * quotes that would end an attribute, and a `javascript:` link, so a scenario can show the
 * dashboard drawing it as text.
 */
import { forgeApi } from "./_forge-intake.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The title issue 1 is given. */
export const HTML_TITLE = `<script>alert("owned")</script> "quoted" 'single' <img src=x onerror=alert(1)> <a href="javascript:alert(1)">click</a>`;

/** The forge, the clone, the worker config, and issue 1 titled with markup. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  return await thenRun(made, async () => {
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { title: HTML_TITLE });
  });
}
