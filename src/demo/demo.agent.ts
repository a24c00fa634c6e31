import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logging/logger';
import { RelayAgent } from '../sdk/agent';
import { PARTS_REQUEST, PartsShow, pause, words as split } from './demo.parts';
import { DEMO_AGENT_ID } from './demo.routes';

export interface DemoAgentOptions {
  /** One of AGENT_API_KEYS. */
  apiKey: string;
  /** Default {@link DEMO_AGENT_ID}. */
  agentId?: string;
  logger: Logger;
  /** How long the bot "thinks" before it answers, in milliseconds. Default 400. */
  thinkMs?: number;
  /** Pause between the words of a streamed answer, in milliseconds. Default 40. */
  wordMs?: number;
  /** The origin browsers reach the hub at (PUBLIC_URL), for the image and sources of "parts". Default the loopback URL. */
  publicUrl?: string;
  /** How long the "parts" answer waits for the user's approval before it ends (under STREAM_IDLE_TIMEOUT_MS). Default 45 s. */
  approvalWaitMs?: number;
}

export interface DemoAgent {
  /** The runtime once started (after the server listens). */
  readonly agent: RelayAgent | undefined;
  /**
   * The hub drains: the bot keeps answering until the hub closes its transport, then closes instead
   * of reconnecting (the draining hub would refuse it until it exits).
   */
  drain(): void;
  close(): void;
}

/**
 * Runs the demo's echo bot in-process, connected to this hub over loopback with the agent SDK like
 * any external runtime. It starts once `httpServer` listens (the port is unknown before) and
 * answers every message with `echo: <text>` the way an LLM bot would: activity `thinking` first,
 * then the answer streamed word by word, stopped when the user presses Stop (the handler's signal);
 * plus a debug trace that only admins and operators see. Asked "parts" (or "tools"), it answers with
 * every part type instead (see {@link PartsShow}), including a tool call that waits for the user's
 * approval. A message with the word "human" makes it ask for a person (docs/handoff.md); while one
 * holds the conversation it answers nothing.
 *
 * @example
 * const demo = config.DEMO_ENABLED ? attachDemoAgent(httpServer, { apiKey: config.AGENT_API_KEYS[0], logger }) : undefined;
 * // on shutdown: demo?.close();
 */
export function attachDemoAgent(httpServer: HttpServer, options: DemoAgentOptions): DemoAgent {
  let agent: RelayAgent | undefined;
  let closed = false;
  let draining = false;
  const start = () => {
    if (closed) return;
    const url = loopbackUrl(httpServer.address() as AddressInfo);
    agent = new RelayAgent({
      url,
      apiKey: options.apiKey,
      agentId: options.agentId ?? DEMO_AGENT_ID,
    });
    const runtime = agent;
    runtime.on('error', (err) => options.logger.warn({ err }, 'demo agent error'));
    runtime.on('disconnect', () => {
      if (draining) runtime.close();
    });
    const thinkMs = options.thinkMs ?? 400;
    const wordMs = options.wordMs ?? 40;
    const parts = new PartsShow(runtime, {
      publicUrl: options.publicUrl ?? url,
      wordMs,
      approvalWaitMs: options.approvalWaitMs ?? 45_000,
    });
    runtime.onMessage(async (m, { signal }) => {
      // A person holds the conversation: the bot keeps quiet (docs/handoff.md).
      if (m.observed) return;
      if (/\bhuman\b/i.test(m.text)) {
        await runtime.debug({ step: 'handoff', received: m.text }, m.from);
        await runtime.reply(m.from, 'Let me find a person for you.', undefined, m.id);
        await runtime.handoff(m.from, { reason: 'The user asked for a person', summary: `Last message: ${m.text}` });
        return;
      }
      if (PARTS_REQUEST.test(m.text)) return parts.answer(m, signal);
      await runtime.activity(m.from, 'thinking');
      await pause(thinkMs, signal);
      if (signal.aborted) {
        // Stopped before the answer began: nothing to end, only the "thinking…" to clear.
        await runtime.activity(m.from, 'idle');
        return;
      }
      const { status } = await runtime.streamFrom(m.from, words(`echo: ${m.text}`, wordMs), {
        replyTo: m.id,
        ...(m.data ? { data: { echoed: m.data } } : {}),
      });
      await runtime.debug({ handledBy: 'demo echo agent', received: m.text, status }, m.from);
    });
    runtime.connect().then(
      () => options.logger.info({ agentId: options.agentId ?? DEMO_AGENT_ID }, 'demo echo agent connected'),
      (err: unknown) => options.logger.error({ err }, 'demo echo agent refused; the demo page will show the bot offline'),
    );
  };
  if (httpServer.listening) start();
  else httpServer.once('listening', start);

  return {
    get agent() {
      return agent;
    },
    drain() {
      draining = true;
      if (agent && !agent.connected) agent.close();
    },
    close() {
      closed = true;
      httpServer.off('listening', start);
      agent?.close();
    },
  };
}

/** The URL this process reaches its own server at, whatever interface it listens on. */
function loopbackUrl(address: AddressInfo): string {
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  if (wildcard) return `http://127.0.0.1:${address.port}`;
  return address.family === 'IPv6' ? `http://[${address.address}]:${address.port}` : `http://${address.address}:${address.port}`;
}

/** The words of `text` (each with the spaces after it), one every `wordMs`, like a model's tokens. */
async function* words(text: string, wordMs: number): AsyncGenerator<string> {
  for (const word of split(text)) {
    await pause(wordMs);
    yield word;
  }
}
