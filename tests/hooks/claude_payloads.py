"""Claude Code hook stdin payloads, written from the documented shapes.

Common fields and PostToolUse / PostToolUseFailure / UserPromptSubmit / SessionStart inputs:
https://code.claude.com/docs/en/hooks ("Hook input"). Per-tool `tool_input` / `tool_response` fields:
https://github.com/anthropics/claude-code/issues/3671 (Edit response with filePath, oldString, ...;
Bash response {stdout, stderr, interrupted, isImage}) and the TodoWrite example (tool_response
{oldTodos, newTodos}) of https://claudemy.org/en/learn/03-developer/claude-code-in-action/18-another-useful-hook.
"""

from __future__ import annotations

from typing import Any

from context_kernel.hooks.model import HookCall

CWD = "/home/dev/shop"
SESSION = "9ecf22fa-edf8-4332-ae85-b6d5456eda64"


def _common(event: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-shop/{SESSION}.jsonl",
        "cwd": CWD,
        "permission_mode": "default",
        "hook_event_name": event,
    }


def post_tool(tool_name: str, tool_input: dict[str, Any], tool_response: Any) -> dict[str, Any]:
    return {**_common("PostToolUse"), "tool_name": tool_name, "tool_input": tool_input,
            "tool_response": tool_response, "tool_use_id": "toolu_01ABC123"}


def post_tool_failure(tool_name: str, tool_input: dict[str, Any], error: str,
                      is_interrupt: bool = False) -> dict[str, Any]:
    return {**_common("PostToolUseFailure"), "tool_name": tool_name, "tool_input": tool_input,
            "tool_use_id": "toolu_01DEF456", "error": error, "is_interrupt": is_interrupt}


def prompt(text: str) -> dict[str, Any]:
    return {**_common("UserPromptSubmit"), "prompt": text}


def session_start(source: str) -> dict[str, Any]:
    return {**_common("SessionStart"), "source": source}


def as_call(payload: dict[str, Any]) -> HookCall:
    """What the Claude Code adapter makes of a payload (names are already Claude Code's)."""
    kind = {"PostToolUse": "post_tool", "PostToolUseFailure": "post_tool", "UserPromptSubmit": "prompt",
            "SessionStart": "session_start"}[payload["hook_event_name"]]
    return HookCall(client="claude-code", event=kind, session_id=payload["session_id"], cwd=payload.get("cwd"),
                    tool=payload.get("tool_name"), raw_tool=payload.get("tool_name"),
                    tool_input=payload.get("tool_input") or {}, tool_response=payload.get("tool_response"),
                    prompt=payload.get("prompt"), source=payload.get("source"), raw=payload)


READ = post_tool("Read", {"file_path": f"{CWD}/src/cart/totals.py"}, {
    "type": "text",
    "file": {"filePath": f"{CWD}/src/cart/totals.py", "content": "def total(items):\n    ...\n",
             "numLines": 2, "startLine": 1, "totalLines": 2},
})
READ_OUTSIDE = post_tool("Read", {"file_path": "/etc/hosts", "offset": 1, "limit": 20}, {"type": "text"})
READ_CLAUDE_MD = post_tool("Read", {"file_path": f"{CWD}/CLAUDE.md"}, {"type": "text"})
READ_CURSOR_RULE = post_tool("Read", {"file_path": f"{CWD}/.cursor/rules/python.mdc"}, {"type": "text"})
EDIT = post_tool("Edit", {"file_path": f"{CWD}/src/cart/totals.py", "old_string": "return 0",
                          "new_string": "return sum(i.price for i in items)"}, {
    "filePath": f"{CWD}/src/cart/totals.py", "oldString": "return 0",
    "newString": "return sum(i.price for i in items)", "originalFile": "def total(items):\n    return 0\n",
    "structuredPatch": [{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1,
                         "lines": ["-    return 0", "+    return sum(i.price for i in items)"]}],
    "userModified": False, "replaceAll": False,
})
MULTI_EDIT = post_tool("MultiEdit", {"file_path": f"{CWD}/src/cart/models.py", "edits": [
    {"old_string": "price: int", "new_string": "price: Decimal"},
    {"old_string": "import x", "new_string": "from decimal import Decimal", "replace_all": False},
]}, {"filePath": f"{CWD}/src/cart/models.py"})
WRITE = post_tool("Write", {"file_path": f"{CWD}/tests/test_totals.py", "content": "def test_total():\n    ...\n"},
                  {"type": "create", "filePath": f"{CWD}/tests/test_totals.py", "content": "..."})
NOTEBOOK_EDIT = post_tool("NotebookEdit", {"notebook_path": f"{CWD}/notebooks/explore.ipynb", "cell_id": "a1",
                                           "new_source": "df.describe()", "edit_mode": "replace"}, {})
BASH_OK = post_tool("Bash", {"command": "pytest -q tests/test_totals.py", "description": "Run the totals tests"},
                    {"stdout": "3 passed in 0.12s", "stderr": "", "interrupted": False, "isImage": False})
BASH_FAILED = post_tool_failure(
    "Bash", {"command": "python -m shop.import data/orders.csv", "description": "Import the orders"},
    "Error: Exit code 1\nTraceback (most recent call last):\n  File \"shop/import.py\", line 12, in <module>\n"
    "    rows = load(path)\nKeyError: 'order_id'")
