import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import type { TSchema } from '@sinclair/typebox';
import { configSchema } from '../../../src/config/config.schema';
import { publicUrl } from '../../../src/config/public-url';
import { AckCodes, Events, HandshakeCodes, Namespaces, SessionClosedCodes } from '../../../src/protocol';
import * as ackSchemas from '../../../src/protocol/ack.schema';
import { asyncApiDocument } from '../../../src/protocol/asyncapi.document';
import * as codeSchemas from '../../../src/protocol/code.schema';
import * as commonSchemas from '../../../src/protocol/common.schema';
import * as handshakeSchemas from '../../../src/protocol/handshake.schema';
import * as outboundSchemas from '../../../src/protocol/outbound.schema';
import { HandshakeNames } from '../../../src/protocol/protocol.registry';
import * as inboundSchemas from '../../../src/protocol/schemas';
import * as partSchemas from '../../../src/protocol/parts.schema';
import * as controlSchemas from '../../../src/protocol/control.schema';
import * as handoffSchemas from '../../../src/protocol/handoff.schema';

/**
 * docs/protocol.md ("The AsyncAPI document"): the AsyncAPI document of the relay protocol, as `npm run build` wrote it
 * (dist/asyncapi.json). It parses cleanly in the official parser, and it matches the protocol
 * both ways: every event, payload schema and code of src/protocol is in it, and it has nothing else.
 */
const ROOT = join(__dirname, '..', '..', '..');
const BUILT = join(ROOT, 'dist', 'asyncapi.json');

type Json = Record<string, any>;

/** docs/protocol.md ("Events"): operation → namespace, direction, event, payload and ack schema titles. */
const OPERATIONS: Record<string, [string, string, string, string, string | null]> = {
  clientReceiveConnect: [Namespaces.client, 'C→H', HandshakeNames.connect, 'ClientAuth', 'HandshakeErrorData'],
  clientReceiveMessage: [Namespaces.client, 'C→H', Events.message, 'ClientMessage', 'SendAck'],
  clientReceiveAuthRefresh: [Namespaces.client, 'C→H', Events.authRefresh, 'AuthRefresh', 'RefreshAck'],
  clientReceiveHistory: [Namespaces.client, 'C→H', Events.history, 'HistoryRequest', 'HistoryAck'],
  clientSendSession: [Namespaces.client, 'H→C', Events.session, 'SessionInfo', null],
  clientSendMessage: [Namespaces.client, 'H→C', Events.message, 'ClientInboundMessage', null],
  clientSendAgentStatus: [Namespaces.client, 'H→C', Events.agentStatus, 'AgentStatus', null],
  clientSendAuthExpiring: [Namespaces.client, 'H→C', Events.authExpiring, 'AuthExpiring', null],
  clientSendSessionClosed: [Namespaces.client, 'H→C', Events.sessionClosed, 'SessionClosed', null],
  clientSendDebug: [Namespaces.client, 'H→C', Events.debug, 'DebugTrace', null],
  clientReceiveStop: [Namespaces.client, 'C→H', Events.stop, 'StopRequest', 'StopAck'],
  clientReceiveFeedback: [Namespaces.client, 'C→H', Events.feedback, 'FeedbackRequest', 'FeedbackAck'],
  clientSendMessageStart: [Namespaces.client, 'H→C', Events.messageStart, 'MessageStart', null],
  clientSendMessageDelta: [Namespaces.client, 'H→C', Events.messageDelta, 'MessageDelta', null],
  clientSendMessageEnd: [Namespaces.client, 'H→C', Events.messageEnd, 'MessageEnd', null],
  clientSendAgentActivity: [Namespaces.client, 'H→C', Events.agentActivity, 'AgentActivity', null],
  agentReceiveConnect: [Namespaces.agent, 'A→H', HandshakeNames.connect, 'AgentAuth', 'HandshakeErrorData'],
  agentReceiveReply: [Namespaces.agent, 'A→H', Events.reply, 'AgentReply', 'SendAck'],
  agentReceiveDebug: [Namespaces.agent, 'A→H', Events.debug, 'AgentDebug', 'DebugAck'],
  agentSendMessage: [Namespaces.agent, 'H→A', Events.message, 'AgentInboundMessage', 'RuntimeAck'],
  agentSendSessionClosed: [Namespaces.agent, 'H→A', Events.sessionClosed, 'SessionClosed', null],
  agentReceiveStreamStart: [Namespaces.agent, 'A→H', Events.streamStart, 'StreamStart', 'StreamStartAck'],
  agentReceiveStreamDelta: [Namespaces.agent, 'A→H', Events.streamDelta, 'StreamDelta', 'StreamDeltaAck'],
  agentReceiveStreamEnd: [Namespaces.agent, 'A→H', Events.streamEnd, 'StreamEnd', 'StreamEndAck'],
  agentReceiveActivity: [Namespaces.agent, 'A→H', Events.activity, 'ActivityUpdate', 'ActivityAck'],
  agentSendStop: [Namespaces.agent, 'H→A', Events.stop, 'AgentStop', null],
  agentSendFeedback: [Namespaces.agent, 'H→A', Events.feedback, 'AgentFeedback', null],
  // docs/parts.md
  clientReceiveApproval: [Namespaces.client, 'C→H', Events.approval, 'ApprovalRequest', 'ApprovalAck'],
  clientSendMessagePart: [Namespaces.client, 'H→C', Events.messagePart, 'MessagePartEvent', null],
  agentReceiveStreamPart: [Namespaces.agent, 'A→H', Events.streamPart, 'StreamPart', 'StreamPartAck'],
  agentReceiveStreamUpdate: [Namespaces.agent, 'A→H', Events.streamUpdate, 'StreamUpdate', 'StreamUpdateAck'],
  agentSendApproval: [Namespaces.agent, 'H→A', Events.approval, 'AgentApproval', 'RuntimeApprovalAck'],
  // Human handoff (docs/handoff.md).
  clientSendConversationControl: [Namespaces.client, 'H→C', Events.conversationControl, 'ClientConversationControl', null],
  agentReceiveHandoff: [Namespaces.agent, 'A→H', Events.handoff, 'HandoffRequest', 'HandoffAck'],
  agentSendConversationControl: [Namespaces.agent, 'H→A', Events.conversationControl, 'ConversationControl', null],
  operatorReceiveConnect: [Namespaces.operator, 'O→H', HandshakeNames.connect, 'OperatorAuth', 'HandshakeErrorData'],
  operatorReceiveConversationWatch: [Namespaces.operator, 'O→H', Events.conversationWatch, 'WatchRequest', 'WatchAck'],
  operatorReceiveApproval: [Namespaces.operator, 'O→H', Events.approval, 'OperatorApprovalRequest', 'ApprovalAck'],
  operatorSendOperatorSession: [Namespaces.operator, 'H→O', Events.operatorSession, 'OperatorSession', null],
  operatorSendConversationControl: [Namespaces.operator, 'H→O', Events.conversationControl, 'ConversationControl', null],
  operatorSendConversationMessage: [Namespaces.operator, 'H→O', Events.conversationMessage, 'OperatorFeedMessage', null],
  operatorSendMessageStart: [Namespaces.operator, 'H→O', Events.messageStart, 'MessageStart', null],
  operatorSendMessageDelta: [Namespaces.operator, 'H→O', Events.messageDelta, 'MessageDelta', null],
  operatorSendMessagePart: [Namespaces.operator, 'H→O', Events.messagePart, 'MessagePartEvent', null],
  operatorSendMessageEnd: [Namespaces.operator, 'H→O', Events.messageEnd, 'MessageEnd', null],
  operatorSendDebug: [Namespaces.operator, 'H→O', Events.debug, 'DebugTrace', null],
};

