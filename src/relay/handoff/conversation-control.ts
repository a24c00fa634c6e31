import type { Logger } from '../../logging/logger';
import {
  ADMIN_CLIENT_ID,
  Authors,
  ControlStates,
  Events,
  type ClientConversationControl,
  type ClientInboundMessage,
  type ConversationControl as ControlChangeEvent,
  type HandoffRequest,
  type MessageContent,
  operatorMessage,
} from '../../protocol';
import type { ControlChange, ControlRecord, OperatorRef } from '../../store/control-store';
import type { MessageLog } from '../message-log';
import { isoNow, MessageStamper } from '../ids';
import type { RelayContext, RelayNamespaces } from '../relay.context';
import { Rooms, toRoom } from '../rooms';
import type { ConsoleFeed } from './console-feed';

/**
 * A change of control the caller may not make: someone else holds the conversation
 * (`CONVERSATION_HELD`, `current.operator` names them), or the operator does not hold it
 * (`CONVERSATION_NOT_HELD`).
 */
export class ControlConflictError extends Error {
  constructor(
    readonly code: 'CONVERSATION_HELD' | 'CONVERSATION_NOT_HELD',
    readonly current: ControlRecord,
  ) {
    super(
      code === 'CONVERSATION_HELD'
        ? `${current.operator?.name ?? 'An operator'} holds this conversation.`
        : 'This conversation is not held by you: take it over first.',
    );
    this.name = 'ControlConflictError';
  }
}

/** What caused a change, for metrics and the audit log. */
type Cause = 'handoff' | 'takeover' | 'release' | 'idle';

/** Who made a change, for the audit log. */
type Actor = { kind: 'agent' } | { kind: 'operator'; sub: string; admin: boolean } | { kind: 'hub' };

/**
 * Who answers each conversation (docs/handoff.md): the bot asks for a person, an operator takes
 * over, writes, hands back, or the idle sweep hands back. Every change is a compare-and-set in the
 * store (so it holds across replicas), then logged as a `system` message, told to the user's tabs,
 * the bot's runtimes and the bot's consoles, counted and written to the audit log.
 */
