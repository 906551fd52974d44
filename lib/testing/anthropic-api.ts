/**
 * A scripted stand-in for the Anthropic Messages API, served on 127.0.0.1, so the real Claude
 * Code CLI can be robot-army's worker in tests with no key and no request leaving the machine.
 *
 * It answers what Claude Code asks of its API: `POST /v1/messages` (streamed as server-sent
 * events, or whole), `POST /v1/messages/count_tokens` and `GET /v1/models`. Each message
 * request is handed to the test's script, which answers with one turn: text (the turn ends)
 * or one tool call (Claude Code runs the tool, asking its permission rules first, and sends
 * the result back in its next request). A request that offers no tools (a title, a summary,
 * a permission check of Claude Code's own) is answered with a short text unless the script
 * says otherwise.
 *
 * The same port is also the proxy the worker is given (`HTTPS_PROXY`, `HTTP_PROXY`, with
 * `NO_PROXY` naming loopback): a request Claude Code would send off the machine arrives here
 * instead, is refused, and is listed in `egress`, so a test can show that nothing left.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { serveLoopback } from "./loopback-api.ts";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../runtime.ts";

/** One message request as Claude Code sent it: the parts a script reads. */
export interface MessagesRequest {
  /** Its number among every message request this server answered, from 1. */
  n: number;
  model: string;
  /** Whether Claude Code offered tools: the worker's own conversation does, its side requests do not. */
  withTools: boolean;
  /** Every message of the conversation, as sent. */
  messages: { role: string; content: unknown }[];
}

/** One turn of the model: text that ends the turn, or one tool call. */
export type ModelTurn = { text: string } | { tool: string; input: Record<string, unknown> };

/** The script: the turn that answers a request, or a promise of it (a turn held back keeps the worker busy). */
export type ModelScript = (request: MessagesRequest) => ModelTurn | Promise<ModelTurn>;

/** A running stand-in. */
export interface AnthropicApi {
  /** The base URL Claude Code is given (`ANTHROPIC_BASE_URL`). */
  url: string;
  /** The same address as a proxy URL (`HTTPS_PROXY`): what arrives there was meant for elsewhere. */
  proxy: string;
  /** Every message request answered, in order. */
  requests: MessagesRequest[];
  /** Every request that tried to leave the machine through the proxy: `CONNECT host:port` or an absolute URL. */
  egress: string[];
  close(): Promise<void>;
}

/** The model name answered with when a request names none. */
const DEFAULT_MODEL = "claude-sonnet-4-5";

