import { buildBenchWorld } from "./scripts/dev/bench-pass.ts";
import { startDashboard } from "./lib/testing/dashboard.ts";
import { readFileSync } from "node:fs";
const w = await buildBenchWorld();
const rss = (pid: number) => /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1] + " kB";
const env = { ...process.env, RA_STATE_DIR: w.stateDir, RA_CONFIG: w.configFile };
const s = await startDashboard({ env });
await new Promise((r) => setTimeout(r, 500));
console.log("idle", rss(s.pid));
for (const path of ["/queue", "/log", "/anomalies", "/", "/active", "/api/active"]) {
  for (let i = 0; i < 20; i++) await (await fetch(s.url + path)).text();
  console.log(path, rss(s.pid));
}
await s.stop(); w.forge.stop(); w.close(); process.exit(0);
