import type { UIMessageChunk as AiChunk } from 'ai';
import type { UIMessageChunk } from '../../src/protocol/ui-message-chunk';

// The hub's copy of the AI SDK's chunk type (src/protocol/ui-message-chunk.ts) against the pinned
// `ai`: the compiler (npm run typecheck, and ts-jest here) fails when they part.
type Extends<A, B> = [A] extends [B] ? true : false;
type Assert<T extends true> = T;

/** Every chunk the AI SDK produces is one the agent SDK's `streamUIMessage` reads. */
export type EveryAiChunkIsRead = Assert<Extends<AiChunk, UIMessageChunk>>;
/** Every chunk the transport produces is one `useChat` accepts. */
export type EveryChunkWrittenIsAnAiChunk = Assert<Extends<UIMessageChunk, AiChunk>>;

describe('UIMessageChunk', () => {
  it('names the same chunk types as the pinned ai', () => {
    const types = {
      'text-start': true,
      'text-delta': true,
      'text-end': true,
      'reasoning-start': true,
      'reasoning-delta': true,
      'reasoning-end': true,
      custom: true,
      error: true,
      'tool-input-start': true,
      'tool-input-delta': true,
      'tool-input-available': true,
      'tool-input-error': true,
      'tool-approval-request': true,
      'tool-approval-response': true,
      'tool-output-available': true,
      'tool-output-error': true,
      'tool-output-denied': true,
      'source-url': true,
      'source-document': true,
      file: true,
      'reasoning-file': true,
      'data-x': true,
      'steering-message': true,
      'start-step': true,
      'finish-step': true,
      'reset-step': true,
      start: true,
      finish: true,
      abort: true,
      'message-metadata': true,
    } satisfies Record<Exclude<AiChunk['type'], `data-${string}`> | 'data-x', true>;
    expect(Object.keys(types)).toHaveLength(30);
  });
});
