"""Shell command lines → environment events: git changes, directory changes, package installs.

Only the session memory uses this (what a Bash call did to the checkout or the environment). The line
is read through the shell model the deny rules use (:mod:`context_kernel.shell`): every simple command
it runs, past wrappers (`sudo`, `timeout 5`, `ionice -c3`, `xargs`, …), assignments and redirections,
inside substitutions and `bash -c` scripts too; heredoc bodies are text, not commands. Standard library
only: it runs in the hook process on every Bash call.
"""

from __future__ import annotations

import re

from ..shell import commands
from .model import Event
from .text import SCAN_CHARS, clip, first_line, one_line, relative_path


def shell_events(command: str, cwd: str | None) -> list[Event]:
    """Environment events of one Bash command line (each simple command looked at alone)."""
    events: list[Event] = []
    # Long commands are heredocs writing files; the verbs we look for sit in the first lines. The cut
    # may leave a quote open, so `unterminated` is not looked at: an open quote swallows only its tail.
    for cmd in commands(command[:SCAN_CHARS], heredoc_lines=False):
        tokens = [cmd.program, *cmd.words[1:]]
        name = tokens[0]
        if name == "git":
            what = _git(tokens[1:])
            if what:
                events.append(Event("git", "environment", what))
        elif name in ("cd", "pushd"):
            # `cd -` goes back to the previous directory; other dashes are options (-P, -L).
            target = next((t for t in tokens[1:] if t == "-" or not t.startswith("-")), "~")
            events.append(Event("cwd", "environment", relative_path(target, cwd)))
        elif _is_install(tokens):
            events.append(Event("env", "environment", clip(" ".join(tokens), 200)))
    unique: dict[tuple[str, str], Event] = {}
    for event in events:
        unique.setdefault((event.type, event.data), event)
    return list(unique.values())


_GIT_OPTION_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
# Commands that change the repository or the checkout; status/log/diff/show are reading.
_GIT_CHANGES = frozenset({"commit", "checkout", "switch", "merge", "rebase", "push", "pull", "branch", "reset",
                          "revert", "cherry-pick", "stash", "tag", "clone", "init", "restore", "worktree", "am"})
_BRANCH_CHANGES = frozenset({"-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy", "-u",
                             "--set-upstream-to", "--unset-upstream", "-f", "--force"})
_BRANCH_LISTS = frozenset({"-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"})


def _git(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _GIT_OPTION_WITH_VALUE else 1
    if i >= len(args) or args[i] not in _GIT_CHANGES:
        return None
    sub, rest = args[i], args[i + 1:]
    positional = [a for a in rest if not a.startswith("-")]
    if sub == "commit":
        return _commit(rest)
    if sub == "branch" and not (any(a.split("=")[0] in _BRANCH_CHANGES for a in rest)
                                or (positional and not _BRANCH_LISTS.intersection(rest))):
        return None
    if sub == "stash" and rest and rest[0] in ("list", "show"):
        return None
    if sub == "tag" and (not positional or {"-l", "--list"}.intersection(rest)):
        return None
    if sub == "worktree" and (not rest or rest[0] not in ("add", "remove", "move")):
        return None
    return clip(one_line(" ".join([sub, *rest])), 200)


def _commit(rest: list[str]) -> str:
    message: str | None = None
    for j, arg in enumerate(rest):
        if arg in ("-m", "--message") and j + 1 < len(rest):
            message = rest[j + 1]
        elif arg.startswith("--message="):
            message = arg.split("=", 1)[1]
        elif arg.startswith("-") and not arg.startswith("--") and "m" in arg[1:]:
            at = arg.index("m", 1)  # -am "msg", -mmsg
            message = arg[at + 1:] or (rest[j + 1] if j + 1 < len(rest) else None)
        if message is not None:
            break
    # Claude Code commits with -m "$(cat <<'EOF' ... EOF)"; the subject is the heredoc's first line.
    if message is not None and message.lstrip().startswith("$("):
        cat = [c.heredocs[0] for c in commands(message, heredoc_lines=False)
               if c.origin == "substitution" and c.program == "cat" and c.heredocs]
        message = cat[0] if cat else message
    head = "commit --amend" if "--amend" in rest else "commit"
    subject = first_line(message or "")
    return clip(f"{head}: {subject}", 200) if subject else head


_INSTALL_VERBS: dict[str, frozenset[str]] = {
    name: frozenset(verbs.split()) for name, verbs in {
        "pip": "install uninstall", "pipx": "install uninstall", "uv": "add remove sync venv",
        "poetry": "add remove install", "pipenv": "install uninstall", "conda": "install create remove",
        "mamba": "install create remove", "micromamba": "install create remove",
        "npm": "install i add ci uninstall remove", "pnpm": "add install i remove", "yarn": "add install remove",
        "bun": "add install i remove", "apt": "install remove purge", "apt-get": "install remove purge",
        "dnf": "install remove", "yum": "install remove", "apk": "add del", "brew": "install uninstall",
        "cargo": "add install remove", "go": "get install", "gem": "install", "bundle": "install add",
        "composer": "require install remove", "dotnet": "add",
    }.items()
}


def _is_install(tokens: list[str]) -> bool:
    name = tokens[0]
    if re.fullmatch(r"python[\d.]*|py", name) and len(tokens) > 2 and tokens[1] == "-m":
        tokens = tokens[2:]
        name = tokens[0]
        if name == "venv":
            return True
    if name == "uv" and len(tokens) > 1 and tokens[1] == "pip":
        tokens, name = tokens[1:], "pip"
    if name == "virtualenv":
        return True
    name = re.sub(r"^(pip)[\d.]+$", r"\1", name)
    verbs = _INSTALL_VERBS.get(name)
    verb = next((t for t in tokens[1:] if not t.startswith("-")), None)
    return verbs is not None and verb is not None and verb in verbs