BASH_STDERR = post_tool("Bash", {"command": "node build.js"}, {
    "stdout": "",
    "stderr": "node:internal/modules/cjs/loader:1080\n  throw err;\n\nError: Cannot find module 'esbuild'",
    "interrupted": False, "isImage": False})
BASH_INTERRUPTED = post_tool_failure("Bash", {"command": "sleep 100"}, "Interrupted by user", is_interrupt=True)
BASH_COMMIT = post_tool("Bash", {
    "command": "git add -A && git commit -m \"$(cat <<'EOF'\nFix rounding in cart totals\n\n"
               "Co-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
    "description": "Commit the fix"}, {"stdout": "[main 1a2b3c4] Fix rounding in cart totals", "stderr": "",
                                       "interrupted": False, "isImage": False})
BASH_BRANCH = post_tool("Bash",
                        {"command": "cd src && git checkout -b fix/rounding && git push -u origin fix/rounding"},
                        {"stdout": "", "stderr": "Switched to a new branch 'fix/rounding'\nTo github.com:me/shop.git",
                         "interrupted": False, "isImage": False})
BASH_INSTALL = post_tool("Bash", {"command": "uv pip install httpx==0.28.1 && npm install --save-dev esbuild"},
                         {"stdout": "Installed 1 package", "stderr": "", "interrupted": False, "isImage": False})
BASH_READ_ONLY_GIT = post_tool("Bash", {"command": "git status && git log --oneline -5 | head && git branch -a"},
                               {"stdout": "On branch main", "stderr": "", "interrupted": False, "isImage": False})
GREP = post_tool("Grep", {"pattern": "def total", "path": f"{CWD}/src", "output_mode": "content"},
                 {"mode": "content", "numFiles": 1, "filenames": [], "content": "src/cart/totals.py:1:def total"})
GLOB = post_tool("Glob", {"pattern": "**/*.py"}, {"filenames": ["src/cart/totals.py"], "numFiles": 1})
TODO_WRITE = post_tool("TodoWrite", {"todos": [
    {"content": "Fix rounding in cart totals", "status": "completed", "activeForm": "Fixing rounding"},
    {"content": "Add tests for discounts", "status": "in_progress", "activeForm": "Adding tests for discounts"},
    {"content": "Update the changelog", "status": "pending", "activeForm": "Updating the changelog"},
]}, {"oldTodos": [], "newTodos": []})
TASK_CREATE = post_tool("TaskCreate", {"subject": "Migrate prices to Decimal", "description": "All money fields",
                                       "activeForm": "Migrating prices"}, {"task": {"id": "4", "subject": "x"}})
TASK_UPDATE = post_tool("TaskUpdate", {"taskId": "4", "status": "completed"}, {"success": True})
SUBAGENT = post_tool("Task", {"description": "Find all price fields", "prompt": "Search the codebase for ...",
                              "subagent_type": "Explore"}, {"content": [{"type": "text", "text": "Found 12"}]})
AGENT = post_tool("Agent", {"description": "Review the diff", "prompt": "Review ...",
                            "subagent_type": "code-reviewer"}, {"content": []})
WEB_FETCH = post_tool("WebFetch", {"url": "https://docs.python.org/3/library/decimal.html",
                                   "prompt": "How to round half up?"}, {"result": "..."})
WEB_SEARCH = post_tool("WebSearch", {"query": "python decimal round half up"}, {"results": []})
MCP_OTHER = post_tool("mcp__github__create_issue", {"owner": "me", "repo": "shop", "title": "Rounding bug",
                                                   "body": "long text " * 50, "api_key": "sk-live-123"},
                      [{"type": "text", "text": "Created issue #7"}])
CTX_EXECUTE = post_tool("mcp__context-kernel__ctx_execute", {
    "language": "python", "code": "import pandas as pd\ndf = pd.read_csv('data/orders.csv')\nprint(len(df))",
    "intent": "count orders"}, [{"type": "text", "text": "1200"}])
CTX_EXECUTE_ERROR = post_tool("mcp__context-kernel__ctx_execute", {
    "language": "python", "code": "import polars"}, {
    "isError": True, "content": [{"type": "text", "text": "ModuleNotFoundError: No module named 'polars'"}]})
CTX_EXECUTE_FILE = post_tool("mcp__plugin_ck_context-kernel__ctx_execute_file", {
    "path": f"{CWD}/logs/app.log", "language": "python", "code": "print(FILE_CONTENT.count('ERROR'))"},
    [{"type": "text", "text": "42"}])
CTX_SEARCH = post_tool("mcp__context-kernel__ctx_search", {"queries": ["decimal rounding", "ROUND_HALF_UP"]},
                       [{"type": "text", "text": "..."}])
EDIT_FAILED = post_tool_failure("Edit", {"file_path": f"{CWD}/src/cart/totals.py", "old_string": "x",
                                         "new_string": "y"}, "String to replace not found in file.\nString: x")
EXIT_PLAN = post_tool("ExitPlanMode", {"plan": "# Switch money to Decimal\n\n1. models\n2. totals"}, {})
UNKNOWN = post_tool("SlashCommand", {"command": "/review"}, {})
SILENT = post_tool("TodoRead", {}, [])
