import type { AgentApproval, AgentInboundMessage, RelayAgent } from '../sdk/agent';

/** What the demo bot answers "parts" (or "tools") with: every part type of docs/parts.md in one answer. */
export const PARTS_REQUEST = /^\s*(parts|tools)\s*[.!?]?\s*$/i;

/** The image of the file part: served by the hub itself (`GET /demo/parts.svg`), nothing from a third party. */
export const PARTS_IMAGE_PATH = '/demo/parts.svg';
export const PARTS_IMAGE = `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="160" viewBox="0 0 320 160">
<rect width="320" height="160" rx="16" fill="#1d4ed8"/>
<circle cx="70" cy="80" r="36" fill="#facc15"/>
<path d="M150 104h110a22 22 0 0 0 0-44 34 34 0 0 0-64-10 26 26 0 0 0-46 54z" fill="#e0e7ff"/>
<text x="160" y="146" font-family="sans-serif" font-size="14" fill="#e0e7ff" text-anchor="middle">Paris: 21 °C, sunny</text>
</svg>
`;

export interface PartsShowOptions {
  /** The origin browsers reach the hub at, for the image and the sources. */
  publicUrl: string;
  /** Pause between streamed pieces, in milliseconds. */
  wordMs: number;
  /** How long the answer waits for the user's decision before it ends and leaves it to onApproval. */
  approvalWaitMs: number;
}

/**
 * The demo's tour of parts: a reasoning part, a tool call whose input streams in and which asks
 * the user's approval (and runs on approval, or ends denied), two sources, an image, a data part
 * and suggestions. A decision that comes after the answer ended is answered by `onApproval` with a
 * reply of its own, as a bot whose runtime restarted would.
 */
export class PartsShow {
  /** Answers waiting for a decision, by approval id. */
  private readonly waiting = new Map<string, (approval: AgentApproval) => void>();

  constructor(
    private readonly runtime: RelayAgent,
    private readonly options: PartsShowOptions,
  ) {
    runtime.onApproval(async (approval) => {
      const waiter = this.waiting.get(approval.id);
      if (waiter) return waiter(approval);
      await runtime.reply(approval.from, {
        parts: [{ type: 'text', text: approval.approved ? 'Approved: it is 21 °C and sunny in Paris.' : 'Denied: I did not look it up.' }],
        replyTo: approval.messageId,
      });
    });
  }

  async answer(m: AgentInboundMessage, signal: AbortSignal): Promise<void> {
    const { publicUrl, wordMs } = this.options;
    const s = await this.runtime.stream(m.from, { replyTo: m.id });
    const thinking = s.reasoning();
    for (const word of words(
      'The user wants to see every part. I will look up the weather with a tool, cite where it comes from, show a picture and suggest what to ask next.',
    )) {
      await pause(wordMs, signal);
      await thinking.write(word);
    }
    await s.write('Here is every kind of part this hub carries. ');
    const call = s.tool({ toolName: 'get_weather', title: 'Weather in Paris' });
    for (const piece of ['{"city":', '"Paris",', '"unit":', '"celsius"}']) {
      await pause(wordMs, signal);
      await call.writeInput(piece);
    }
    await call.inputAvailable();
    const approvalId = await call.requestApproval();
    const decision = await this.decision(approvalId, signal);
    if (decision?.approved) {
      await call.output({ city: 'Paris', celsius: 21, sky: 'sunny' });
      await s.write('It is 21 °C and sunny in Paris. ');
    } else if (decision) {
      await call.denied();
      await s.write('You said no, so I did not look it up. ');
    } else if (!signal.aborted) {
      await s.write('Approve or deny whenever you like: I will answer then. ');
    }
    await s.source({ sourceId: 'api', url: `${publicUrl}/api`, title: 'REST API reference' });
    await s.source({ sourceId: 'asyncapi', url: `${publicUrl}/asyncapi`, title: 'Relay protocol (AsyncAPI)' });
    await s.file({ url: `${publicUrl}${PARTS_IMAGE_PATH}`, mediaType: 'image/svg+xml', filename: 'paris.svg' });
    await s.data('weather', { city: 'Paris', celsius: 21, sky: 'sunny' }, 'paris');
    await s.suggest(['parts', { text: 'Say hello', value: 'Hello!' }]);
    await s.end();
  }

  /** The decision, or undefined when none came within `approvalWaitMs` (or the user stopped the answer). */
  private decision(approvalId: string, signal: AbortSignal): Promise<AgentApproval | undefined> {
    return new Promise((resolve) => {
      const done = (approval?: AgentApproval) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiting.delete(approvalId);
        resolve(approval);
      };
      const onAbort = () => done();
      const timer = setTimeout(done, this.options.approvalWaitMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(approvalId, done);
    });
  }
}

/** The words of `text`, each with the spaces after it. */
export function words(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
