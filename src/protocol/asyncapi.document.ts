import type { TSchema } from '@sinclair/typebox';
import { CodeCatalogues } from './code.schema';
import { serversFor } from './asyncapi.servers';
import { HandshakeNames, ProtocolRegistry, type EventSpec, type NamespaceSpec } from './protocol.registry';

/** A JSON object of the document. */
type Json = Record<string, unknown>;

/** The AsyncAPI version the document declares. */
export const ASYNCAPI_VERSION = '3.0.0';

const DESCRIPTION = `The realtime protocol of relay-hub: Socket.IO v4 namespaces between browser chat clients
(\`/ws/client\`) and agent runtimes (\`/ws/agent\`), relayed by the hub. Generated from the schemas the hub
validates payloads with.

- **Point of view**: operations are the hub's. \`receive\` = a peer (client C or agent runtime A) emits the
  event to the hub (C→H, A→H); \`send\` = the hub emits it to the peer (H→C, H→A). Each operation carries
  its direction as \`x-direction\`.
- **Events**: a message's \`name\` is the Socket.IO event name; its payload is the event's single argument.
- **Acks**: an event that takes a Socket.IO acknowledgement has an operation \`reply\` on the same channel;
  its message is the ack callback's single argument. Hub acks are \`{ ok: true, … }\` or
  \`{ ok: false, error: { code, message } }\`.
- **Handshake**: the \`connect\` operation of each channel: the \`auth\` object of the Socket.IO CONNECT
  packet, and its refusal, \`connect_error\` with \`err.data = { code, retryable }\`. Accepted clients get
  \`session\` first.
- **Codes**: the catalogues \`HandshakeCode\`, \`AckCode\` and \`SessionClosedCode\` (components.schemas) list
  every code with its description and \`x-retryable\` (whether retrying may succeed). A message's
  \`x-codes\` lists the codes that event can carry on that namespace.
- **Transport**: engine path \`/socket.io/\` under the server's pathname; SDKs use the \`websocket\`
  transport only, default Socket.IO clients (long-polling first) work too.

Human-readable: \`/asyncapi\` on the hub. REST API: \`/api\`.`;

/**
 * The AsyncAPI 3.0 document of the relay protocol, from {@link ProtocolRegistry}: one channel per
 * namespace, one operation per event and direction (from the hub's point of view), acks as
 * operation replies, the handshake as a `connect` operation, and every titled schema as a named
 * component. Pure: the same registry and URL give the same document.
 *
 * @example
 * const doc = asyncApiDocument('https://chat.example.com');
 */
export function asyncApiDocument(publicUrl: string, registry: Readonly<Record<string, NamespaceSpec>> = ProtocolRegistry): Json {
  const components = new ComponentSchemas();
  for (const { schema } of Object.values(CodeCatalogues)) components.add(schema);
  const channels: Json = {};
  const operations: Json = {};
  for (const [id, ns] of Object.entries(registry)) {
    const channel = new ChannelBuilder(id, ns, components);
    channel.handshake(operations);
    for (const [event, spec] of Object.entries(ns.receive)) channel.event(operations, 'receive', event, spec);
    for (const [event, spec] of Object.entries(ns.send)) channel.event(operations, 'send', event, spec);
    channels[id] = channel.toJson();
  }
  return {
    asyncapi: ASYNCAPI_VERSION,
    info: {
      title: 'relay-hub relay protocol',
      version: '1.0',
      description: DESCRIPTION,
      license: { name: 'MIT' },
    },
    defaultContentType: 'application/json',
    servers: serversFor(publicUrl),
    channels,
    operations,
    components: { schemas: components.toJson() },
  };
}

