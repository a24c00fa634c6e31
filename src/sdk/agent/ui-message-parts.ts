import type { MessagePart } from '../../protocol';
import type { UIMessageChunk, UIMessageChunkOf } from '../../protocol/ui-message-chunk';

/** A message part as the hub carries it (docs/ai-sdk.md#parts). */
export type HubPart = MessagePart;

/**
 * One step of building a streamed answer's parts. `key` names the part within the answer
 * (`text:<id>`, `reasoning:<id>`, `tool:<toolCallId>`, `source:<sourceId>`, `data:<name>:<id>`,
 * `file:<n>`); the stream that applies the steps maps it to the part's index.
 */
export type PartOp =
  | { op: 'open'; key: string; part: HubPart }
  | { op: 'append'; key: string; text: string }
  | { op: 'update'; key: string; fields: Record<string, unknown> };

/** How the UI message stream said the answer ended, when it did. */
export type UIStreamEnd = { status: 'complete' } | { status: 'cancelled'; reason?: string } | { status: 'error'; errorText: string };

/** What one chunk means for the answer: its part steps, and the end when the chunk ends it. */
export interface ChunkEffect {
  ops: PartOp[];
  end?: UIStreamEnd;
}

const NONE: ChunkEffect = { ops: [] };
const DATA_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const HTTP_URL = /^https?:\/\//i;

/**
 * Maps the AI SDK's UI message chunks to the hub's part steps, one chunk at a time; the table is in
 * docs/agent-sdk.md#ai-sdk-ui-message-streams. Stateful only to know which parts are open (a tool
 * call's `tool-input-available` without a `tool-input-start` opens its part; a data part with a
 * known `id` is replaced).
 */
export class UIMessagePartMapper {
  private readonly opened = new Set<string>();
  private files = 0;

  /** The part steps of `chunk`; chunks without a part give none (see the table). */
  map(chunk: UIMessageChunk): ChunkEffect {
    switch (chunk.type) {
      case 'text-start':
        return this.open(`text:${chunk.id}`, { type: 'text', text: '' });
      case 'text-delta':
        return this.append(`text:${chunk.id}`, chunk.delta, () => ({ type: 'text', text: '' }));
      case 'reasoning-start':
        return this.open(`reasoning:${chunk.id}`, { type: 'reasoning', text: '' });
      case 'reasoning-delta':
        return this.append(`reasoning:${chunk.id}`, chunk.delta, () => ({ type: 'reasoning', text: '' }));
      case 'tool-input-start':
        return this.open(`tool:${chunk.toolCallId}`, toolPart(chunk, { state: 'input-streaming', inputText: '' }));
      case 'tool-input-delta':
        return this.append(`tool:${chunk.toolCallId}`, chunk.inputTextDelta);
      case 'tool-input-available':
        return this.tool(chunk, { state: 'input-available', input: chunk.input });
      case 'tool-input-error':
        return this.tool(chunk, { state: 'output-error', input: chunk.input, errorText: chunk.errorText });
      case 'tool-approval-request':
        return this.update(`tool:${chunk.toolCallId}`, { state: 'approval-requested', approval: { id: chunk.approvalId } });
      case 'tool-output-available':
        return this.update(`tool:${chunk.toolCallId}`, { state: 'output-available', output: chunk.output });
      case 'tool-output-error':
        return this.update(`tool:${chunk.toolCallId}`, { state: 'output-error', errorText: chunk.errorText });
      case 'tool-output-denied':
        return this.update(`tool:${chunk.toolCallId}`, { state: 'output-denied' });
      case 'source-url':
        return this.open(
          `source:${chunk.sourceId}`,
          withOptional({ type: 'source', sourceId: chunk.sourceId, url: chunk.url }, { title: chunk.title }),
        );
      case 'source-document':
        return this.open(
          `source:${chunk.sourceId}`,
          withOptional(
            { type: 'source', sourceId: chunk.sourceId, title: chunk.title, mediaType: chunk.mediaType },
            { filename: chunk.filename },
          ),
        );
      case 'file':
        // The hub carries files by http(s) URL; a data: URL (an image the model generated) has no part.
        if (!HTTP_URL.test(chunk.url)) return NONE;
        return this.open(`file:${this.files++}`, { type: 'file', url: chunk.url, mediaType: chunk.mediaType });
      case 'error':
        return { ops: [], end: { status: 'error', errorText: chunk.errorText } };
      case 'abort':
        return { ops: [], end: chunk.reason === undefined ? { status: 'cancelled' } : { status: 'cancelled', reason: chunk.reason } };
      case 'finish':
        return { ops: [], end: { status: 'complete' } };
      case 'text-end':
      case 'reasoning-end':
      case 'reasoning-file':
      case 'custom':
      case 'tool-approval-response':
      case 'steering-message':
      case 'start-step':
      case 'finish-step':
      case 'reset-step':
      case 'start':
      case 'message-metadata':
        return NONE;
      default:
        return this.data(chunk);
    }
  }

