import { startHub } from '../helpers/hub';
import { waitFor } from '../helpers/wait';

/**
 * The built-in demo bot while the hub drains (SIGTERM, `npm start` then Ctrl-C): the hub closes agent
 * transports in batches and refuses every new handshake meanwhile, so a demo bot that reconnected
 * would only log refusals ("Unexpected server response: 400") until the hub exits.
 */
describe('the demo bot while the hub drains', () => {
  it('closes with its transport instead of reconnecting into refusals', async () => {
    const logLines: string[] = [];
    const t = await startHub({ DEMO_ENABLED: 'true', LOG_LEVEL: 'info' }, { logLines });
    try {
      await waitFor(() => logLines.some((line) => line.includes('demo echo agent connected')), 10_000, 'the demo bot');
      // The user's own bot: its transport closes one batch after the demo bot's (each 800 ms apart
      // with this grace), longer than the demo bot's first reconnect delay (under 500 ms).
      await t.agent('my-bot');
      await t.hub.drain(10_000);
      const demoLines = logLines
        .map((line) => JSON.parse(line) as { component?: string; msg: string })
        .filter((l) => l.component === 'demo');
      expect(demoLines.map((l) => l.msg)).toEqual(['demo echo agent connected']);
    } finally {
      await t.close();
    }
  });
});
