"""What each client calls its hook events, what they normalise to, and its neutral answer: plain data.

The adapters (`adapters/`) parse and render with these; the hook's first step reads them before
any adapter is imported, to tell a call that only feeds session memory (its answer is always the
neutral one, unless a snapshot waits to be restored) from one whose answer must be worked out. That
first step is what an overloaded machine pays for every call, so this module imports nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook's first step
if TYPE_CHECKING:
    from .model import HookEvent

# Claude Code's event names, which Codex CLI and VS Code Copilot adopted: event → normalised, and
# back (the name to answer with when a payload does not say which event it is).
CLAUDE_STYLE_EVENTS: dict[str, HookEvent] = {
    "PreToolUse": "pre_tool",
    "PostToolUse": "post_tool",
    "UserPromptSubmit": "prompt",
    "PreCompact": "pre_compact",
    "SessionStart": "session_start",
    "Stop": "stop",
}
CLAUDE_STYLE_NAMES: dict[str, str] = {event: name for name, event in CLAUDE_STYLE_EVENTS.items()}

EVENTS: dict[str, dict[str, HookEvent]] = {
    # PostToolUseFailure: Claude Code's event for a failed tool call (answered like PostToolUse).
    "claude-code": {**CLAUDE_STYLE_EVENTS, "PostToolUseFailure": "post_tool"},
    "gemini": {
        "BeforeTool": "pre_tool",
        "AfterTool": "post_tool",
        "BeforeAgent": "prompt",
        "PreCompress": "pre_compact",
        "SessionStart": "session_start",
        "AfterAgent": "stop",
    },
    "codex": dict(CLAUDE_STYLE_EVENTS),
    "cursor": {
        "beforeShellExecution": "pre_tool",
        "beforeMCPExecution": "pre_tool",
        "beforeReadFile": "pre_tool",
        "preToolUse": "pre_tool",
        "afterShellExecution": "post_tool",
        "afterMCPExecution": "post_tool",
        "afterFileEdit": "post_tool",
        "postToolUse": "post_tool",
        "beforeSubmitPrompt": "prompt",
        "sessionStart": "session_start",
        "preCompact": "pre_compact",
        "stop": "stop",
    },
    "copilot": dict(CLAUDE_STYLE_EVENTS),
}

# What to print when there is nothing to say: Cursor wants a JSON object, the others nothing.
NEUTRAL_OUTPUT: dict[str, str] = {"claude-code": "", "gemini": "", "codex": "", "cursor": "{}", "copilot": ""}

# Events that only feed session memory: answered neutrally (bar a pending restore), then recorded.
RECORDING: frozenset[str] = frozenset({"post_tool", "prompt"})


def recording_only(client: str, event: str) -> bool:
    """Whether this client's event is one whose work is recording, not answering."""
    return EVENTS.get(client, {}).get(event) in RECORDING
