import { createServer, request as forwardRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A request the proxy received, read in full. */
export interface SeenRequest {
  /** Date.now() when its body was in. */
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Bytes as sent (compressed, with Content-Encoding: gzip). */
  sentBytes: number;
  /** The body's JSON, decompressed if it was gzipped. */
  json: unknown;
}

/** What the proxy does with a request. */
export type Plan =
  /** Passes it to the service and the reply back. */
  | { kind: 'forward' }
  /** Passes it to the service, waits for the whole reply, then closes the connection: the reply is lost. */
  | { kind: 'lose-reply' }
  /** Passes it to the service and its reply back only after `delayMs`. */
  | { kind: 'late-reply'; delayMs: number }
  /** Passes it on once `until` resolves. */
  | { kind: 'hold'; until: Promise<void> }
  /** Answers itself, the service never sees it. */
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body: unknown };

/**
 * An HTTP proxy in front of the real service that records each request and, as `plan` says, loses
 * replies, answers 503 or 429, holds requests, or (down/up) refuses connections.
 */
export class TestProxy {
  readonly seen: SeenRequest[] = [];
  /** Decides per request, given it and its index among those seen. */
  plan: (request: SeenRequest, index: number) => Plan = () => ({ kind: 'forward' });
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: URL,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(targetBaseUrl: string): Promise<TestProxy> {
    let proxy: TestProxy | null = null;
    const server = createServer((req, res) => {
      (proxy as TestProxy).handle(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new TestProxy(server, (server.address() as AddressInfo).port, new URL(targetBaseUrl));
    return proxy;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Stops listening and cuts open connections: connections are refused until up(). */
  async down(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  async up(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    if (this.server.listening) await this.down();
  }

  /** The JSON bodies of the requests seen, as arrays (bulk bodies). */
  bodies(): unknown[][] {
    return this.seen.map((request) => request.json as unknown[]);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
    const request: SeenRequest = {
      at: Date.now(),
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      sentBytes: raw.length,
      json: text ? JSON.parse(text) : null,
    };
    const index = this.seen.push(request) - 1;
    const plan = this.plan(request, index);
    if (plan.kind === 'answer') {
      res.writeHead(plan.status, { 'content-type': 'application/json', ...plan.headers }).end(JSON.stringify(plan.body));
      return;
    }
    if (plan.kind === 'hold') await plan.until;
    const reply = await this.forward(req, raw);
    if (plan.kind === 'lose-reply') {
      req.socket.destroy();
      return;
    }
    if (plan.kind === 'late-reply') await new Promise((resolve) => setTimeout(resolve, plan.delayMs));
    res.writeHead(reply.status, reply.headers).end(reply.body);
  }

  private forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const upstream = forwardRequest(
        new URL(req.url ?? '/', this.target),
        { method: req.method, headers: { ...req.headers, host: this.target.host, 'content-length': String(body.length) } },
        (reply) => {
          const chunks: Buffer[] = [];
          reply.on('data', (chunk: Buffer) => chunks.push(chunk));
          reply.on('end', () => resolve({ status: reply.statusCode ?? 502, headers: reply.headers, body: Buffer.concat(chunks) }));
          reply.on('error', reject);
        },
      );
      upstream.on('error', reject);
      upstream.end(body);
    });
  }
}
