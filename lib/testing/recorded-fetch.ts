/**
 * A `fetch` that keeps every exchange it carries (method, URL, status, headers, body as
 * the wire had them), for Octokit's `request.fetch`: a test judges the answers afterwards
 * without changing how the client sends or reads them.
 */
import type { Exchange } from "./openapi.ts";

/** A recording fetch and what it has recorded so far. */
export interface RecordedFetch {
  fetch: typeof fetch;
  exchanges: Exchange[];
}

/** Wraps the global fetch; each answer's body is read from a clone, so the caller reads it as usual. */
export function recordedFetch(): RecordedFetch {
  const exchanges: Exchange[] = [];
  const recording = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const response = await fetch(request);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => void (headers[name.toLowerCase()] = value));
    exchanges.push({ method: request.method.toUpperCase(), url: request.url, status: response.status, headers, body: await response.clone().text() });
    return response;
  };
  return { fetch: recording as typeof fetch, exchanges };
}
