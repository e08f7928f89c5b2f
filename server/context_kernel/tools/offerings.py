"""What the server offers besides tools: its exports and the insight page as resources, the routing guide as a prompt.

The SDK advertises the resources and prompts capabilities whatever the server holds, so the
server holds what fits rather than answering empty lists to a client told to ask:

- resources: the files `records/published.py` lists (exported notebooks and pages, the insight page);
- prompts: `routing-guide`, the few lines that tell an agent which ctx tool to use instead of
  Bash, Read or WebFetch (the guide a SessionStart hook gives).
"""

from __future__ import annotations

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.prompts import Prompt
from mcp_types import Resource

from ..errors import InvalidRequest
from ..records.published import Published


async def resources(published: Published) -> list[Resource]:
    return [Resource(uri=f.uri, name=f.name, title=f.title, description=f.description, mime_type=f.mime_type,
                     size=f.size) for f in await published.files()]


async def read(published: Published, uri: str) -> list[ReadResourceContents]:
    try:
        text, mime_type = await published.read(uri)
    except InvalidRequest as exc:
        raise ResourceNotFoundError(str(exc)) from exc
    return [ReadResourceContents(content=text, mime_type=mime_type)]


def routing_prompt() -> Prompt:
    def routing() -> str:
        # Imported when a client asks for it: the guide and the snapshot code it uses are ~3 ms of
        # imports that `initialize` would otherwise wait for.
        from ..hooks.guide import routing_guide

        return routing_guide()

    return Prompt.from_function(routing, name="routing-guide", title="Which ctx tool to use",
                                description="When to run code, fetch, index and search with context-kernel instead "
                                            "of Bash, Read or WebFetch, so big outputs stay out of the context")
