import { buildBenchWorld } from "./scripts/dev/bench-pass.ts";
import { webContext } from "./lib/web/context.ts";
import { webApp } from "./lib/web/app.ts";
import { webAccess } from "./lib/web/security.ts";
const w = await buildBenchWorld();

const ctx = webContext(w.config, w.stateDir, w.sessionRoot);
const app = webApp(ctx, webAccess(w.config, "127.0.0.1", 0));
const m = (l: string) => { const u = process.memoryUsage(); console.log(l.padEnd(12), "rss", (u.rss / 2**20).toFixed(0), "heapTotal", (u.heapTotal / 2**20).toFixed(0), "heapUsed", (u.heapUsed / 2**20).toFixed(0), "external", (u.external / 2**20).toFixed(0), "ab", (u.arrayBuffers/2**20).toFixed(0)); };
m("start");
for (const path of ["/", "/active", "/api/active", "/active", "/api/active"]) {
  let len = 0;
  for (let i = 0; i < 30; i++) len = (await (await app.request("http://127.0.0.1" + path, { headers: { Host: "127.0.0.1" } })).text()).length;
  m(path + " " + len);
}
w.forge.stop(); w.close(); process.exit(0);
