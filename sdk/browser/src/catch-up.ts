import { HISTORY_MAX_LIMIT, type HistoryRequest } from '../../../src/protocol';
import type { RelayChatError } from './codes';
import { historyPage, type HistoryPage } from './history';
import type { Inbox } from './inbox';

/** Refused pages in a row after which a catch-up gives up, and the pause after the first. */
const CATCH_UP_RETRIES = 8;
const CATCH_UP_PAUSE_MS = 500;

/**
 * After a replay cut to the hub's byte bound (`session.hasMore`): loads history pages back from the
 * oldest replayed message (`before`; the newest when none was) until a page reaches `from`, handing
 * the missed messages to the inbox as paged ones, newer pages first. A refused page (`RATE_LIMITED`:
 * the hub's read budgets) is asked again after a pause.
 *
 * Resolves once a page reached `from`, or as soon as `live()` says the connection it loads over is
 * gone (the next connect resumes from `from`); resolves with the error of a failure that persists,
 * which the caller reports as a `gap`, as an uncut replay's would be.
 */
export async function catchUp(
  load: (request: HistoryRequest) => Promise<Parameters<typeof historyPage>[0]>,
  live: () => boolean,
  from: string,
  before: string | undefined,
  inbox: Pick<Inbox, 'receive'>,
): Promise<RelayChatError | undefined> {
  for (let failures = 0; live();) {
    let page: HistoryPage;
    try {
      // `before: undefined` does not survive JSON: the first page is the newest.
      page = historyPage(await load({ before, limit: HISTORY_MAX_LIMIT }));
    } catch (err) {
      if (!live()) return;
      if (!(err as RelayChatError).retryable || ++failures > CATCH_UP_RETRIES) return err as RelayChatError;
      await new Promise((resolve) => setTimeout(resolve, CATCH_UP_PAUSE_MS * failures));
      continue;
    }
    failures = 0;
    const at = page.messages.findIndex((m) => m.id === from);
    // Open streams come as `message:start` after the replay; the log holds them at their start.
    for (const m of at === -1 ? page.messages : page.messages.slice(at + 1)) if (!m.streaming) inbox.receive(m, false);
    if (at !== -1 || !page.hasMore || !page.messages.length) return;
    before = page.messages[0].id;
  }
}