  private data(chunk: UIMessageChunkOf<`data-${string}`>): ChunkEffect {
    // Transient data is for the UI of the moment, not the message (the AI SDK does not keep it either).
    if (chunk.transient === true) return NONE;
    const name = chunk.type.slice('data-'.length);
    if (!DATA_NAME.test(name)) throw new TypeError(`streamUIMessage: data part name "${name}" is not 1-64 characters of [A-Za-z0-9_-]`);
    if (chunk.id === undefined) return this.open(`data:${name}:#${this.opened.size}`, { type: 'data', name, data: chunk.data });
    const key = `data:${name}:${chunk.id}`;
    if (this.opened.has(key)) return { ops: [{ op: 'update', key, fields: { data: chunk.data } }] };
    return this.open(key, { type: 'data', name, id: chunk.id, data: chunk.data });
  }

  private tool(chunk: UIMessageChunkOf<'tool-input-available' | 'tool-input-error'>, fields: Record<string, unknown>): ChunkEffect {
    const key = `tool:${chunk.toolCallId}`;
    if (this.opened.has(key)) return { ops: [{ op: 'update', key, fields }] };
    return this.open(key, toolPart(chunk, fields));
  }

  private open(key: string, part: HubPart): ChunkEffect {
    if (this.opened.has(key)) return NONE;
    this.opened.add(key);
    return { ops: [{ op: 'open', key, part }] };
  }

  private append(key: string, text: string, open?: () => HubPart): ChunkEffect {
    if (text === '') return NONE;
    if (!this.opened.has(key)) {
      if (!open) throw new TypeError(`streamUIMessage: a delta for ${key}, which was never started`);
      return { ops: [...this.open(key, open()).ops, { op: 'append', key, text }] };
    }
    return { ops: [{ op: 'append', key, text }] };
  }

  private update(key: string, fields: Record<string, unknown>): ChunkEffect {
    if (!this.opened.has(key)) throw new TypeError(`streamUIMessage: ${key} was never started`);
    return { ops: [{ op: 'update', key, fields }] };
  }
}

function toolPart(chunk: { toolCallId: string; toolName: string; title?: string }, fields: Record<string, unknown>): HubPart {
  return withOptional({ type: 'tool', toolCallId: chunk.toolCallId, toolName: chunk.toolName, ...fields } as HubPart, {
    title: chunk.title,
  });
}

function withOptional(part: HubPart, optional: Record<string, unknown>): HubPart {
  const open = part as Record<string, unknown>;
  for (const [name, value] of Object.entries(optional)) if (value !== undefined) open[name] = value;
  return part;
}

/** The parts a sequence of steps builds (the answer as a client holds it at the end). */
export function foldPartOps(ops: Iterable<PartOp>): HubPart[] {
  const parts: HubPart[] = [];
  const index = new Map<string, number>();
  for (const op of ops) {
    if (op.op === 'open') {
      index.set(op.key, parts.length);
      parts.push({ ...op.part });
      continue;
    }
    const at = index.get(op.key);
    if (at === undefined) throw new TypeError(`foldPartOps: ${op.key} was never opened`);
    const part = parts[at] as Record<string, unknown>;
    if (op.op === 'update') Object.assign(part, op.fields);
    else if (part.type === 'tool') part.inputText = textOf(part.inputText) + op.text;
    else part.text = textOf(part.text) + op.text;
  }
  return parts;
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
