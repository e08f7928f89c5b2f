"""Deny rules in Claude Code's permission format, applied to shell commands, code and paths.

The rules are the `permissions.deny` lists of Claude Code's settings files
(https://code.claude.com/docs/en/permissions, https://code.claude.com/docs/en/settings):
`<project>/.claude/settings.local.json`, `<project>/.claude/settings.json`, then the user's
`~/.claude/settings.json`. Deny lists merge across files (a rule denies wherever it is written);
when several files deny the same thing, the reason names the highest-precedence file.

Rule syntax (from the page above):
- `Tool` or `Tool(*)`: every use of the tool (`Bash` denies every command).
- `Bash(npm run build)`: exactly that command. `*` matches any characters, spaces included
  (`Bash(git * main)`); a single trailing ` *` also matches nothing (`Bash(ls *)` denies `ls`
  and `ls -la`, not `lsof`). `Bash(git push:*)` is the older prefix form: `git push`, alone or
  followed by a space and anything; `git pushall` is not matched. (When the prefix ends in a
  non-word character, e.g. `curl http://x/:*`, it is a plain prefix, as the docs' example shows.)
  Each simple command is tried without its wrappers and redirections (`sudo rm x > log` is `rm x`)
  and also as written with its wrappers, so `Bash(sudo:*)` denies `sudo rm x`.
- `Read(glob)`: gitignore-style globs. `//path` is absolute, `~/path` is under the home directory,
  `/path` and `./path` are relative to the project root (as is any pattern with a `/` inside),
  and a bare name (`.env`, `*.pem`) matches at any depth. `*` stays inside one directory, `**`
  crosses them, a pattern matching a directory denies everything in it.
- Rules for other tools (`Edit`, `WebFetch`, `mcp__...`) are kept and available through
  :meth:`DenyRules.rules_for`, but nothing here enforces them.

Standard library only: this module is imported by every hook call (`< 150 ms` budget).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..shell import commands
from .deny_paths import path_candidates, path_matches, real_roots

LOCAL_SETTINGS = ".claude/settings.local.json"
PROJECT_SETTINGS = ".claude/settings.json"

_RULE = re.compile(r"\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*", re.DOTALL)


@dataclass(frozen=True)
class DenyRule:
    """One entry of a `permissions.deny` list."""

    tool: str
    specifier: str | None
    """What is inside the parentheses; None for a bare `Tool` (or `Tool(*)`): every use."""
    source: str
    """Where it was written, e.g. `.claude/settings.json`."""

    @property
    def text(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"


@dataclass(frozen=True)
class Denial:
    """Why something was refused: the rule, the piece that matched it, and a sentence for the agent."""

    rule: str
    """The rule as written, e.g. `Bash(rm -rf *)`."""
    segment: str
    """What matched it: the normalised simple command, or the path as given."""
    reason: str
    """A sentence for the agent: which rule, where it is written, what to do instead."""
    source: str = ""
    """The settings file the rule comes from."""


def parse_rule(text: str, source: str) -> DenyRule | None:
    """`Bash(rm -rf *)` -> DenyRule; None when it is not of the form `Tool` or `Tool(spec)`."""
    match = _RULE.fullmatch(text)
    if match is None:
        return None
    spec = match.group(2)
    if spec is not None:
        spec = spec.strip()
        if spec in ("", "*"):
            spec = None
    return DenyRule(tool=match.group(1), specifier=spec, source=source)


class DenyRules:
    """The merged deny rules of a project; checks commands, code and paths against them."""

    def __init__(self, rules: Iterable[DenyRule] = (), warnings: Iterable[str] = ()) -> None:
        unique: dict[tuple[str, str | None], DenyRule] = {}
        for rule in rules:
            unique.setdefault((rule.tool, rule.specifier), rule)  # first (highest precedence) wins
        self.rules: tuple[DenyRule, ...] = tuple(unique.values())
        self.warnings: list[str] = list(warnings)
        """Files or rules that were skipped, one sentence each (never raised)."""
        self._bash = [(rule, _bash_pattern(rule.specifier)) for rule in self.rules_for("Bash")]

    @classmethod
    def load(cls, project_dir: Path, user_settings: Path | None) -> DenyRules:
        """Read the three settings files (highest precedence first); missing ones are skipped,
        unreadable or invalid ones add a warning."""
        files = [
            (project_dir / LOCAL_SETTINGS, LOCAL_SETTINGS),
            (project_dir / PROJECT_SETTINGS, PROJECT_SETTINGS),
        ]
        if user_settings is not None:
            files.append((user_settings, f"user settings {user_settings}"))
        rules: list[DenyRule] = []
        warnings: list[str] = []
        for path, label in files:
            rules.extend(_read_deny(path, label, warnings))
        return cls(rules, warnings)

    @classmethod
    def from_strings(cls, rules: Iterable[str], source: str = "deny rules") -> DenyRules:
        """Rules given directly (tests, or a caller with its own configuration)."""
        warnings: list[str] = []
        parsed = []
        for text in rules:
            rule = parse_rule(text, source)
            if rule is None:
                warnings.append(f"{source}: ignored deny rule {text!r} (expected Tool or Tool(specifier))")
            else:
                parsed.append(rule)
        return cls(parsed, warnings)

    def __len__(self) -> int:
        return len(self.rules)

    def rules_for(self, tool: str) -> tuple[DenyRule, ...]:
        """The rules written for `tool` (e.g. `WebFetch`), in precedence order."""
        return tuple(rule for rule in self.rules if rule.tool == tool)

    # --- shell ------------------------------------------------------------------------------

    def check_shell(self, command: str) -> Denial | None:
        """The first simple command of `command` that a Bash rule denies, or None."""
        if not self._bash:
            return None
        for cmd in commands(command):
            # The command without its wrappers first, then as written with them (`Bash(sudo:*)`).
            for variant in (cmd, *cmd.outer):
                for form in variant.forms():
                    for rule, pattern in self._bash:
                        if pattern.fullmatch(form):
                            reason = _shell_reason(rule.text, rule.source, f"`{variant.text}` matches it")
                            return Denial(rule.text, variant.text, reason, rule.source)
        return None

    def check_code(self, language: str, code: str) -> Denial | None:
        """Shell commands that `code` (in `language`) passes to the usual process-spawning calls,
        checked like :meth:`check_shell`. Languages without a known form are not checked."""
        if not self._bash:
            return None
        from context_kernel.security import escapes  # only needed when there are Bash rules

        lang = escapes.canonical_language(language)
        if lang == "shell":
            return self.check_shell(code)
        for escape in escapes.shell_escapes(lang, code):
            denial = self.check_shell(escape.command)
            if denial is not None:
                how = f"this {lang} code would run `{denial.segment}` through {escape.via}"
                reason = _shell_reason(denial.rule, denial.source, how)
                return Denial(denial.rule, denial.segment, reason, denial.source)
        return None

    # --- urls -------------------------------------------------------------------------------

    def check_url(self, url: str) -> Denial | None:
        """A WebFetch rule denying `url`: bare `WebFetch` denies every fetch, `WebFetch(domain:x)`
        denies host x and its subdomains (`domain:*` every host), so ctx_fetch_and_index is no way
        around what the user denied to WebFetch. Other specifiers are not understood: ignored."""
        rules = self.rules_for("WebFetch")
        if not rules:
            return None
        from urllib.parse import urlsplit

        try:
            host = (urlsplit(url.strip()).hostname or "").rstrip(".").lower()
        except ValueError:
            host = ""
        for rule in rules:
            spec = (rule.specifier or "").strip()
            if rule.specifier is not None and not spec.startswith("domain:"):
                continue
            domain = spec[len("domain:"):].strip().lower().rstrip(".").removeprefix("*.")
            if rule.specifier is None or domain == "*" or (host and (host == domain or host.endswith("." + domain))):
                reason = (f"fetching {url} is denied by {rule.text} in {rule.source}. Do not fetch it another way; "
                          "ask the user for what you need from it.")
                return Denial(rule.text, url, reason, rule.source)
        return None

    # --- paths ------------------------------------------------------------------------------

    def check_path(self, path: str, project_dir: Path, home: Path | None = None) -> Denial | None:
        """A Read rule denying `path`, given as written (relative to `project_dir`), checked on the
        raw, the resolved and the real path (symlinks followed), or None."""
        rules = self.rules_for("Read")
        if not rules:
            return None
        candidates = path_candidates(path, project_dir, home)
        roots = real_roots(project_dir)
        homes = real_roots(home) if home is not None else ()
        for rule in rules:
            if rule.specifier is None:
                return Denial(rule.text, path, _path_reason(rule, path), rule.source)
            for candidate in candidates:
                if path_matches(rule.specifier, candidate, roots, homes):
                    return Denial(rule.text, path, _path_reason(rule, path), rule.source)
        return None


def _read_deny(path: Path, label: str, warnings: list[str]) -> list[DenyRule]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{label}: not readable ({exc.__class__.__name__}); its deny rules are not applied")
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(f"{label}: invalid JSON ({exc.msg} at line {exc.lineno}); its deny rules are not applied")
        return []
    permissions = data.get("permissions") if isinstance(data, dict) else None
    deny = permissions.get("deny") if isinstance(permissions, dict) else None
    if deny is None:
        return []
    if not isinstance(deny, list):
        warnings.append(f"{label}: permissions.deny is not a list; ignored")
        return []
    rules = []
    for entry in deny:
        rule = parse_rule(entry, label) if isinstance(entry, str) else None
        if rule is None:
            warnings.append(f"{label}: ignored deny rule {entry!r} (expected Tool or Tool(specifier))")
        else:
            rules.append(rule)
    return rules


def _shell_reason(rule: str, source: str, how: str) -> str:
    return (
        f"denied by {rule} in {source}: {how}. Do not run it in another form; ask the user to run "
        "it themselves or to change the rule."
    )


def _path_reason(rule: DenyRule, path: str) -> str:
    return (
        f"reading {path} is denied by {rule.text} in {rule.source}. Leave this file out, or ask the "
        "user for the part you need."
    )


# --- Bash patterns -----------------------------------------------------------------------------

_WORD_END = re.compile(r"\w\Z")


@lru_cache(maxsize=512)
def _bash_pattern(specifier: str | None) -> re.Pattern[str]:
    """Claude Code's Bash rule matching as a regular expression on a normalised command."""
    if specifier is None:
        return re.compile(r".*", re.DOTALL)
    spec = " ".join(specifier.split())
    if spec.endswith(":*"):  # legacy prefix form: the prefix as a whole word, then anything
        prefix = spec[:-2].rstrip()
        tail = r"(?: .*)?" if _WORD_END.search(prefix) else r".*"
        return re.compile(_wildcards(prefix) + tail, re.DOTALL)
    if spec.endswith(" *") and _count_wildcards(spec) == 1:  # `ls *` matches `ls` too
        return re.compile(_wildcards(spec[:-2]) + r"(?: .*)?", re.DOTALL)
    return re.compile(_wildcards(spec), re.DOTALL)


def _count_wildcards(spec: str) -> int:
    return len(re.findall(r"(?<!\\)\*", spec))


def _wildcards(spec: str) -> str:
    """`*` -> any characters; `\\*` is a literal star; everything else literal."""
    out = []
    i = 0
    while i < len(spec):
        if spec.startswith("\\*", i):
            out.append(re.escape("*"))
            i += 2
        elif spec[i] == "*":
            out.append(".*")
            i += 1
        else:
            out.append(re.escape(spec[i]))
            i += 1
    return "".join(out)
