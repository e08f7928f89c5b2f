"""Review: shell escapes in other languages that a Bash deny rule must still catch."""

from __future__ import annotations

import pytest

from context_kernel.security import DenyRules

RM = DenyRules.from_strings(["Bash(rm -rf *)"])


@pytest.mark.parametrize("code", [
    'import os\nos.spawnlp(os.P_WAIT, "rm", "rm", "-rf", "x")',
    'import os\nos.spawnvp(os.P_WAIT, "rm", ["rm", "-rf", "x"])',
    'import os\nos.spawnve(os.P_NOWAIT, "/bin/rm", ["rm", "-rf", "x"], os.environ)',
    'from os import spawnl, P_WAIT\nspawnl(P_WAIT, "/bin/rm", "rm", "-rf", "x")',
    'import os\nos.posix_spawnp("rm", ["rm", "-rf", "x"], os.environ)',
    'import os\nos.posix_spawn("/bin/rm", ["rm", "-rf", "x"], {})',
])
def test_os_spawn_and_posix_spawn_are_shell_escapes(code: str) -> None:
    # The standard library's other process-starting calls next to os.system and os.exec*.
    assert RM.check_code("python", code) is not None


def test_os_spawn_of_another_program_passes() -> None:
    assert RM.check_code("python", 'import os\nos.spawnlp(os.P_WAIT, "ls", "ls", "-la")') is None


@pytest.mark.parametrize(("language", "code"), [
    ("python", 'import os\nos.system("\\x72m -rf x")'),
    ("python", 'import os\nos.system("\\u0072m -rf x")'),
    ("python", 'import os\nos.system("\\U00000072m -rf x")'),
    ("python", 'import os\nos.system("\\162m -rf x")'),
    ("javascript", 'require("child_process").execSync("\\x72m -rf x")'),
    ("javascript", 'require("child_process").execSync("\\u{72}m -rf x")'),
    ("ruby", 'system("\\x72m -rf x")'),
    ("go", 'exec.Command("\\x72m", "-rf", "x")'),
])
def test_escaped_characters_in_string_literals_are_decoded(language: str, code: str) -> None:
    # The literal's value is what the process receives: "\x72m" is "rm".
    assert RM.check_code(language, code) is not None


def test_a_raw_string_keeps_its_backslashes() -> None:
    # r"\x72m" is the four characters \x72m followed by m: not rm.
    assert RM.check_code("python", 'import os\nos.system(r"\\x72m -rf x")') is None
