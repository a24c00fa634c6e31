import type { HistoryPage } from '../../store/conversation-log';

/** A history page cut to a number of bytes, and what it weighs. */
export interface FittedPage extends HistoryPage {
  /** UTF-8 bytes of the messages as JSON, about what they take on the wire. */
  bytes: number;
}

/**
 * Keeps the newest messages of `page` (oldest first) that fit in `budget` bytes, and always the
 * newest one, so paging on with `before` makes progress whatever the budget. A cut page says
 * `hasMore`: the client asks again from its oldest message, as it would for the next page.
 */
export function fitPage(page: HistoryPage, budget: number): FittedPage {
  const { messages } = page;
  let bytes = 0;
  let first = messages.length;
  while (first > 0) {
    // The comma between messages in the array.
    const size = Buffer.byteLength(JSON.stringify(messages[first - 1])) + 1;
    if (bytes + size > budget && first < messages.length) break;
    bytes += size;
    first--;
  }
  if (first === 0) return { ...page, bytes };
  return { messages: messages.slice(first), hasMore: true, bytes };
}
