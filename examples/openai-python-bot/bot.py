"""A relay-hub bot on the OpenAI Python client, against any OpenAI-compatible endpoint (README.md here)."""

import asyncio
import os
import signal

from openai import AsyncOpenAI

from relay_hub_agent import Message, RelayAgent, from_openai_chat_stream

client = AsyncOpenAI(
    base_url=os.environ.get("OPENAI_BASE_URL", "http://localhost:11434/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),
)
MODEL = os.environ.get("OPENAI_MODEL", "llama3.2")
# A stand-in tool the model may call; the answer shows the call and its input.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                "required": ["city"],
            },
        },
    }
]


async def main() -> None:
    agent = RelayAgent(
        os.environ["RELAY_HUB_URL"],
        os.environ["AGENT_API_KEY"],
        os.environ.get("AGENT_ID", "openai-bot"),
        cancel_on_stop=True,  # a stop in the chat cancels the handler, wherever it waits for the model
    )

    @agent.on_message
    async def answer(message: Message) -> None:
        response = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": message.text}],
            tools=TOOLS,
            stream=True,
        )
        try:
            # Reasoning, text and tool calls become the answer's parts as the model writes them;
            # a stop in the chat ends the block (the answer ends `cancelled`).
            async with agent.stream(message.sender, reply_to=message.id) as s:
                await s.pipe(from_openai_chat_stream(response))
        finally:
            await response.close()  # a stopped answer closes the model's HTTP stream
        print(f"answered {message.id}", flush=True)

    await agent.connect()
    print(f"connected as {agent.agent_id}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await agent.close()


if __name__ == "__main__":
    asyncio.run(main())
