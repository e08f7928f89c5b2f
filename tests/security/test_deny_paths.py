"""Read(glob) rules: gitignore-style globs on the raw, resolved and real path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from context_kernel.security import DenyRules


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A project and a home directory with a few files in each."""
    project = tmp_path / "project"
    home = tmp_path / "home"
    for rel in (".env", "sub/.env", "src/secret/key.txt", "src/app.py", "certs/a/server.pem", "README.md",
                "logs/2024/app.log", "docs/secrets/plan.md"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("x")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key")
    (home / "notes.txt").write_text("n")
    return project, home


# (rule, path relative to the project unless absolute, denied?)
GLOBS = [
    ("Read(./.env)", ".env", True),
    ("Read(./.env)", "sub/.env", False),  # ./ anchors at the project root
    ("Read(.env)", "sub/.env", True),  # a bare name matches at any depth
    ("Read(.env)", ".env", True),
    ("Read(*.pem)", "certs/a/server.pem", True),
    ("Read(*.pem)", "README.md", False),
    ("Read(/src/secret/**)", "src/secret/key.txt", True),
    ("Read(/src/secret/**)", "src/app.py", False),
    ("Read(src/secret)", "src/secret/key.txt", True),  # a matching directory covers its contents
    ("Read(/src/*.py)", "src/app.py", True),
    ("Read(/*.py)", "src/app.py", False),  # `*` stays inside one directory
    ("Read(/logs/**/*.log)", "logs/2024/app.log", True),
    ("Read(**/secrets/*)", "docs/secrets/plan.md", True),
    ("Read(/src/secre?/key.txt)", "src/secret/key.txt", True),
    ("Read(/src/secret/[kz]ey.txt)", "src/secret/key.txt", True),
    ("Read(/src/secret/[!k]ey.txt)", "src/secret/key.txt", False),
    ("Read", "README.md", True),
]


@pytest.mark.parametrize(("rule", "path", "denied"), GLOBS)
def test_read_glob_semantics(tree: tuple[Path, Path], rule: str, path: str, denied: bool) -> None:
    project, home = tree
    assert (DenyRules.from_strings([rule]).check_path(path, project, home=home) is not None) is denied


def test_an_absolute_path_is_matched_against_project_rules(tree: tuple[Path, Path]) -> None:
    project, _ = tree
    rules = DenyRules.from_strings(["Read(./.env)"])
    assert rules.check_path(str(project / ".env"), project) is not None


def test_double_slash_rules_are_absolute(tree: tuple[Path, Path]) -> None:
    project, home = tree
    rules = DenyRules.from_strings([f"Read(/{home}/notes.txt)"])  # `//tmp/.../notes.txt`
    assert rules.check_path(str(home / "notes.txt"), project) is not None
    assert rules.check_path("../home/notes.txt", project) is not None
    assert rules.check_path(str(home / ".ssh" / "id_rsa"), project) is None


def test_traversal_out_of_and_back_into_the_project_is_resolved(tree: tuple[Path, Path]) -> None:
    project, _ = tree
    rules = DenyRules.from_strings(["Read(./.env)"])
    assert rules.check_path("src/../.env", project) is not None
    assert rules.check_path("../project/.env", project) is not None
    assert rules.check_path("src/../README.md", project) is None


def test_home_rules_use_the_given_home(tree: tuple[Path, Path]) -> None:
    project, home = tree
    rules = DenyRules.from_strings(["Read(~/.ssh/**)"])
    assert rules.check_path("~/.ssh/id_rsa", project, home=home) is not None
    assert rules.check_path(str(home / ".ssh" / "id_rsa"), project, home=home) is not None
    assert rules.check_path("~/notes.txt", project, home=home) is None
    # Without a home, only a path written with ~/ can be matched, textually.
    assert rules.check_path("~/.ssh/id_rsa", project) is not None
    assert rules.check_path(str(home / ".ssh" / "id_rsa"), project) is None


def test_a_symlink_to_a_denied_file_is_denied(tree: tuple[Path, Path]) -> None:
    project, home = tree
    (project / "innocent.txt").symlink_to(project / ".env")
    (project / "keys").symlink_to(home / ".ssh")
    rules = DenyRules.from_strings(["Read(./.env)", "Read(~/.ssh/**)"])
    denial = rules.check_path("innocent.txt", project, home=home)
    assert denial is not None and denial.rule == "Read(./.env)"
    denial = rules.check_path("keys/id_rsa", project, home=home)
    assert denial is not None and denial.rule == "Read(~/.ssh/**)"
    assert rules.check_path("README.md", project, home=home) is None


def test_a_project_reached_through_a_symlink_still_matches(tree: tuple[Path, Path], tmp_path: Path) -> None:
    project, _ = tree
    alias = tmp_path / "alias"
    alias.symlink_to(project)
    rules = DenyRules.from_strings(["Read(./.env)"])
    assert rules.check_path(".env", alias) is not None
    assert rules.check_path(os.path.join(str(project), ".env"), alias) is not None


def test_the_path_denial_reads_as_advice(tree: tuple[Path, Path]) -> None:
    project, _ = tree
    rules = DenyRules.from_strings(["Read(./.env)"], source=".claude/settings.json")
    denial = rules.check_path(".env", project)
    assert denial is not None
    assert denial.segment == ".env"
    assert denial.reason.startswith("reading .env is denied by Read(./.env) in .claude/settings.json")


def test_without_read_rules_every_path_is_allowed(tree: tuple[Path, Path]) -> None:
    project, _ = tree
    assert DenyRules.from_strings(["Bash(rm -rf *)", "Edit(./.env)"]).check_path(".env", project) is None
