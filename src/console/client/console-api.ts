import { io, type Socket } from 'socket.io-client';
import { Namespaces, type HubToOperatorEvents, type OperatorToHubEvents } from '../../protocol';

/** One conversation of the list (the `getConversations` item, as JSON). */
export interface ConversationItem {
  clientId: string;
  control: 'bot' | 'waiting' | 'human';
  since?: string;
  reason?: string;
  summary?: string;
  operator?: { name: string };
  online: boolean;
  lastMessage?: { author: string; text: string; ts: string };
}

/** A refused REST call: its problem+json. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly holder?: { name: string },
  ) {
    super(detail);
  }
}

export type OperatorSocket = Socket<HubToOperatorEvents, OperatorToHubEvents>;

/** The hub's REST and realtime endpoints for one operator token and one bot, relative to the page. */
export class ConsoleApi {
  private readonly base = new URL('.', location.href);

  constructor(
    private readonly token: string,
    readonly agentId: string,
  ) {}

  /** The `/ws/operator` socket; Socket.IO reconnects it by itself. */
  connect(): OperatorSocket {
    return io(`${this.base.origin}${Namespaces.operator}`, {
      path: `${this.base.pathname}socket.io`,
      transports: ['websocket'],
      auth: { token: this.token, agentId: this.agentId },
    });
  }

  async conversations(): Promise<ConversationItem[]> {
    const page = await this.call<{ data: ConversationItem[] }>('GET', 'conversations?perPage=100');
    return page.data;
  }

  takeOver(clientId: string): Promise<unknown> {
    return this.call('POST', `conversations/${encodeURIComponent(clientId)}/takeover`);
  }

  release(clientId: string): Promise<unknown> {
    return this.call('POST', `conversations/${encodeURIComponent(clientId)}/release`);
  }

  reply(clientId: string, text: string): Promise<unknown> {
    return this.call('POST', `conversations/${encodeURIComponent(clientId)}/operator-messages`, { text });
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(`agents/${encodeURIComponent(this.agentId)}/${path}`, this.base);
    const res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json().catch(() => ({}))) as { code?: string; detail?: string; holder?: { name: string } };
    if (!res.ok) throw new ProblemError(res.status, json.code ?? String(res.status), json.detail ?? res.statusText, json.holder);
    return json as T;
  }
}
