import type { Socket } from 'node:net';
import WebSocket from 'ws';

export interface RawEngineOptions {
  /** Extra request headers of the upgrade (Origin, X-Forwarded-For). */
  headers?: Record<string, string>;
  /** Source address of the TCP connection, e.g. 127.0.0.2 (Linux routes 127.0.0.0/8 to loopback). */
  localAddress?: string;
}

/**
 * A bare engine.io v4 websocket, no socket.io-client: it sends exactly the frames a test writes,
 * answers pings, and never hangs up or reconnects by itself, so tests see what the hub does.
 */
export class RawEngine {
  readonly ws: WebSocket;
  readonly frames: string[] = [];
  /** Resolves once the engine.io open packet arrived; rejects if the upgrade is refused (`HTTP <status> <body>`). */
  readonly opened: Promise<void>;
  /** Resolves with the close code once the connection is gone, whoever closed it. */
  readonly closed: Promise<number>;
  private readonly waiters: { match: (frame: string) => boolean; resolve: (frame: string) => void }[] = [];

  constructor(url: string, options: RawEngineOptions = {}) {
    this.ws = new WebSocket(`${url.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`, {
      headers: options.headers,
      localAddress: options.localAddress,
    });
    this.closed = new Promise((resolve) => this.ws.on('close', (code) => resolve(code)));
    this.ws.on('error', () => {}); // a refused upgrade or a reset is seen through `opened` / `closed`
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => reject(new Error(`upgrade refused: HTTP ${res.statusCode} ${body}`)));
        res.on('error', () => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
      });
      this.ws.once('close', () => reject(new Error('closed before the engine.io open packet')));
      this.ws.on('message', (data, isBinary) => {
        const frame = isBinary ? `<binary ${(data as Buffer).length}>` : data.toString();
        this.frames.push(frame);
        if (frame.startsWith('0{')) resolve();
        if (frame === '2') this.send('3');
        for (const w of [...this.waiters]) {
          if (w.match(frame)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(frame);
          }
        }
      });
    });
    this.opened.catch(() => {});
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(frame: string | Buffer): void {
    if (this.isOpen) this.ws.send(frame);
  }

  /** Resolves with the first frame, already received or still to come, that `match` accepts. */
  next(match: (frame: string) => boolean): Promise<string> {
    const seen = this.frames.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Joins `namespace` with `auth`; resolves with the CONNECT (`40…`) or CONNECT_ERROR (`44…`) frame. */
  async join(namespace: string, auth: Record<string, unknown>): Promise<string> {
    await this.opened;
    this.send(`40${namespace},${JSON.stringify(auth)}`);
    return this.next((f) => f.startsWith(`40${namespace},`) || f.startsWith(`44${namespace},`));
  }

  /**
   * Sends `frames` in one TCP write (the socket is corked around them), as an attacker writing
   * many packets at once would.
   */
  sendTogether(frames: string[]): void {
    const tcp = this.tcp;
    tcp.cork();
    for (const frame of frames) this.send(frame);
    tcp.uncork();
  }

  /**
   * Stops reading from the TCP socket, like a peer that stops reading: what the hub sends fills the
   * kernel's buffers, then the hub's. `ws` resumes its socket after its own back-pressure, so
   * that is held off too until {@link RawEngine.resumeReading}.
   */
  pauseReading(): void {
    const tcp = this.tcp;
    const resume = tcp.resume.bind(tcp);
    tcp.resume = () => tcp;
    tcp.pause();
    this.resumeTcp = () => {
      tcp.resume = resume;
      tcp.resume();
    };
  }

  resumeReading(): void {
    this.resumeTcp?.();
    this.resumeTcp = undefined;
  }

  close(): void {
    this.ws.terminate();
  }

  private resumeTcp?: () => void;

  private get tcp(): Socket {
    return (this.ws as unknown as { _socket: Socket })._socket;
  }
}
