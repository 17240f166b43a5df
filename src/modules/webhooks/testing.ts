import http from 'node:http';
import https from 'node:https';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/**
 * A local webhook receiver for tests and the benchmark: records every
 * request (headers and raw body) and answers with what `respond` says.
 */
export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: any;
  receivedAt: number;
}

export type Responder = (request: ReceivedRequest, res: http.ServerResponse) => unknown;

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  respond: Responder;
  close(): Promise<void>;
}

/** `tls` makes it an https receiver with that key and certificate (PEM). */
export async function startReceiver(respond: Responder = (_r, res) => res.end('ok'), options: { tls?: { key: string; cert: string } } = {}): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const receiver: Receiver = { url: '', port: 0, received, respond, close: async () => undefined };
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = JSON.parse(rawBody);
      } catch {
        // Not JSON.
      }
      const record = { path: req.url ?? '/', headers: req.headers, rawBody, body, receivedAt: Date.now() };
      received.push(record);
      void receiver.respond(record, res);
    });
  };
  const server = options.tls ? https.createServer(options.tls, handle) : http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  receiver.port = port;
  receiver.url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** The receiver-side check documented in docs/webhooks.md. */
export function verifySignature(secret: string, header: string, rawBody: string, toleranceSeconds = 300, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const parts = Object.fromEntries(header.split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const timestamp = Number(parts.t);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${rawBody}`).digest('hex');
  const given = parts.v1 ?? '';
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}