/** Every TypeBox schema the protocol exports, by title: payloads, acks, handshake, codes, shared parts. */
function protocolSchemas(): Map<string, TSchema> {
  const modules = [
    inboundSchemas,
    outboundSchemas,
    ackSchemas,
    handshakeSchemas,
    codeSchemas,
    commonSchemas,
    controlSchemas,
    handoffSchemas,
    partSchemas,
  ];
  const byTitle = new Map<string, TSchema>();
  for (const module of modules) {
    for (const value of Object.values(module as Record<string, unknown>)) {
      if (value && typeof value === 'object' && typeof (value as TSchema).title === 'string')
        byTitle.set((value as TSchema).title!, value as TSchema);
    }
  }
  return byTitle;
}

describe('AsyncAPI document of the relay protocol', () => {
  let doc: Json;
  const resolve = (ref: string): Json =>
    ref
      .slice(2)
      .split('/')
      .reduce((node: Json, key) => node[key], doc);
  /** A schema of the document with every `$ref` replaced by what it points to. */
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline);
    if (value === null || typeof value !== 'object') return value;
    const object = value as Json;
    if (typeof object.$ref === 'string') return inline(resolve(object.$ref));
    return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, inline(v)]));
  };

  beforeAll(() => {
    doc = JSON.parse(readFileSync(BUILT, 'utf8')) as Json;
  });

  it('is what the generator makes of the protocol registry (generated at build time, never kept by hand)', () => {
    const defaults = { PUBLIC_URL: configSchema.PUBLIC_URL.default, HOST: configSchema.HOST.default, PORT: configSchema.PORT.default };
    expect(doc).toEqual(JSON.parse(JSON.stringify(asyncApiDocument(publicUrl(defaults)))));
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.servers).toEqual({ hub: expect.objectContaining({ host: 'localhost:3000', protocol: 'ws' }) });
  });

  it('parses in the official AsyncAPI parser with no error and no warning', async () => {
    const { document, diagnostics } = await new Parser().parse(readFileSync(BUILT, 'utf8'));
    const serious: number[] = [DiagnosticSeverity.Error, DiagnosticSeverity.Warning];
    const problems = diagnostics.filter((d) => serious.includes(d.severity));
    expect(problems.map((d) => `${d.code} at ${d.path.join('.')}: ${d.message}`)).toEqual([]);
    // The one remaining note recommends AsyncAPI 3.1; the hub publishes 3.0 (docs/protocol.md). Anything else is news.
    expect(diagnostics.map((d) => d.code)).toEqual(['asyncapi-latest-version']);
    expect(document).toBeDefined();
    expect(
      document!
        .operations()
        .all()
        .map((op) => op.id())
        .sort(),
    ).toEqual(Object.keys(OPERATIONS).sort());
    expect(
      document!
        .channels()
        .all()
        .map((ch) => ch.address())
        .sort(),
    ).toEqual([Namespaces.agent, Namespaces.client, Namespaces.operator].sort());
  });

  it('has exactly the operations of the protocol, each with its payload and ack', () => {
    const found = Object.fromEntries(
      Object.entries(doc.operations as Record<string, Json>).map(([id, op]) => {
        const message = resolve(op.messages[0].$ref);
        const ack = op.reply ? resolve(op.reply.messages[0].$ref) : null;
        const channel = resolve(op.channel.$ref);
        expect({ id, action: op.action }).toEqual({ id, action: op['x-direction'].endsWith('→H') ? 'receive' : 'send' });
        return [
          id,
          [
            channel.address,
            op['x-direction'],
            message.name,
            message.payload.$ref.split('/').pop(),
            ack && ack.payload.$ref.split('/').pop(),
          ],
        ];
      }),
    );
    expect(found).toEqual(OPERATIONS);
  });

  it('names every event of the protocol and no other', () => {
    const names = new Set<string>();
    for (const channel of Object.values(doc.channels as Record<string, Json>)) {
      for (const message of Object.values(channel.messages as Record<string, Json>)) if (message.name) names.add(message.name);
    }
    expect([...names].sort()).toEqual([...Object.values(Events), ...Object.values(HandshakeNames)].sort());
  });

  it('holds every schema of the protocol, equal to the one that validates, and no other', () => {
    const schemas = protocolSchemas();
    expect(Object.keys(doc.components.schemas).sort()).toEqual([...schemas.keys()].sort());
    for (const [title, schema] of schemas) {
      expect({ title, schema: inline(doc.components.schemas[title]) }).toEqual({ title, schema: JSON.parse(JSON.stringify(schema)) });
    }
  });

  it.each([
    ['HandshakeCode', HandshakeCodes],
    ['AckCode', AckCodes],
    ['SessionClosedCode', SessionClosedCodes],
  ])('lists the %s catalogue with retryable, code for code', (name, catalogue) => {
    const listed = (doc.components.schemas[name].anyOf as Json[]).map((c) => [
      c.const,
      { retryable: c['x-retryable'], description: c.description },
    ]);
    expect(Object.fromEntries(listed)).toEqual(catalogue);
    expect(listed).toHaveLength(Object.keys(catalogue).length);
  });

  it('says which codes each namespace refuses and closes sessions with, all from their catalogues', () => {
    const codesOf = (channel: string, key: string): string[] => doc.channels[channel].messages[key]['x-codes'];
    const refusals = [
      ...codesOf('client', 'HandshakeErrorData'),
      ...codesOf('agent', 'HandshakeErrorData'),
      ...codesOf('operator', 'HandshakeErrorData'),
    ];
    expect([...new Set(refusals)].sort()).toEqual(Object.keys(HandshakeCodes).sort());
    expect(codesOf('client', 'HandshakeErrorData')).toContain('ORIGIN_NOT_ALLOWED');
    expect(codesOf('agent', 'HandshakeErrorData')).toContain('API_KEY_INVALID');
    expect(codesOf('operator', 'HandshakeErrorData')).toContain('OPERATOR_REQUIRED');
    const closed = [...codesOf('client', 'SessionClosed'), ...codesOf('agent', 'SessionClosed')];
    expect(closed.sort()).toEqual(Object.keys(SessionClosedCodes).sort());
    expect(codesOf('agent', 'SessionClosed')).toEqual(['API_KEY_REVOKED']);
  });
});
