import net from 'node:net';

/** An answer as the raw sender reads it: its status, and its body's bytes (kept only when the status is not 2xx). */
export interface RawAnswer {
  status: number;
  bytes: number;
  body: Buffer | null;
}

interface Pending {
  request: Buffer;
  resolve: (answer: RawAnswer) => void;
  reject: (error: Error) => void;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * One keep-alive connection, one request at a time (no pipelining). The answer is read as bytes: its status line,
 * its Content-Length, then that many bytes. A chunked answer is refused (the benchmarks' routes send a length).
 */
class Connection {
  private socket: net.Socket | null = null;
  private current: Pending | null = null;
  private head: Buffer | null = null;
  private status = 0;
  private remaining = 0;
  private length = 0;
  private body: Buffer[] | null = null;

  constructor(
    private readonly port: number,
    private readonly onFree: (connection: Connection) => void,
  ) {}

  send(pending: Pending): void {
    this.current = pending;
    this.head = null;
    this.remaining = 0;
    if (!this.socket) this.socket = this.open();
    this.socket.write(pending.request);
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  private open(): net.Socket {
    const socket = net.connect({ port: this.port, host: '127.0.0.1', noDelay: true });
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    // A socket this connection closed itself (`fail`) is no longer its socket: its close is not a loss.
    const lost = (error?: Error) => {
      if (this.socket !== socket) return;
      this.socket = null;
      const current = this.current;
      this.current = null;
      if (!current) return;
      current.reject(error ?? new Error('the connection closed before the answer ended'));
      this.onFree(this);
    };
    socket.on('error', lost);
    socket.on('close', () => lost());
    return socket;
  }

  private read(chunk: Buffer): void {
    if (!this.current) return this.fail(new Error(`${chunk.length} bytes arrived with no request in flight`));
    let rest = chunk;
    if (this.head !== null || this.remaining === 0) {
      const head = this.head ? Buffer.concat([this.head, chunk]) : chunk;
      const end = head.indexOf(HEAD_END);
      if (end < 0) {
        this.head = head;
        return;
      }
      this.head = null;
      const text = head.toString('latin1', 0, end);
      this.status = Number(text.slice(9, 12));
      if (/\r\ntransfer-encoding:\s*chunked/i.test(text)) return this.fail(new Error('a chunked answer: the raw sender reads answers with a Content-Length only'));
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
      if (!length) return this.fail(new Error(`an answer without Content-Length: ${text.slice(0, 200)}`));
      this.length = Number(length[1]);
      this.remaining = this.length;
      this.body = this.status >= 300 ? [] : null;
      rest = head.subarray(end + HEAD_END.length);
      if (this.remaining === 0) return this.finish(rest);
    }
    const taken = Math.min(rest.length, this.remaining);
    this.body?.push(rest.subarray(0, taken));
    this.remaining -= taken;
    if (this.remaining === 0) this.finish(rest.subarray(taken));
  }

  private finish(extra: Buffer): void {
    if (extra.length > 0) return this.fail(new Error(`${extra.length} bytes after the answer's end`));
    const current = this.current!;
    this.current = null;
    current.resolve({ status: this.status, bytes: this.length, body: this.body ? Buffer.concat(this.body) : null });
    this.onFree(this);
  }

  private fail(error: Error): void {
    const current = this.current;
    this.current = null;
    this.close();
    current?.reject(error);
    this.onFree(this);
  }
}

/**
 * GET and POST requests over a fixed number of keep-alive connections on raw sockets: a benchmark's load generator that
 * costs the shared machine little (no HTTP client library between the schedule and the socket). A request waits
 * for a free connection when every one is busy. HTTP/1.1 to 127.0.0.1 only.
 */
export class RawHttpSender {
  private readonly free: Connection[] = [];
  private readonly waiting: Pending[] = [];
  private readonly all: Connection[] = [];

  constructor(
    private readonly port: number,
    connections: number,
  ) {
    for (let i = 0; i < connections; i++) {
      const connection = new Connection(port, (done) => this.release(done));
      this.all.push(connection);
      this.free.push(connection);
    }
  }

  get(path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
    return this.send(`GET ${path}`, headers, null);
  }

  /** A POST of a JSON body. */
  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
    return this.send(`POST ${path}`, { 'content-type': 'application/json', ...headers }, Buffer.from(JSON.stringify(body)));
  }

  private send(requestLine: string, headers: Record<string, string>, body: Buffer | null): Promise<RawAnswer> {
    const lines = [`${requestLine} HTTP/1.1`, `host: 127.0.0.1:${this.port}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
    if (body) lines.push(`content-length: ${body.length}`);
    const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    const request = body ? Buffer.concat([head, body]) : head;
    return new Promise((resolve, reject) => {
      const pending = { request, resolve, reject };
      const connection = this.free.pop();
      if (connection) connection.send(pending);
      else this.waiting.push(pending);
    });
  }

  close(): void {
    for (const connection of this.all) connection.close();
  }

  private release(connection: Connection): void {
    const next = this.waiting.shift();
    if (next) connection.send(next);
    else this.free.push(connection);
  }
}
