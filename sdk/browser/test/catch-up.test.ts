import { HISTORY_MAX_LIMIT, type ClientInboundMessage, type HistoryAck, type HistoryRequest } from '../../../src/protocol';
import { catchUp } from '../src/catch-up';
import { RelayChatError } from '../src/codes';

const message = (id: string, streaming?: true) =>
  ({ id, author: 'agent', text: id, ts: 'now', ...(streaming && { streaming }) }) as ClientInboundMessage;

/** A conversation log of ids m0…m9 that `load` pages like the hub's `history`, and what the inbox got. */
function conversation() {
  const log = Array.from({ length: 10 }, (_, i) => message(`m${i}`));
  const requests: HistoryRequest[] = [];
  const received: string[] = [];
  const load = (req: HistoryRequest): Promise<Extract<HistoryAck, { ok: true }>> => {
    requests.push(req);
    const end = req.before === undefined ? log.length : log.findIndex((m) => m.id === req.before);
    const start = Math.max(0, end - 3);
    return Promise.resolve({ ok: true, messages: log.slice(start, end), hasMore: start > 0 });
  };
  const inbox = { receive: (m: ClientInboundMessage, live: boolean) => received.push(`${m.id}${live ? ' live' : ''}`) };
  return { log, requests, received, load, inbox };
}

describe('catchUp: paging in what a cut replay left out', () => {
  it('pages back from the oldest replayed message to `from`, newer pages first, handing over what is newer than `from`', async () => {
    const { requests, received, load, inbox } = conversation();
    await expect(catchUp(load, () => true, 'm2', 'm8', inbox)).resolves.toBeUndefined();
    expect(requests).toEqual([
      { before: 'm8', limit: HISTORY_MAX_LIMIT },
      { before: 'm5', limit: HISTORY_MAX_LIMIT },
    ]);
    expect(received).toEqual(['m5', 'm6', 'm7', 'm3', 'm4']);
  });

  it('leaves open streams out (they come as message:start) and stops at the start of the log', async () => {
    const { log, received, load, inbox } = conversation();
    log[1] = message('m1', true);
    await expect(catchUp(load, () => true, 'gone', undefined, inbox)).resolves.toBeUndefined();
    expect(received).toEqual(['m7', 'm8', 'm9', 'm4', 'm5', 'm6', 'm2', 'm3', 'm0']);
  });

  it('resolves with the error of a refusal that is not retryable, having handed nothing over', async () => {
    const { received, inbox } = conversation();
    const refused = new RelayChatError('INVALID_PAYLOAD', 'history refused');
    await expect(
      catchUp(
        () => Promise.reject(refused),
        () => true,
        'm2',
        'm8',
        inbox,
      ),
    ).resolves.toBe(refused);
    expect(received).toEqual([]);
  });

  it('asks again after a retryable refusal', async () => {
    const { requests, received, load, inbox } = conversation();
    let refusals = 1;
    const limited = (req: HistoryRequest) =>
      refusals-- > 0 ? Promise.reject(new RelayChatError('RATE_LIMITED', 'read budget spent', true)) : load(req);
    await expect(catchUp(limited, () => true, 'm6', 'm8', inbox)).resolves.toBeUndefined();
    expect(requests).toEqual([{ before: 'm8', limit: HISTORY_MAX_LIMIT }]);
    expect(received).toEqual(['m7']);
  });

  it('stops without an error once the connection is gone', async () => {
    const { requests, received, inbox } = conversation();
    let live = true;
    const lost = (req: HistoryRequest) => {
      requests.push(req);
      live = false;
      return Promise.reject(new RelayChatError('NOT_CONNECTED', 'not connected', true));
    };
    await expect(catchUp(lost, () => live, 'm2', 'm8', inbox)).resolves.toBeUndefined();
    expect(requests).toHaveLength(1);
    expect(received).toEqual([]);
  });
});
