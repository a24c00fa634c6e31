import type { MessageEnd, ToolPart } from '../../src/protocol';
import { DEMO_AGENT_ID } from '../../src/demo/demo.routes';
import { RelayChat, type MessageUpdate } from '../../sdk/browser/src';
import { nextChatEvent } from '../helpers/fake-client-hub';
import { startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { DEMO_PARTS_TYPES } from '../fixtures/answers';

/** The demo bot's tour of parts, through the hub and the browser SDK, as the demo page's user sees it. */
describe('the demo bot answers "parts" with every part type', () => {
  let t: TestHub;
  const chats: RelayChat[] = [];
  beforeAll(async () => {
    t = await startHub({ DEMO_ENABLED: 'true' });
  });
  afterAll(async () => {
    for (const chat of chats) chat.close();
    await t.close();
  });

  async function chatAs(sub: string): Promise<RelayChat> {
    const chat = new RelayChat({ url: t.url, agentId: DEMO_AGENT_ID, token: mintToken({ sub }), persist: false });
    chats.push(chat);
    await nextChatEvent(chat, 'agent:status', (s) => s.online);
    return chat;
  }
  const toolOf = (m: { parts?: MessageUpdate['parts'] }) => m.parts?.find((p): p is ToolPart => p.type === 'tool');

  it.each([
    [true, 'output-available'],
    [false, 'output-denied'],
  ])(
    'streams reasoning and a tool call that waits for approval (approved: %s → %s), then sources, an image, data and suggestions',
    async (approved, state) => {
      const chat = await chatAs(`demo-parts-${approved}`);
      const asked = nextChatEvent(chat, 'message:update', (u) => toolOf(u)?.state === 'approval-requested');
      const ended = nextChatEvent(chat, 'message:end');
      await chat.send('parts');
      const request = await asked;
      const tool = toolOf(request)!;
      expect(tool).toMatchObject({
        toolName: 'get_weather',
        input: { city: 'Paris', unit: 'celsius' },
        inputText: '{"city":"Paris","unit":"celsius"}',
      });
      expect(request.parts?.[0]).toMatchObject({ type: 'reasoning', text: expect.stringContaining('every part') });
      await chat.approve(request.id, tool.approval!.id, approved);

      const end: MessageEnd = await ended;
      expect(end.status).toBe('complete');
      expect(end.parts?.map((p) => p.type)).toEqual(DEMO_PARTS_TYPES);
      expect(toolOf(end)).toMatchObject({ state, approval: { approved } });
      const file = end.parts?.find((p) => p.type === 'file');
      expect(file).toEqual({ type: 'file', url: `${t.url}/demo/parts.svg`, mediaType: 'image/svg+xml', filename: 'paris.svg' });
      const image = await fetch(file!.url);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(await image.text()).toMatch(/^<svg /);
      for (const source of end.parts!.filter((p) => p.type === 'source')) {
        // Every link of the answer is the hub's own.
        expect(source.url?.startsWith(t.url)).toBe(true);
      }
    },
  );
});
