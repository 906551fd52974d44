/**
 * What an agent's settings file holds, in words, for `onboard` to show before the owner
 * approves it: Claude Code's hooks (each event, its matcher and the commands it runs), its
 * permission rules, the names of the variables it sets (never their values, which may be
 * secrets), the commands its other settings run (apiKeyHelper, statusLine, ...), and the
 * names of the rest; and the servers an `.mcp.json` starts. Every piece of text comes from
 * the repository, so each is escaped for the terminal.
 */
import { printable } from "../printable.ts";
import { agentFileText } from "./agent-files.ts";
import type { AgentFiles } from "./agent-files.ts";

/** Settings whose value is a command Claude Code runs. */
const COMMAND_SETTINGS = ["apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper"];

/**
 * Lines describing a Claude Code settings file (`.claude/settings.json`, `.claude/settings.local.json`).
 * @example describeClaudeSettings('{"env":{"TOKEN":"x"}}') // ["env: TOKEN"]
 */
export function describeClaudeSettings(text: string): string[] {
  const settings = parseObject(text);
  if (!settings) return ["not a JSON object: Claude Code may refuse it; the whole file is fingerprinted"];
  const lines: string[] = [];
  const hooks = asObject(settings.hooks);
  if (hooks) {
    const events = Object.entries(hooks).map(([event, groups]) => `${show(event)}${describeHookGroups(groups)}`);
    lines.push(`hooks: ${events.join("; ") || "none"}`);
  }
  const permissions = asObject(settings.permissions);
  if (permissions) {
    for (const rule of ["allow", "ask", "deny"]) {
      const rules = Array.isArray(permissions[rule]) ? permissions[rule] as unknown[] : [];
      if (rules.length) lines.push(`permissions ${rule}: ${rules.map(show).join(", ")}`);
    }
    const more = Object.keys(permissions).filter((key) => !["allow", "ask", "deny"].includes(key));
    for (const key of more) lines.push(`permissions ${show(key)}: ${show(permissions[key])}`);
  }
  const env = asObject(settings.env);
  if (env) lines.push(`env: ${Object.keys(env).map(show).join(", ") || "none"}`);
  for (const key of COMMAND_SETTINGS) if (typeof settings[key] === "string") lines.push(`${key} runs: ${show(settings[key])}`);
  const statusLine = asObject(settings.statusLine);
  if (statusLine && typeof statusLine.command === "string") lines.push(`statusLine runs: ${show(statusLine.command)}`);
  const described = new Set(["hooks", "permissions", "env", "statusLine", ...COMMAND_SETTINGS]);
  const rest = Object.keys(settings).filter((key) => !described.has(key));
  if (rest.length) lines.push(`also sets: ${rest.map(show).join(", ")}`);
  return lines.length ? lines : ["no settings"];
}

/**
 * Lines describing an `.mcp.json`: each server and what it starts (its command and arguments, or its URL).
 * @example describeMcpServers('{"mcpServers":{"db":{"command":"npx","args":["db-mcp"]}}}') // ["server db runs: npx db-mcp"]
 */
export function describeMcpServers(text: string): string[] {
  const config = parseObject(text);
  const servers = config && asObject(config.mcpServers);
  if (!servers) return ["no mcpServers object"];
  return Object.entries(servers).map(([name, server]) => {
    const s = asObject(server) ?? {};
    if (typeof s.command === "string") {
      const args = Array.isArray(s.args) ? s.args.map((a) => String(a)) : [];
      return `server ${show(name)} runs: ${show([s.command, ...args].join(" "))}`;
    }
    return `server ${show(name)} at ${show(s.url ?? "(no command or url)")}`;
  });
}

/** ` (Bash): ./check.sh, npm run lint` for each matcher group of one event. */
function describeHookGroups(groups: unknown): string {
  if (!Array.isArray(groups)) return ` ${show(groups)}`;
  return groups.map((group) => {
    const g = asObject(group) ?? {};
    const matcher = typeof g.matcher === "string" && g.matcher !== "" ? ` (${show(g.matcher)})` : "";
    const hooks = Array.isArray(g.hooks) ? g.hooks : [];
    const commands = hooks.map((hook) => {
      const h = asObject(hook) ?? {};
      return typeof h.command === "string" ? show(h.command) : `${show(h.type ?? "hook")}`;
    });
    return `${matcher}: ${commands.join(", ") || "no command"}`;
  }).join(";");
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    return asObject(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
}

/** A value from the file, on one line with its control characters escaped. */
function show(value: unknown): string {
  return printable(typeof value === "string" ? value : JSON.stringify(value) ?? String(value));
}

/** The words for each agent file that has them (Claude Code's settings files, `.mcp.json`), by path. */
export async function summariseAgentFiles(clone: string, agent: AgentFiles): Promise<Map<string, string[]>> {
  const summaries = new Map<string, string[]>();
  for (const file of agent.files) {
    const describe = file.path === ".mcp.json" ? describeMcpServers
      : CLAUDE_SETTINGS_FILES.includes(file.path) ? describeClaudeSettings : undefined;
    const text = describe && await agentFileText(clone, file);
    if (describe && text !== undefined) summaries.set(file.path, describe(text));
  }
  return summaries;
}

const CLAUDE_SETTINGS_FILES = [".claude/settings.json", ".claude/settings.local.json"];
