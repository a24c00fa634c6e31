"""relay-hub agent SDK for Python: connect a chat bot's runtime to relay-hub.

Example::

    import asyncio, os
    from relay_hub_agent import Message, RelayAgent

    async def main() -> None:
        agent = RelayAgent("http://localhost:3000", os.environ["AGENT_API_KEY"], "support-bot")

        @agent.on_message
        async def echo(message: Message) -> None:
            await agent.reply(message.sender, f"You said: {message.text}", reply_to=message.id)

        await agent.connect()
        await agent.wait_closed()

    asyncio.run(main())
"""

from ._inbound import ApprovalHandler, ControlHandler, FeedbackHandler, MessageHandler
from ._parts import PartWriter, ToolCall
from ._protocol import MessagePart
from .adapters import (
    AppendText,
    OpenPart,
    PartOp,
    PartOps,
    PartSink,
    UpdatePart,
    collect_parts,
    from_anthropic_stream,
    from_openai_chat_stream,
    pipe_parts,
)
from ._hooks import ErrorHandler
from .agent import RelayAgent
from .errors import LOCAL_CODES, ConversationHeld, RelayAgentError, StreamStopped
from .stream import ReplyStream
from .types import (
    ADMIN_CLIENT_ID,
    BROADCAST,
    ActivityState,
    Approval,
    ControlChange,
    ControlState,
    Feedback,
    Message,
    Rating,
    Sent,
    StreamEnd,
    StreamStatus,
)

__all__ = [
    "ADMIN_CLIENT_ID",
    "BROADCAST",
    "LOCAL_CODES",
    "ActivityState",
    "AppendText",
    "Approval",
    "ApprovalHandler",
    "ControlChange",
    "ControlHandler",
    "ControlState",
    "ConversationHeld",
    "ErrorHandler",
    "Feedback",
    "FeedbackHandler",
    "Message",
    "MessageHandler",
    "MessagePart",
    "OpenPart",
    "PartOp",
    "PartOps",
    "PartSink",
    "PartWriter",
    "Rating",
    "RelayAgent",
    "RelayAgentError",
    "ReplyStream",
    "Sent",
    "StreamEnd",
    "StreamStatus",
    "StreamStopped",
    "ToolCall",
    "UpdatePart",
    "collect_parts",
    "from_anthropic_stream",
    "from_openai_chat_stream",
    "pipe_parts",
]
__version__ = "0.1.0"
