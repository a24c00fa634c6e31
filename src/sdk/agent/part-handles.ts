import { randomUUID } from 'node:crypto';
import { RelayAgentError } from './agent-error';
import type { AgentApproval, PartPatch, ToolPart } from '../../protocol';

/** What a part handle needs of its stream. */
export interface PartStream {
  append(index: number, text: string): Promise<void>;
  update(index: number, fields: PartPatch): Promise<void>;
  decision(approvalId: string): Promise<AgentApproval>;
}

/** `stream.tool()` options: the tool's name, the model's id of the call (default a fresh one), a title for people. */
export interface NewToolCall {
  toolName: string;
  toolCallId?: string;
  title?: string;
}

/**
 * A part that grows by text: a reasoning part (`stream.reasoning()`).
 *
 * @example
 * const thinking = s.reasoning();
 * for await (const piece of model.reasoning) await thinking.write(piece);
 */
export class PartWriter {
  constructor(
    private readonly stream: PartStream,
    /** The part's index in the message. */
    readonly index: number,
  ) {}

  /** Appends `text`; coalesced, paced and held back like `stream.write`. */
  write(text: string): Promise<void> {
    return this.stream.append(this.index, text);
  }
}

/**
 * A tool call of a streamed answer (`stream.tool()`): its input streams in as the model writes it,
 * then becomes available; the bot may ask the user to approve the call; the call ends with an
 * output, an error, or denied. Each step moves the part's `state` forward on every tab.
 *
 * @example
 * const call = s.tool({ toolName: 'refund', title: 'Refund order 42' });
 * await call.writeInput('{"order":');
 * await call.writeInput('42}');
 * await call.inputAvailable(); // input: { order: 42 }, parsed from what was written
 * await call.requestApproval();
 * const { approved, reason } = await call.decision();
 * if (approved) await call.output(await refund(42));
 * else await call.denied();
 */
export class ToolCall {
  private raw = '';
  private approvalId: string | undefined;
  private decided: Promise<AgentApproval> | undefined;

  constructor(
    private readonly stream: PartStream,
    /** The part's index in the message. */
    readonly index: number,
    readonly toolCallId: string,
  ) {}

  /** The approval id once {@link requestApproval} was called. */
  get approval(): string | undefined {
    return this.approvalId;
  }

  /** Appends a piece of the input's JSON text, as the model streams it (state `input-streaming`). */
  writeInput(json: string): Promise<void> {
    this.raw += json;
    return this.stream.append(this.index, json);
  }

  /**
   * The input is complete (state `input-available`): `input`, or without it the JSON written with
   * {@link writeInput}, parsed (rejects with `INVALID_PAYLOAD` when that is not JSON).
   */
  inputAvailable(input?: unknown): Promise<void> {
    if (input === undefined) {
      try {
        input = this.raw === '' ? {} : JSON.parse(this.raw);
      } catch {
        return Promise.reject(new RelayAgentError('INVALID_PAYLOAD', `the input of tool call ${this.toolCallId} is not JSON`));
      }
    }
    return this.set({ state: 'input-available', input });
  }

  /**
   * Asks the user to approve the call (state `approval-requested`): every tab shows it, and any of
   * them may decide. Resolves with the approval id once the hub recorded the request. The decision
   * comes to `agent.onApproval` (also after this stream ended, or on another runtime after a
   * restart) and to {@link decision}.
   */
  async requestApproval(): Promise<string> {
    const id = (this.approvalId ??= randomUUID());
    this.decided ??= this.stream.decision(id);
    await this.set({ state: 'approval-requested', approval: { id } });
    return id;
  }

  /** The user's decision, once this runtime receives it. Call {@link requestApproval} first. */
  decision(): Promise<AgentApproval> {
    if (!this.decided) return Promise.reject(new RelayAgentError('INVALID_PAYLOAD', 'no approval was requested for this tool call'));
    return this.decided;
  }

  /** The call returned `output` (any JSON; state `output-available`). */
  output(output: unknown): Promise<void> {
    return this.set({ state: 'output-available', output });
  }

  /** The call failed (state `output-error`). */
  error(errorText: string): Promise<void> {
    return this.set({ state: 'output-error', errorText });
  }

  /** The user said no, and the call did not run (state `output-denied`). */
  denied(): Promise<void> {
    return this.set({ state: 'output-denied' });
  }

  private set(fields: Partial<Omit<ToolPart, 'type'>>): Promise<void> {
    return this.stream.update(this.index, fields);
  }
}
