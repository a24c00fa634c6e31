/**
 * The parts of an answer (docs/protocol.md, "Answers in parts"), as the widget reads them. Kept here
 * while the browser SDK's messages do not type `parts` yet; every field is checked before use, since
 * a part comes from a bot.
 */
export type ToolState =
  | 'input-streaming'
  | 'input-available'
  | 'approval-requested'
  | 'approval-responded'
  | 'output-available'
  | 'output-error'
  | 'output-denied';

export interface Approval {
  id: string;
  approved?: boolean;
  reason?: string;
  decidedBy?: string;
  ts?: string;
}

export type Part =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | {
      type: 'tool';
      toolCallId: string;
      toolName: string;
      state: ToolState;
      input?: unknown;
      output?: unknown;
      errorText?: string;
      title?: string;
      approval?: Approval;
    }
  | { type: 'source'; sourceId: string; url?: string; title?: string; mediaType?: string; filename?: string }
  | { type: 'file'; url: string; mediaType: string; filename?: string; size?: number }
  | { type: 'data'; name: string; id?: string; data: unknown }
  | { type: 'suggestions'; items: { text: string; value?: string }[] };

/** A renderer an integrator registers for `data` parts of one `name`: returns the node to show. */
export type DataRenderer = (data: unknown, part: Extract<Part, { type: 'data' }>) => Node | null | undefined;
