/**
 * Test scaffolding for the forge's tests: a seeded forge folder built once per test file
 * and copied per test, a forge started on it, and Octokit clients for its users talking
 * real HTTP to it.
 */
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { makeTempDir, removeTempDir } from "./fixtures.ts";
import { seedForge } from "../forge/seed.ts";
import type { SeedResult } from "../forge/seed.ts";
import { startForge } from "../forge/server.ts";
import type { Forge, ForgeOptions } from "../forge/server.ts";

/** The fixed time seeded issues are created at. */
export const SEED_TIME = new Date("2026-01-15T10:00:00Z");

/** A running forge over a copy of the seeded folder, and clients for its users. */
export interface TestForge {
  forge: Forge;
  /** The forge's folder. */
  dir: string;
  /** The test's own temp dir (the forge's folder is inside it), for clones. */
  tmp: string;
  seeded: SeedResult;
  /** Octokit as the trusted `owner`. */
  owner: Octokit;
  /** Octokit as `stranger`. */
  stranger: Octokit;
  /** Octokit with any token (or none). */
  client(token?: string): Octokit;
  token(login: "owner" | "stranger"): string;
  /** A `/_forge/*` hook, answered as JSON. */
  hook(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

/** A seeded forge folder built once; `use` runs a test on a forge over a fresh copy of it. */
export interface ForgeTemplate {
  use(fn: (t: TestForge) => Promise<void>, options?: Omit<ForgeOptions, "dir">): Promise<void>;
  remove(): void;
}

/** Builds the seeded template lazily (the first test pays for the git calls). */
export function forgeTemplate(seedOptions: Parameters<typeof seedForge>[1] = {}): ForgeTemplate {
  let template: { dir: string; seeded: SeedResult } | undefined;
  const templates = makeTempDir("robot-army-forge-");
  return {
    async use(fn, options = {}) {
      template ??= { dir: join(templates, "forge"), seeded: await seedForge(join(templates, "forge"), { now: () => SEED_TIME, ...seedOptions }) };
      const tmp = makeTempDir();
      const dir = join(tmp, "forge");
      cpSync(template.dir, dir, { recursive: true });
      const seeded = JSON.parse(JSON.stringify(template.seeded).replaceAll(template.dir, dir)) as SeedResult;
      const forge = await startForge({ dir, ...options });
      try {
        const token = (login: "owner" | "stranger") => readFileSync(join(dir, "tokens", login), "utf8");
        const client = (auth?: string) => new Octokit({ baseUrl: forge.url, auth, log: silent });
        await fn({
          forge,
          dir,
          tmp,
          seeded,
          owner: client(token("owner")),
          stranger: client(token("stranger")),
          client,
          token,
          hook: async (method, path, body) => {
            const res = await fetch(forge.url + path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
            const text = await res.text();
            return { status: res.status, body: text ? JSON.parse(text) : undefined };
          },
        });
      } finally {
        await forge.close();
        removeTempDir(tmp);
      }
    },
    remove() {
      removeTempDir(templates);
    },
  };
}

/** What Octokit throws for a non-2xx answer, or undefined when the call succeeded. */
export async function failure(call: Promise<unknown>): Promise<{ status: number; data: any; headers: Record<string, string> }> {
  try {
    await call;
  } catch (error) {
    const e = error as { status: number; response?: { data: unknown; headers: Record<string, string> } };
    return { status: e.status, data: e.response?.data, headers: e.response?.headers ?? {} };
  }
  throw new Error("Expected the call to fail, and it succeeded");
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };
