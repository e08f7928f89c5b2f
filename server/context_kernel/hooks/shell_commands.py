"""Shell command lines → environment events: git changes, directory changes, package installs.

Only the session memory uses this (what a Bash call did to the checkout or the environment); the deny
rules have their own splitter in `context_kernel.security.shell`. Standard library only: it runs in
the hook process on every Bash call.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from .model import Event
from .text import SCAN_CHARS, clip, first_line, one_line, relative_path


def shell_events(command: str, cwd: str | None) -> list[Event]:
    """Environment events of one Bash command line (each `&&`/`;`/`|` segment looked at alone)."""
    events: list[Event] = []
    # Long commands are heredocs writing files; the verbs we look for sit in the first lines.
    for segment in _segments(command[:SCAN_CHARS]):
        tokens = _tokens(segment)
        if not tokens:
            continue
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


def _segments(command: str) -> list[str]:
    """Split on unquoted ; & | newline and parentheses (so `(cd x && make)` and `a || b` both split)."""
    segments: list[str] = []
    buf: list[str] = []
    quote: str | None = None
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < n:
                buf.append(command[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            buf.append(c)
        elif c == "\\" and i + 1 < n:
            buf.append(command[i:i + 2])
            i += 1
        elif c in ";&|\n()":
            segments.append("".join(buf))
            buf = []
        else:
            buf.append(c)
        i += 1
    segments.append("".join(buf))
    return [s.strip() for s in segments if s.strip()]


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REDIRECT = re.compile(r"^\d*(?:>>?|<<?|&>)")
_PREFIXES = frozenset({"sudo", "env", "time", "nohup", "command", "builtin", "exec", "nice"})


def _tokens(segment: str) -> list[str]:
    try:
        tokens = shlex.split(segment, comments=True)
    except ValueError:  # unbalanced quotes: a rough split still finds "git commit"
        tokens = segment.split()
    while tokens and (_ASSIGNMENT.match(tokens[0]) or tokens[0] in _PREFIXES or
                      (tokens[0].startswith("-") and len(tokens) > 1)):
        tokens = tokens[2:] if tokens[0] in ("-u", "-g") else tokens[1:]
    # Redirections ("> log", "2>&1") say nothing about the command; drop them and what follows.
    cut = next((i for i, t in enumerate(tokens) if _REDIRECT.match(t)), len(tokens))
    tokens = tokens[:cut]
    if tokens:
        tokens[0] = posixpath.basename(tokens[0]) or tokens[0]
    return tokens


_GIT_OPTION_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
# Commands that change the repository or the checkout; status/log/diff/show are reading.
_GIT_CHANGES = frozenset({"commit", "checkout", "switch", "merge", "rebase", "push", "pull", "branch", "reset",
                          "revert", "cherry-pick", "stash", "tag", "clone", "init", "restore", "worktree", "am"})
_BRANCH_CHANGES = frozenset({"-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy", "-u",
                             "--set-upstream-to", "--unset-upstream", "-f", "--force"})
_BRANCH_LISTS = frozenset({"-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"})
_HEREDOC = re.compile(r"^\$\(\s*cat\s+<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\s*\)\s*$", re.DOTALL)


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
    if message is not None:
        # Claude Code commits with -m "$(cat <<'EOF' ... EOF)"; the subject is the heredoc's first line.
        heredoc = _HEREDOC.match(message.strip())
        if heredoc:
            message = heredoc.group(2)
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
    return bool(verbs) and verb in verbs  # type: ignore[operator]