/** Serves the stand-in on 127.0.0.1 at any free port, answering each message request with `script`. */
export async function serveAnthropicApi(script: ModelScript): Promise<AnthropicApi> {
  const requests: MessagesRequest[] = [];
  let count = 0;

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await bodyOf(req);
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path.startsWith("/v1/models")) {
      return json(res, { data: [{ type: "model", id: DEFAULT_MODEL, display_name: "Scripted", created_at: "2025-01-01T00:00:00Z" }], has_more: false, first_id: DEFAULT_MODEL, last_id: DEFAULT_MODEL });
    }
    if (req.method === "POST" && path === "/v1/messages/count_tokens") return json(res, { input_tokens: Math.ceil(text.length / 4) });
    if (req.method !== "POST" || path !== "/v1/messages") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `${req.method} ${path}` } }));
      return;
    }
    const body = JSON.parse(text || "{}");
    const request: MessagesRequest = {
      n: ++count, model: typeof body.model === "string" ? body.model : DEFAULT_MODEL,
      withTools: Array.isArray(body.tools) && body.tools.length > 0, messages: Array.isArray(body.messages) ? body.messages : [],
    };
    requests.push(request);
    const turn = await script(request);
    const id = `msg_scripted_${request.n}`;
    const block = "text" in turn
      ? { type: "text", text: turn.text }
      : { type: "tool_use", id: `toolu_scripted_${request.n}`, name: turn.tool, input: turn.input };
    const stop = "text" in turn ? "end_turn" : "tool_use";
    const usage = { input_tokens: Math.ceil(text.length / 4), output_tokens: 5 };
    if (!body.stream) {
      return json(res, { id, type: "message", role: "assistant", model: request.model, content: [block], stop_reason: stop, stop_sequence: null, usage });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event("message_start", { message: { id, type: "message", role: "assistant", model: request.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
    if (block.type === "text") {
      event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: block.text } });
    } else {
      event("content_block_start", { index: 0, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    }
    event("content_block_stop", { index: 0 });
    event("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
    event("message_stop", {});
    res.end();
  }

  const loopback = await serveLoopback(answer, (error) => ({ type: "error", error: { type: "api_error", message: String(error) } }));
  return { url: `${loopback.origin}`, proxy: loopback.origin, requests, egress: loopback.egress, close: loopback.close };
}

/** The text of every text block the user's side sent, in order (prompts, and Claude Code's own reminders among them). */
export function userTexts(request: Pick<MessagesRequest, "messages">): string[] {
  return request.messages.filter((message) => message.role === "user").flatMap((message) => blocksOf(message.content))
    .filter((block) => block.type === "text" && typeof block.text === "string").map((block) => block.text as string);
}

/** The results of tool calls the conversation holds, oldest first: what each call was answered. */
export function toolResults(request: Pick<MessagesRequest, "messages">): { id: string; text: string; isError: boolean }[] {
  return request.messages.filter((message) => message.role === "user").flatMap((message) => blocksOf(message.content))
    .filter((block) => block.type === "tool_result")
    .map((block) => ({ id: String(block.tool_use_id), text: resultText(block.content), isError: block.is_error === true }));
}

/** Whether the request's last message answers a tool call (the model's turn goes on) rather than bringing a new prompt. */
export function answersTool(request: Pick<MessagesRequest, "messages">): boolean {
  const last = request.messages.at(-1);
  return last?.role === "user" && blocksOf(last.content).some((block) => block.type === "tool_result");
}

/** The newest prompt the owner (or the worker's start) typed: the last user text that is not one of Claude Code's reminders. */
export function lastPrompt(request: Pick<MessagesRequest, "messages">): string {
  return userTexts(request).filter((text) => !text.trimStart().startsWith("<")).at(-1) ?? "";
}

type Block = { type?: string; [field: string]: unknown };

function blocksOf(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter((block): block is Block => typeof block === "object" && block !== null) : [];
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  return blocksOf(content).map((block) => (typeof block.text === "string" ? block.text : "")).join("\n");
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
}

/** A key in Anthropic's shape that no account has: Claude Code needs one to start, and this one opens nothing. */
export const STAND_IN_API_KEY = "sk-ant-api03-robot-army-scripted-stand-in-not-a-key-0000";

/**
 * The Claude Code CLI the project pins (devDependency `@anthropic-ai/claude-code`): its native
 * binary as the platform's package ships it, which needs no install script.
 */
export function claudeCodeBinary(): string {
  const arch = process.arch === "arm64" ? "arm64" : "x64";
  const binary = join(PROJECT_ROOT, "node_modules", "@anthropic-ai", `claude-code-linux-${arch}`, "claude");
  if (!existsSync(binary)) throw new Error(`Claude Code is not installed at ${binary}: run npm install`);
  return binary;
}

/**
 * A home folder for Claude Code as a user who finished its first-run questions would have
 * it: onboarding done and the stand-in key accepted, so it opens straight at its prompt (or at
 * a folder's trust question, which stays the owner's). Returns the variables that make a
 * Claude Code use it and the stand-in API, with every other request sent to the refusing proxy.
 */
export function claudeCodeHome(dir: string, api: Pick<AnthropicApi, "url" | "proxy">): Record<string, string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, ".claude.json"), JSON.stringify({
    hasCompletedOnboarding: true, theme: "dark",
    customApiKeyResponses: { approved: [STAND_IN_API_KEY.slice(-20)], rejected: [] },
  }, null, 2) + "\n", { mode: 0o600 });
  return {
    HOME: dir, ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: STAND_IN_API_KEY,
    HTTPS_PROXY: api.proxy, HTTP_PROXY: api.proxy, https_proxy: api.proxy, http_proxy: api.proxy,
    NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1", DISABLE_ERROR_REPORTING: "1",
  };
}
