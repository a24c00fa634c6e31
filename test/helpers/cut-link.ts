import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP link in front of a real Redis that can cut one connection on the server's side only:
 * Redis drops that client (and its subscriptions) while the hub's end of it stays open and
 * `ready`, as when a connection dies somewhere between them and the hub has not heard yet.
 */
export interface CutLink {
  /** `redis://127.0.0.1:<port>` of the link. */
  url: string;
  /**
   * Closes the server side of the open connections whose first bytes name `connectionName` (the
   * CLIENT SETNAME ioredis sends first); their hub side stays open until {@link closeHubSide}.
   * Returns how many it cut.
   */
  cutServerSide(connectionName: string): number;
  /** Closes the hub side of the connections cut before: now the hub hears of it. */
  closeHubSide(): void;
  close(): Promise<void>;
}

export async function startCutLink(targetPort: number): Promise<CutLink> {
  const links = new Set<{ inbound: Socket; outbound: Socket; hello: string; cut: boolean }>();
  const server: Server = createServer((inbound) => {
    const outbound = connect(targetPort, '127.0.0.1');
    const link = { inbound, outbound, hello: '', cut: false };
    links.add(link);
    inbound.on('data', (chunk: Buffer) => {
      if (link.hello.length < 256) link.hello += chunk.toString('latin1');
      if (!link.cut) outbound.write(chunk);
    });
    outbound.on('data', (chunk: Buffer) => inbound.write(chunk));
    for (const s of [inbound, outbound]) s.on('error', () => {});
    inbound.on('close', () => {
      outbound.destroy();
      links.delete(link);
    });
    // Redis going away reaches the hub, unless the link cut it on purpose.
    outbound.on('close', () => link.cut || inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    cutServerSide(connectionName) {
      let cut = 0;
      for (const link of links) {
        if (link.cut || !link.hello.includes(connectionName)) continue;
        link.cut = true;
        link.outbound.destroy();
        cut++;
      }
      return cut;
    },
    closeHubSide() {
      for (const link of links) if (link.cut) link.inbound.destroy();
    },
    async close() {
      for (const { inbound, outbound } of links) {
        inbound.destroy();
        outbound.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
