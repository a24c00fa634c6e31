// A relay-hub bot on the Vercel AI SDK, against any OpenAI-compatible endpoint (README.md here).
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { RelayAgent } from '@relay-hub/agent';
import { stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const env = (name, fallback) => process.env[name] ?? fallback ?? fail(name);
function fail(name) {
  throw new Error(`set ${name} (see README.md)`);
}

const llm = createOpenAICompatible({
  name: 'llm',
  baseURL: env('OPENAI_BASE_URL', 'http://localhost:11434/v1'),
  apiKey: process.env.OPENAI_API_KEY,
});
const model = llm(env('OPENAI_MODEL', 'llama3.2'));

const tools = {
  // A stand-in tool: replace it with yours. The answer shows the call, its input and its output.
  get_weather: tool({
    description: 'The current weather in a city',
    inputSchema: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']).optional() }),
    execute: async ({ city, unit = 'celsius' }) => ({ city, unit, temperature: city.length + 12 }),
  }),
};

const agentId = env('AGENT_ID', 'ai-bot');
const agent = new RelayAgent({ url: env('RELAY_HUB_URL'), apiKey: env('AGENT_API_KEY'), agentId });
agent.on('error', (err) => console.error('relay:', err.message));

agent.onMessage(async (message, { signal }) => {
  const result = streamText({
    model,
    system: 'You are a helpful assistant. Use the tools when they help.',
    prompt: message.text,
    tools,
    stopWhen: stepCountIs(3),
    abortSignal: signal, // a stop in the chat cancels the model call
  });
  const { status } = await agent.streamUIMessage(message.from, result.toUIMessageStream({ sendReasoning: true, sendSources: true }), {
    replyTo: message.id,
  });
  console.log(`answered ${message.id}: ${status}`);
});

await agent.connect();
console.log(`connected as ${agentId}`);
process.on('SIGTERM', () => {
  agent.close();
  process.exit(0);
});
