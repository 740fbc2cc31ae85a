import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

export interface HttpServerLimits {
  /** A request whose headers and body have not all arrived this long after it began gets 408. */
  requestTimeoutSeconds: number;
  /** How long an idle keep-alive connection is kept. */
  keepAliveTimeoutMs: number;
}

/** Headers come in one or two packets: a client still sending them after this long is stalling. */
const headersTimeoutSeconds = 10;
/** How often Node looks for requests past their time (its default, 30 s, would add up to that much). */
const timeoutCheckMs = 1_000;
/** How long a refused connection may take to read its reply before it is cut. */
const lingerMs = 2_000;

/** A reply for an error Node's HTTP parser meets before the app sees a request. */
function clientErrorReply(code: string | undefined, requestTimeoutSeconds: number): { status: number; error: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, error: 'request headers are too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, error: 'chunk extensions are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: `the request did not arrive in full within ${requestTimeoutSeconds} s` };
    default:
      return { status: 400, error: 'bad request: the request could not be read' };
  }
}

function rawReply(status: number, error: string): string {
  const body = JSON.stringify({ error, code: status });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    // Readable by a page of any origin (docs/browser.md): the request's Origin is not at hand here.
    'Access-Control-Allow-Origin: *',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * The HTTP server of the service, with its time limits, and form A JSON replies (docs/decisions.md, Replies) for the
 * errors Node answers itself: headers over its limit (431), a request not received in time (408),
 * a request it cannot parse (400).
 */
export function createHttpServer(listener: RequestListener, limits: HttpServerLimits): Server {
  const server = createServer(
    {
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      requestTimeout: limits.requestTimeoutSeconds * 1_000,
      headersTimeout: Math.min(headersTimeoutSeconds, limits.requestTimeoutSeconds) * 1_000,
      connectionsCheckingInterval: timeoutCheckMs,
    },
    listener,
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A reply already begun on this connection cannot be followed by another: the connection ends.
    const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, error: text } = clientErrorReply(error.code, limits.requestTimeoutSeconds);
    socket.end(rawReply(status, text));
    setTimeout(() => socket.destroy(), lingerMs).unref();
  });
  return server;
}