export class ConversationControl {
  private readonly stamps = new MessageStamper();
  private readonly audit: Logger;
  /** Stops the open streams of a conversation an operator took over (set by the relay, which owns the streams). */
  stopStreams: (agentId: string, clientId: string) => Promise<void> = async () => {};

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly messageLog: MessageLog,
    private readonly feed: ConsoleFeed,
  ) {
    this.audit = ctx.logger.child({ component: 'audit' });
  }

  read(agentId: string, clientId: string): Promise<ControlRecord> {
    return this.ctx.store.control.get(agentId, clientId);
  }

  /** The bot's conversations handed off (`waiting`, `human`), oldest change first. */
  listHandedOffOf(agentId: string): Promise<ControlRecord[]> {
    return this.ctx.store.control.listHandedOff(agentId);
  }

  /** The bot's conversations a person holds now: a broadcast skips them (docs/handoff.md). */
  async heldClients(agentId: string): Promise<string[]> {
    const handedOff = await this.ctx.store.control.listHandedOff(agentId);
    return handedOff.filter((r) => r.state === ControlStates.human).map((r) => r.clientId);
  }

  /**
   * `messages` (a page of history or a replay) without the bot's broadcasts made while a person
   * holds the conversation, so a reload or a reconnect does not bring what the live broadcast
   * skipped (docs/handoff.md). While `human` the bot's replies are refused, so a bot message
   * stamped after the takeover is a broadcast; a stream's final keeps its start's time. The
   * control state is read only for a page holding a bot message.
   */
  async withoutHeldBroadcasts<M extends { author: string; ts: string }>(agentId: string, clientId: string, messages: M[]): Promise<M[]> {
    if (!messages.some((m) => m.author === Authors.agent)) return messages;
    const record = await this.read(agentId, clientId);
    if (record.state !== ControlStates.human || record.since === null) return messages;
    const since = record.since;
    return messages.filter((m) => m.author !== Authors.agent || m.ts < since);
  }

  /** The clientIds with a tab connected to the bot, on every replica (admins left out). */
  async onlineClients(agentId: string): Promise<Set<string>> {
    const sockets = await this.nsp.client.in(Rooms.clients(agentId)).fetchSockets();
    const online = new Set<string>();
    for (const s of sockets) {
      const clientId = (s.data as { clientId?: unknown }).clientId;
      if (typeof clientId === 'string' && clientId !== ADMIN_CLIENT_ID) online.add(clientId);
    }
    return online;
  }

  /** The bot asks for a person: `bot` or `waiting` → `waiting` (reason and summary replaced). */
  askForPerson(agentId: string, { to, reason, summary }: HandoffRequest): Promise<ControlRecord> {
    return this.change(agentId, to, 'handoff', { kind: 'agent' }, (current) => {
      if (current.state === ControlStates.human) throw new ControlConflictError('CONVERSATION_HELD', current);
      const next: ControlChange = {
        state: ControlStates.waiting,
        since: current.state === ControlStates.waiting ? current.since : isoNow(),
      };
      if (reason !== undefined) next.reason = reason;
      if (summary !== undefined) next.summary = summary;
      return next;
    });
  }

  /** An operator takes the conversation over, from `bot` or `waiting`; taking over one's own is a no-op. */
  takeOver(agentId: string, clientId: string, operator: OperatorRef, admin: boolean): Promise<ControlRecord> {
    return this.change(agentId, clientId, 'takeover', { kind: 'operator', sub: operator.sub, admin }, (current) => {
      if (current.state === ControlStates.human) {
        if (current.operator?.sub === operator.sub) return null;
        throw new ControlConflictError('CONVERSATION_HELD', current);
      }
      const now = isoNow();
      return { state: ControlStates.human, since: now, ...context(current), operator, lastOperatorAt: now };
    });
  }

  /**
   * Hands the conversation back to the bot: its holder, or an admin, or any operator of the bot
   * while it is `waiting` (declining it). Handing back a conversation the bot answers is a no-op.
   */
  release(agentId: string, clientId: string, operator: OperatorRef, admin: boolean): Promise<ControlRecord> {
    return this.change(agentId, clientId, 'release', { kind: 'operator', sub: operator.sub, admin }, (current) => {
      if (current.state === ControlStates.bot) return null;
      if (current.state === ControlStates.human && current.operator?.sub !== operator.sub && !admin) {
        throw new ControlConflictError('CONVERSATION_HELD', current);
      }
      return { state: ControlStates.bot, since: isoNow() };
    });
  }

  /**
   * An operator's message to the user (content checked by the caller): only its holder may write. It restarts the idle count,
   * is logged as `author: 'operator'` with the operator's name, and reaches every tab of the user.
   */
  async operatorMessage(agentId: string, clientId: string, operator: OperatorRef, content: MessageContent): Promise<ClientInboundMessage> {
    await this.change(agentId, clientId, null, { kind: 'operator', sub: operator.sub, admin: false }, (current) => {
      if (current.state !== ControlStates.human) throw new ControlConflictError('CONVERSATION_NOT_HELD', current);
      if (current.operator?.sub !== operator.sub) throw new ControlConflictError('CONVERSATION_HELD', current);
      return { ...changeOf(current), lastOperatorAt: isoNow() };
    });
    const { id, ts } = this.stamps.next();
    const message = operatorMessage({ id, ts, agentId }, content, { name: operator.name });
    const room = Rooms.client(agentId, clientId);
    const publication = this.messageLog.enabled ? this.ctx.frames.message(room) : null;
    const published = await this.messageLog.record(agentId, clientId, message, true, publication);
    if (!published) toRoom(this.nsp.client, room, this.ctx.subscriptionsIntact()).emit(Events.message, message);
    this.feed.message(agentId, clientId, message, true);
    this.audit.info(
      { audit: 'conversation.operator-message', agentId, clientId, operator: operator.sub, messageId: id },
      'operator message',
    );
    return message;
  }

  /**
   * Hands back the conversations whose holder wrote nothing for HANDOFF_IDLE_TIMEOUT_S. Each is
   * re-read and changed by compare-and-set, so when every replica sweeps, one hands it back.
   */
  async sweepIdle(nowMs = Date.now()): Promise<number> {
    const idleMs = this.ctx.config.HANDOFF_IDLE_TIMEOUT_S * 1000;
    const due = await this.ctx.store.control.idleSince(nowMs - idleMs, 100);
    let released = 0;
    for (const ref of due) {
      const current = await this.read(ref.agentId, ref.clientId);
      if (current.state !== ControlStates.human) {
        await this.ctx.store.control.dropIdle(ref);
        continue;
      }
      if (Date.parse(current.lastOperatorAt ?? current.since ?? '') + idleMs > nowMs) continue;
      const result = await this.ctx.store.control.compareAndSet(ref.agentId, ref.clientId, current.version, {
        state: ControlStates.bot,
        since: isoNow(),
      });
      if (!result.ok) continue;
      await this.announce(result.record, 'idle', { kind: 'hub' }, current);
      released++;
    }
    return released;
  }

  /**
   * Reads, decides with `decide` (null: nothing to change; throws to refuse) and writes by
   * compare-and-set, again on the newer record when another change came first. `cause` null: a
   * change nobody is told about (the holder's last message time).
   */
  private async change(
    agentId: string,
    clientId: string,
    cause: Cause | null,
    actor: Actor,
    decide: (current: ControlRecord) => ControlChange | null,
  ): Promise<ControlRecord> {
    let current = await this.read(agentId, clientId);
    for (;;) {
      const next = decide(current);
      if (next === null) return current;
      const result = await this.ctx.store.control.compareAndSet(agentId, clientId, current.version, next);
      if (!result.ok) {
        current = result.current;
        continue;
      }
      if (cause !== null) await this.announce(result.record, cause, actor, current);
      return result.record;
    }
  }

  /** Logs, tells and counts a change that was written. */
  private async announce(record: ControlRecord, cause: Cause, actor: Actor, before: ControlRecord): Promise<void> {
    const { agentId, clientId, state } = record;
    this.ctx.metrics.controlChanges.inc({ to: state, cause });
    this.audit.info(
      {
        audit: 'conversation.control',
        agentId,
        clientId,
        from: before.state,
        to: state,
        cause,
        actor,
        operator: record.operator?.sub ?? before.operator?.sub,
      },
      'conversation control changed',
    );
    // The operator who joined (human), or who left (bot after human), named in the log.
    const named = record.operator ?? (state === ControlStates.bot ? before.operator : undefined);
    const { id, ts } = this.stamps.next();
    const entry: ClientInboundMessage = { id, ts, agentId, author: Authors.system, text: systemText(state, named?.name), control: state };
    if (named) entry.operator = { name: named.name };
    try {
      await this.messageLog.record(agentId, clientId, entry, true);
    } catch (err) {
      // The change itself is in shared state; only its line in the history is missing.
      this.ctx.handlerFailures.warn('control-log', err, 'a change of control could not be logged; it holds nevertheless');
    }
    const change: ControlChangeEvent = { agentId, clientId, control: state, since: record.since ?? ts };
    if (record.operator) change.operator = { name: record.operator.name };
    if (record.reason !== undefined) change.reason = record.reason;
    if (record.summary !== undefined) change.summary = record.summary;
    const toUser: ClientConversationControl = { agentId, control: state };
    if (record.operator) toUser.operator = { name: record.operator.name };
    this.nsp.client.to(Rooms.client(agentId, clientId)).emit(Events.conversationControl, toUser);
    this.nsp.agent.to(Rooms.runtimes(agentId)).emit(Events.conversationControl, change);
    this.feed.control(change);
    this.feed.message(agentId, clientId, entry, true);
    if (state === ControlStates.human) {
      await this.stopStreams(agentId, clientId).catch((err: unknown) =>
        this.ctx.handlerFailures.warn('control-stop-streams', err, 'open streams of a conversation taken over could not be stopped'),
      );
    }
  }
}

/** The reason and summary a change keeps. */
function context(record: ControlRecord): Pick<ControlChange, 'reason' | 'summary'> {
  return {
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    ...(record.summary === undefined ? {} : { summary: record.summary }),
  };
}

/** A record as a change that writes it again. */
function changeOf({ agentId: _a, clientId: _c, version: _v, ...rest }: ControlRecord): ControlChange {
  return rest;
}

/** The line history shows for a change. */
function systemText(state: ControlRecord['state'], name: string | undefined): string {
  if (state === ControlStates.human) return `${name ?? 'An operator'} joined the conversation`;
  if (state === ControlStates.waiting) return 'Waiting for a person';
  return name === undefined ? "You're back with the assistant" : `${name} left; you're back with the assistant`;
}
