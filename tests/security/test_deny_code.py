"""Shell escapes inside code of other languages are checked against the Bash rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from context_kernel.security import DenyRules
from context_kernel.security.escapes import canonical_language, shell_escapes

RULES = DenyRules.from_strings(["Bash(rm -rf *)", "Bash(git push:*)"])

# (language, code that runs a denied command, similar code that is allowed)
CASES = [
    ("python", 'import os\nos.system("rm -rf /tmp/x")', 'import os\nos.system("ls -la")'),
    ("python", "import os\nos.popen('rm -rf y').read()", "import os\nos.popen('echo rm -rf y').read()"),
    ("python", 'import subprocess\nsubprocess.run(["rm", "-rf", "x"], check=True)',
     'import subprocess\nsubprocess.run(["rm", "x"], check=True)'),
    ("python", 'subprocess.run("rm -rf " + path, shell=True, cwd="/tmp")',
     'subprocess.run("ls " + path, shell=True, cwd="/tmp")'),
    ("python", 'subprocess.call("git push origin", shell=True)', 'subprocess.call("git pull origin", shell=True)'),
    ("python", 'subprocess.check_call(["git", "push"])', 'subprocess.check_call(["git", "status"])'),
    ("python", 'out = subprocess.check_output(args=["git", "push", "-f"])',
     'out = subprocess.check_output(args=["git", "log"])'),
    ("python", 'import subprocess as sp\nsp.Popen(r"rm -rf raw")', 'import subprocess as sp\nsp.Popen(r"rm raw")'),
    ("python", "from subprocess import run\nrun('''rm -rf tri''', shell=True)",
     "from subprocess import run\nrun('''ls''', shell=True)"),
    ("python", 'import pty\npty.spawn(["bash", "-c", "rm -rf z"])', 'import pty\npty.spawn(["bash", "-c", "ls"])'),
    ("python", 'os.system(f"rm -rf {target}")', 'os.system(f"du -sh {target}")'),
    ("python", 'os.execvp("rm", ["rm", "-rf", "/"])', 'os.execvp("ls", ["ls", "-l"])'),
    ("python", 'await asyncio.create_subprocess_shell("rm -rf a")', 'await asyncio.create_subprocess_shell("ls a")'),
    ("python", "!rm -rf build", "!ls build"),
    ("python", "files = !git push", "files = !git status"),
    ("python", "%%bash\ncd /tmp\nrm -rf cache\n", "%%bash\ncd /tmp\nls cache\n"),
    ("python", "%sx rm -rf x", "%sx ls x"),
    ("javascript", 'const { execSync } = require("child_process");\nexecSync("rm -rf x");',
     'const { execSync } = require("child_process");\nexecSync("ls x");'),
    ("javascript", "require('child_process').exec('rm -rf y', {cwd: '/tmp'}, cb)",
     "require('child_process').exec('ls y', {cwd: '/tmp'}, cb)"),
    ("javascript", 'cp.spawn("rm", ["-rf", "z"], {stdio: "inherit"})',
     'cp.spawn("ls", ["-la", "z"], {stdio: "inherit"})'),
    ("javascript", 'spawnSync("sh", ["-c", "rm -rf w"])', 'spawnSync("sh", ["-c", "ls w"])'),
    ("javascript", 'execFileSync("git", ["push", "origin"])', 'execFileSync("git", ["fetch", "origin"])'),
    ("javascript", "exec(`rm -rf ${dir}`)", "exec(`ls ${dir}`)"),
    ("typescript", 'const p = Bun.spawn(["rm", "-rf", "b"]);', 'const p = Bun.spawn(["ls", "b"]);'),
    ("typescript", "await $`rm -rf ${dir}`;", "await $`ls ${dir}`;"),
    ("typescript", 'new Deno.Command("rm", { args: ["-rf", "d"] }).outputSync();',
     'new Deno.Command("ls", { args: ["-la", "d"] }).outputSync();'),
    ("ruby", "out = `rm -rf x`", "out = `ls x`"),
    ("ruby", "%x{rm -rf y}", "%x{ls y}"),
    ("ruby", 'system("rm", "-rf", "z")', 'system("ls", "-la", "z")'),
    ("ruby", 'system "rm -rf w" if cleanup', 'system "ls w" if cleanup'),
    ("ruby", 'exec("git push")', 'exec("git status")'),
    ("ruby", 'IO.popen(["rm", "-rf", "io"]).read', 'IO.popen(["ls", "io"]).read'),
    ("ruby", 'require "open3"\nOpen3.capture2("rm -rf o")', 'require "open3"\nOpen3.capture2("ls o")'),
    ("go", 'cmd := exec.Command("rm", "-rf", "/")', 'cmd := exec.Command("ls", "-la", "/")'),
    ("go", 'exec.CommandContext(ctx, "git", "push", "origin", "main").Run()',
     'exec.CommandContext(ctx, "git", "pull", "origin", "main").Run()'),
    ("go", 'exec.Command(`bash`, "-c", `rm -rf raw`)', 'exec.Command(`bash`, "-c", `ls raw`)'),
    ("php", '<?php echo shell_exec("rm -rf x"); ?>', '<?php echo shell_exec("ls x"); ?>'),
    ("php", "exec('rm -rf y', $out);", "exec('ls y', $out);"),
    ("php", "echo `rm -rf z`;", "echo `ls z`;"),
    ("php", 'system("git push");', 'system("git log");'),
    ("php", 'passthru("rm -rf p");', 'passthru("ls p");'),
    ("rust", 'let o = Command::new("rm").arg("-rf").arg("/tmp/x").output()?;',
     'let o = Command::new("ls").arg("-la").arg("/tmp/x").output()?;'),
    ("rust", 'std::process::Command::new("rm").args(["-rf", "y"]).status();',
     'std::process::Command::new("ls").args(["-la", "y"]).status();'),
    ("rust", 'Command::new("git").args(&["push", "origin"]).current_dir(dir).spawn()',
     'Command::new("git").args(&["fetch", "origin"]).current_dir(dir).spawn()'),
    ("perl", 'system("rm -rf x");', 'system("ls x");'),
    ("perl", "system 'rm', '-rf', 'y';", "system 'ls', '-la', 'y';"),
    ("perl", "my $o = `rm -rf z`;", "my $o = `ls z`;"),
    ("perl", "my $o = qx{git push};", "my $o = qx{git status};"),
    ("r", 'system("rm -rf x")', 'system("ls x")'),
    ("r", 'system2("rm", c("-rf", "y"))', 'system2("ls", c("-la", "y"))'),
    ("r", 'system2(command = "git", args = c("push", "origin"))',
     'system2(command = "git", args = c("log", "origin"))'),
    ("elixir", 'System.cmd("rm", ["-rf", "x"])', 'System.cmd("ls", ["-la", "x"])'),
    ("elixir", ":os.cmd('rm -rf y')", ":os.cmd('ls y')"),
    ("elixir", ':os.cmd(~c"git push")', ':os.cmd(~c"git log")'),
    ("csharp", 'Process.Start("rm", "-rf /tmp/x");', 'Process.Start("ls", "-la /tmp/x");'),
    ("csharp", 'var psi = new ProcessStartInfo { FileName = "bash", Arguments = "-c \\"rm -rf y\\"" };',
     'var psi = new ProcessStartInfo { FileName = "bash", Arguments = "-c \\"ls y\\"" };'),
    ("csharp", 'Process.Start(new ProcessStartInfo("git", "push origin"));',
     'Process.Start(new ProcessStartInfo("git", "pull origin"));'),
    ("shell", "cd /tmp && rm -rf x", "cd /tmp && ls x"),
    ("bash", "git push", "git status"),
]


@pytest.mark.parametrize(("language", "denied", "allowed"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_language_escape_is_denied_and_its_harmless_twin_allowed(language: str, denied: str, allowed: str) -> None:
    denial = RULES.check_code(language, denied)
    assert denial is not None, shell_escapes(language, denied)
    assert denial.rule in ("Bash(rm -rf *)", "Bash(git push:*)")
    assert RULES.check_code(language, allowed) is None


def test_a_code_denial_says_which_call_runs_what() -> None:
    rules = DenyRules.from_strings(["Bash(rm -rf *)"], source=".claude/settings.json")
    denial = rules.check_code("python", "import os\nos.system('rm -rf /tmp/cache')")
    assert denial is not None
    assert denial.segment == "rm -rf /tmp/cache"
    assert denial.source == ".claude/settings.json"
    assert "python code would run `rm -rf /tmp/cache` through os.system" in denial.reason
    assert "denied by Bash(rm -rf *) in .claude/settings.json" in denial.reason


@pytest.mark.parametrize(("language", "code"), [
    ("python", '# os.system("rm -rf x")\nprint("done")'),
    ("python", 'print("never call os.system(\'rm -rf x\') in a cell")'),
    ("javascript", '// execSync("rm -rf x")\nconsole.log(1)'),
    ("javascript", '/* spawn("rm", ["-rf", "x"]) */'),
    ("ruby", 'puts "rm -rf x"  # not run'),
    ("ruby", 'puts "see `rm -rf x`"'),
    ("php", '$pdo->exec("rm -rf x");'),  # a PDO method, not a process
    ("perl", 'print "rm -rf x\\n"; # system("rm -rf x")'),
    ("rust", 'let s = "rm -rf x"; Command::new("ls").spawn();'),
    ("go", 'fmt.Println("rm -rf x") // exec.Command("rm", "-rf", "x")'),
])
def test_text_comments_and_other_methods_are_not_escapes(language: str, code: str) -> None:
    assert RULES.check_code(language, code) is None


def test_list_arguments_keep_their_boundaries() -> None:
    escapes = shell_escapes("python", 'subprocess.run(["bash", "-c", "echo hi; rm -rf x"])')
    assert [e.command for e in escapes] == ["bash -c 'echo hi; rm -rf x'"]
    assert RULES.check_code("python", 'subprocess.run(["bash", "-c", "echo hi; rm -rf x"])') is not None


def test_dynamic_arguments_contribute_nothing_but_the_literal_part_is_checked() -> None:
    assert [e.command for e in shell_escapes("go", 'exec.Command("rm", "-rf", dir)')] == ["rm -rf"]
    assert RULES.check_code("go", 'exec.Command("rm", "-rf", dir)') is not None
    assert shell_escapes("python", "subprocess.run(cmd, shell=True)") == []


@pytest.mark.parametrize(("alias", "canonical"), [
    ("Python3", "python"), ("node", "javascript"), ("ts", "typescript"), ("rb", "ruby"), ("golang", "go"),
    ("rs", "rust"), ("pl", "perl"), ("R", "r"), ("exs", "elixir"), ("C#", "csharp"), ("sh", "shell"),
])
def test_language_names_and_aliases(alias: str, canonical: str) -> None:
    assert canonical_language(alias) == canonical


def test_an_unknown_language_is_not_checked() -> None:
    assert RULES.check_code("cobol", 'CALL "SYSTEM" USING "rm -rf x"') is None


def test_a_parenless_call_continues_over_a_trailing_comma() -> None:
    assert [e.command for e in shell_escapes("ruby", 'system "rm",\n  "-rf", "x"\nputs 1')] == ["rm -rf x"]
    assert [e.command for e in shell_escapes("perl", "system 'ls';\nprint 'rm -rf x';")] == ["ls"]


# --- found in review: shell escapes in other languages that a Bash deny rule must still catch ---------

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


_codeish = st.lists(st.sampled_from(list("ab ()[]{},;=:.\"'`#/*%~$@\\\n")
                                    + ["os.system(", "exec(", "system ", "Command::new(",
                                       "%x{", "qx(", "r#\"", "\"\"\"", "rm -rf x"]),
                    max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(code=st.one_of(st.text(max_size=200), _codeish),
       language=st.sampled_from(["python", "javascript", "typescript", "ruby", "go", "php", "rust", "perl", "r",
                                 "elixir", "csharp", "shell"]))
def test_checking_code_never_raises(code: str, language: str) -> None:
    denial = RULES.check_code(language, code)
    assert denial is None or denial.rule in ("Bash(rm -rf *)", "Bash(git push:*)")
