import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * A TCP link of limited bandwidth in front of a real server: every connection through it carries
 * at most `bytesPerSecond` in each direction, the bytes in order and none lost. It stands for a
 * Redis that keeps answering while what the hub sends or must read queues up (a busy machine, big
 * messages): replies come, late, one after another.
 */
export interface SlowLink {
  /** `redis://127.0.0.1:<port>` of the link. */
  url: string;
  close(): Promise<void>;
}

/** Passes bytes on in slices of `slice`, no faster than `bytesPerSecond`. */
class Paced extends Transform {
  private next = 0;

  constructor(
    private readonly bytesPerSecond: number,
    private readonly slice: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let offset = 0;
    const step = () => {
      if (offset >= chunk.length) return done();
      const piece = chunk.subarray(offset, offset + this.slice);
      offset += piece.length;
      this.push(piece);
      // The link's clock: each slice takes its share of a second after the one before it.
      this.next = Math.max(this.next, performance.now()) + (piece.length / this.bytesPerSecond) * 1000;
      setTimeout(step, Math.max(0, this.next - performance.now()));
    };
    step();
  }
}

export async function startSlowLink(targetPort: number, bytesPerSecond: number, slice = 16 * 1024): Promise<SlowLink> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = connect(targetPort, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      // Either end going away takes the other with it, as a broken link would.
      s.on('error', () => {});
      s.on('close', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(new Paced(bytesPerSecond, slice)).pipe(outbound);
    outbound.pipe(new Paced(bytesPerSecond, slice)).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