/** The operation id of an event: `clientReceiveAuthRefresh`, `agentSendMessage`. */
export function operationId(channel: string, action: 'send' | 'receive', event: string): string {
  const words = [channel, action, ...event.split(/[^A-Za-z0-9]+/)];
  return words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

/** Messages and operations of one namespace. */
class ChannelBuilder {
  private readonly messages: Json = {};

  constructor(
    private readonly id: string,
    private readonly ns: NamespaceSpec,
    private readonly components: ComponentSchemas,
  ) {}

  handshake(operations: Json): void {
    const auth = this.message(this.ns.auth, { name: HandshakeNames.connect, summary: 'The auth object of the handshake.' });
    const refusal = this.message(this.ns.refusal, {
      name: HandshakeNames.refusal,
      summary: 'A refused handshake: err.data of connect_error. The hub then closes the transport.',
      'x-codes': this.ns.refusalCodes,
    });
    operations[operationId(this.id, 'receive', HandshakeNames.connect)] = {
      action: 'receive',
      channel: this.ref(),
      title: `${this.ns.peer}→H connect`,
      summary: `Handshake: the peer connects to ${this.ns.path} with this auth object.`,
      description: 'Refused with connect_error (reply); accepted peers get no reply message but the events of this channel.',
      messages: [auth],
      reply: { channel: this.ref(), messages: [refusal] },
      'x-direction': `${this.ns.peer}→H`,
    };
  }

  event(operations: Json, action: 'send' | 'receive', event: string, spec: EventSpec): void {
    const direction = action === 'receive' ? `${this.ns.peer}→H` : `H→${this.ns.peer}`;
    const message = this.message(spec.payload, {
      name: event,
      summary: spec.summary,
      ...(spec.codes ? { 'x-codes': spec.codes } : {}),
    });
    const operation: Json = {
      action,
      channel: this.ref(),
      title: `${direction} ${event}`,
      summary: spec.summary,
      messages: [message],
      'x-direction': direction,
    };
    if (spec.ack) {
      const who = action === 'receive' ? 'the hub' : 'the peer';
      const ack = this.message(spec.ack, { summary: `The ack ${who} answers ${event} with.` });
      operation.reply = { channel: this.ref(), messages: [ack] };
    }
    operations[operationId(this.id, action, event)] = operation;
  }

  toJson(): Json {
    return { address: this.ns.path, title: this.ns.title, description: this.ns.description, messages: this.messages };
  }

  private ref(): Json {
    return { $ref: `#/channels/${this.id}` };
  }

  /** Adds a message keyed by its payload's title (once per channel) and returns a reference to it. */
  private message(payload: TSchema, fields: Json): Json {
    const key = titleOf(payload);
    const message = { ...fields, title: key, contentType: 'application/json', payload: this.components.ref(payload) };
    const existing = this.messages[key];
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(message)) {
      throw new Error(`two messages on channel ${this.id} have the payload ${key}; give one payload schema another title`);
    }
    this.messages[key] = message;
    return { $ref: `#/channels/${this.id}/messages/${key}` };
  }
}

/**
 * Named schemas: every schema with a `title` becomes `components.schemas[title]`, and every place
 * it occurs (in payloads, acks, other components) refers to it, so generators get one type per
 * title. Two different schemas with one title are an error.
 */
class ComponentSchemas {
  private readonly named = new Map<string, { json: string; schema: Json }>();

  /** Registers `schema` and the titled schemas inside it; returns a `$ref` to it. */
  ref(schema: TSchema): Json {
    this.add(schema);
    return { $ref: `#/components/schemas/${titleOf(schema)}` };
  }

  add(schema: TSchema): void {
    this.name(plain(schema), true);
  }

  toJson(): Json {
    const sorted = [...this.named.entries()].sort(([a], [b]) => a.localeCompare(b));
    return Object.fromEntries(sorted.map(([title, { schema }]) => [title, schema]));
  }

  /** `value` with every titled schema below it (and itself unless `root`) replaced by a `$ref`. */
  private name(value: unknown, root = false): unknown {
    if (Array.isArray(value)) return value.map((item) => this.name(item));
    if (value === null || typeof value !== 'object') return value;
    const object = value as Json;
    // Examples are values, not schemas: a `title` in one (a source part's) names no component.
    const inner = Object.fromEntries(Object.entries(object).map(([key, child]) => [key, key === 'examples' ? child : this.name(child)]));
    const title = object.title;
    if (typeof title !== 'string') return inner;
    const json = JSON.stringify(object);
    const known = this.named.get(title);
    if (known && known.json !== json) throw new Error(`two different schemas are titled ${title}`);
    if (!known) this.named.set(title, { json, schema: inner });
    return root ? inner : { $ref: `#/components/schemas/${title}` };
  }
}

function titleOf(schema: TSchema): string {
  if (typeof schema.title !== 'string') throw new Error(`every payload and ack schema needs a title: ${JSON.stringify(schema)}`);
  return schema.title;
}

/** The schema as plain JSON: TypeBox's symbol-keyed markers do not belong on the wire. */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema));
}
