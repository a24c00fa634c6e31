import { applyPartChange, partsOf, textOfParts, type ClientInboundMessage, type MessagePart, type PartChange } from '../protocol';

/**
 * How a store keeps an open stream's changes (docs/parts.md, "Streams"): one line of JSON per
 * change, appended as it comes (`[index,"text"]` a delta, `{"p":part}` a new part, `{"u":index,"p":
 * fields}` an update), so a delta costs the store one append whatever the parts hold, and the parts
 * are rebuilt in TypeScript when a snapshot or the final is needed. JSON escapes line breaks inside
 * strings, so a line break always ends a change.
 */

/** One change as a store appends it. */
export function encodeChange(change: PartChange): string {
  switch (change.kind) {
    case 'delta':
      return `[${change.index},${JSON.stringify(change.text)}]\n`;
    case 'part':
      return `{"p":${JSON.stringify(change.part)}}\n`;
    case 'update':
      return `{"u":${change.index},"p":${JSON.stringify(change.patch)}}\n`;
  }
}

/** The parts and text of a stream that started as `start` and then made the changes `log` holds. */
export function replayChanges(start: ClientInboundMessage, log: string): { parts: MessagePart[]; text: string } {
  const parts = partsOf(start);
  let at = 0;
  while (at < log.length) {
    const end = log.indexOf('\n', at);
    const line = log.slice(at, end === -1 ? log.length : end);
    at = end === -1 ? log.length : end + 1;
    if (line === '') continue;
    applyPartChange(parts, decodeChange(line));
  }
  return { parts, text: textOfParts(parts) };
}

function decodeChange(line: string): PartChange {
  const value = JSON.parse(line) as [number, string] | { p: MessagePart | Record<string, unknown>; u?: number };
  if (Array.isArray(value)) return { kind: 'delta', index: value[0], text: value[1] };
  if (value.u !== undefined) return { kind: 'update', index: value.u, patch: value.p };
  return { kind: 'part', part: value.p as MessagePart };
}
