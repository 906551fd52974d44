/**
 * Helpers for the intake setups: `forge-with-clone`, then what must have happened before
 * the scenario's steps (an onboarding and a first poll, a change made on the forge by the
 * owner, a fault the forge is told to serve).
 */
import { readFileSync } from "node:fs";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** `forge-with-clone`, the repository onboarded and polled once, then `change` made on the forge as owner. */
export async function afterFirstPoll(ctx: SetupContext, change: (api: ForgeApi) => Promise<void>): Promise<SetupResult> {
  const made = await forgeWithClone(ctx);
  try {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    const poll = await ctx.robotArmy(["poll"], { cwd: made.cwd, env: made.env });
    if (poll.code !== 0) throw new Error(`robot-army poll exited ${poll.code}: ${poll.stderr.trim()}`);
    await change(forgeApi(made));
    return made;
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
}

/** The forge's REST API as the owner, and its test hooks. */
export interface ForgeApi {
  /** A request as the owner; a failure throws with the forge's answer. */
  owner(method: string, path: string, body?: unknown): Promise<unknown>;
  /** A `/_forge/*` hook. */
  hook(method: string, path: string, body?: unknown): Promise<unknown>;
}

/** The API of the forge `forge-with-clone` started. */
export function forgeApi(made: SetupResult): ForgeApi {
  const vars = made.vars!;
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(vars.FORGE_URL + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`forge answered ${res.status} to ${method} ${path}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const token = readFileSync(vars.OWNER_TOKEN, "utf8").trim();
  return {
    owner: (method, path, body) => call(method, path, body, { authorization: `token ${token}`, "content-type": "application/json" }),
    hook: (method, path, body) => call(method, path, body, {}),
  };
}
