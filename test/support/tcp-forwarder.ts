import { connect, createServer, type Socket } from 'node:net';

/** A TCP port of this process that relays every connection made to it to one target address. */
export interface TcpForwarder {
  /** The address it listens on, as given. */
  readonly host: string;
  /** The port it listens on, chosen by the system. */
  readonly port: number;
  /** Stops listening and ends every relayed connection (both sides). */
  close(): Promise<void>;
}

/**
 * Listens on `listenHost` (on a port of the system's choosing) and, for each connection made to it,
 * opens one to `target` and copies bytes both ways until either side ends. One connection in is one
 * connection out, so a server behind it sees one session per client connection, as without it.
 */
export async function startTcpForwarder(listenHost: string, target: { host: string; port: number }): Promise<TcpForwarder> {
  const open = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(target.port, target.host);
    const endBoth = (): void => {
      inbound.destroy();
      outbound.destroy();
    };
    for (const socket of [inbound, outbound]) {
      open.add(socket);
      socket.once('close', () => {
        open.delete(socket);
        endBoth();
      });
      // A reset or a refused target ends the pair; the other side sees its connection close.
      socket.once('error', endBoth);
    }
    // pipe() stops reading a side while the other cannot take more: memory stays bounded.
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((listening, fail) => {
    server.once('error', fail);
    server.listen({ host: listenHost, port: 0 }, () => {
      server.off('error', fail);
      listening();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`the forwarder on ${listenHost} has no TCP port`);
  return {
    host: listenHost,
    port: address.port,
    close: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        for (const socket of open) socket.destroy();
      }),
  };
}
