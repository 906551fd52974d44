/**
 * Helpers for the trust setups: `stranger` given push access to `demo/widgets` (a
 * collaborator, who may label and edit the owner's issues, as on GitHub), and the forge's
 * REST API called as them.
 */
import { readFileSync } from "node:fs";
import { findRepo, loadForgeData, saveForgeData } from "../../forge/state.ts";
import type { SetupResult } from "../setup.ts";

/** Makes `stranger` a collaborator of demo/widgets; returns a REST call as them (a failure throws with the forge's answer). */
export function strangerAsCollaborator(made: SetupResult): (method: string, path: string, body?: unknown) => Promise<unknown> {
  const vars = made.vars!;
  // The forge reads its state file again when it changes on disk.
  const data = loadForgeData(vars.FORGE_DIR);
  findRepo(data, "demo", "widgets")!.collaborators.push("stranger");
  saveForgeData(vars.FORGE_DIR, data);
  const token = readFileSync(vars.STRANGER_TOKEN, "utf8").trim();
  return async (method, path, body) => {
    const res = await fetch(vars.FORGE_URL + path, {
      method, headers: { authorization: `token ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`forge answered ${res.status} to ${method} ${path} as stranger: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}
