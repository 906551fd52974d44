/**
 * The server under each scripted model API (anthropic-api.ts, openai-api.ts): it listens on
 * 127.0.0.1 at a free port, hands each request to the API's own `answer`, and is at once the
 * proxy its agent is given. A request meant for another host (an absolute URL, or a CONNECT)
 * is refused and listed in `egress`, so a test can show that nothing left the machine. Test
 * support only.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A listening loopback server. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`: the API's origin, and the proxy URL. */
  origin: string;
  /** Every request that tried to leave the machine through it: `CONNECT host:port` or `METHOD absolute-url`. */
  egress: string[];
  close(): Promise<void>;
}

/**
 * Serves `answer` on 127.0.0.1; a request it fails is answered 500 with `errorBody` of the
 * error (the API's own error shape), unless its answer had begun.
 */
export async function serveLoopback(
  answer: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  errorBody: (error: unknown) => unknown,
): Promise<LoopbackServer> {
  const egress: string[] = [];
  const server = createServer((req, res) => {
    // An absolute URL is a proxied request, meant for another host.
    if (/^[a-z]+:\/\//i.test(req.url ?? "")) {
      egress.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(403).end();
      return;
    }
    void answer(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody(error)));
    });
  });
  server.on("connect", (req, socket) => {
    egress.push(`CONNECT ${req.url}`);
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    egress,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
