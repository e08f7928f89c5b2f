"""Splitting a command line into the simple commands it runs, and normalising each."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from context_kernel.shell import Redirect, commands, normalize, split_commands

SPLITS = [
    ("echo hi && rm -rf /tmp/x", ["echo hi", "rm -rf /tmp/x"]),
    ("a || b; c", ["a", "b", "c"]),
    ("ls | grep x |& tee out", ["ls", "grep x", "tee out"]),
    ("sleep 1 & rm -rf z", ["sleep 1", "rm -rf z"]),
    ("a\nb\n\nc", ["a", "b", "c"]),
    ("case x in a) echo;; esac", ["case x in a", "echo", "esac"]),
    # operators inside quotes are text
    ('echo "a && b; c | d"', ['echo "a && b; c | d"']),
    ("echo 'x;y|z&w'", ["echo 'x;y|z&w'"]),
    ("echo $'a;b'", ["echo $'a;b'"]),
    # an escaped quote is no quote, so the `;` splits; inside double quotes \" stays inside
    ('echo \\"hi; there\\"', ['echo \\"hi', 'there\\"']),
    ('echo "a \\" ; rm -rf x"', ['echo "a \\" ; rm -rf x"']),
    ("echo a\\;b", ["echo a\\;b"]),
    # redirections are not operators
    ("ls 2>&1 | grep a", ["ls 2>&1", "grep a"]),
    ("cmd &> out", ["cmd &> out"]),
    ("cmd >| out", ["cmd >| out"]),
    # line continuation joins
    ("rm -rf \\\n  x", ["rm -rf   x"]),
    # substitutions are split on their own, after the piece holding them
    ("echo $(rm -rf x)", ["echo $(rm -rf x)", "rm -rf x"]),
    ("echo `rm -rf x`", ["echo `rm -rf x`", "rm -rf x"]),
    ("echo $(echo $(rm -rf deep))", ["echo $(echo $(rm -rf deep))", "echo $(rm -rf deep)", "rm -rf deep"]),
    ("echo `echo \\`rm -rf nested\\``", ["echo `echo \\`rm -rf nested\\``", "echo `rm -rf nested`", "rm -rf nested"]),
    ('echo "$(rm -rf inq)"', ['echo "$(rm -rf inq)"', "rm -rf inq"]),
    ('echo "`rm -rf inq`"', ['echo "`rm -rf inq`"', "rm -rf inq"]),
    ("echo '$(rm -rf no)' '`rm -rf no`'", ["echo '$(rm -rf no)' '`rm -rf no`'"]),
    ("cat <(rm -rf p) >(tee q)", ["cat <(rm -rf p) >(tee q)", "rm -rf p", "tee q"]),
    ("echo $(a; b && c)", ["echo $(a; b && c)", "a", "b", "c"]),
    ("x=$(rm -rf unclosed", ["x=$(rm -rf unclosed", "rm -rf unclosed"]),
    # subshells and groups
    ("(cd x && rm -rf w)", ["cd x", "rm -rf w"]),
    ("f() { rm -rf u; }", ["f", "{ rm -rf u", "}"]),
    # comments
    ("echo hi # && rm -rf c", ["echo hi"]),
    ("echo a#b", ["echo a#b"]),
    ("", []),
    ("   ;; && ", []),
]


@pytest.mark.parametrize(("line", "expected"), SPLITS)
def test_a_line_splits_into_its_pieces(line: str, expected: list[str]) -> None:
    assert split_commands(line) == expected


NORMALISED = [
    ("FOO=1 BAR='a b' rm -rf x", "rm -rf x"),
    ("sudo rm -rf x", "rm -rf x"),
    ("sudo -u root -E rm -rf x", "rm -rf x"),
    ("FOO=1 sudo rm -rf x", "rm -rf x"),
    ("env -i A=1 B=2 rm -rf x", "rm -rf x"),
    ("env -S 'rm -rf x'", "rm -rf x"),
    ("command rm -rf x", "rm -rf x"),
    ("exec rm -rf x", "rm -rf x"),
    ("time -p rm -rf x", "rm -rf x"),
    ("nohup rm -rf x", "rm -rf x"),
    ("nice -n 5 timeout -s KILL 10 rm -rf x", "rm -rf x"),
    ("ionice -c3 rm -rf x", "rm -rf x"),
    ("ionice --class 2 -n 7 -t rm -rf x", "rm -rf x"),
    ("stdbuf --output L -e0 rm -rf x", "rm -rf x"),
    ("chrt -o 0 rm -rf x", "rm -rf x"),
    ("chrt --sched-runtime 5 -d 0 rm -rf x", "rm -rf x"),
    ("taskset -c 0,2 rm -rf x", "rm -rf x"),
    ("setsid -w rm -rf x", "rm -rf x"),
    ("flock -n -w 3 /tmp/lock rm -rf x", "rm -rf x"),
    ("flock /tmp/lock -c 'rm -rf x'", "flock /tmp/lock -c 'rm -rf x'"),  # a script: opened like bash -c
    ("if true", "true"),
    ("then rm -rf q", "rm -rf q"),
    ("! rm -rf q", "rm -rf q"),
    ("{ rm -rf u", "rm -rf u"),
    ("rm    -rf \t x", "rm -rf x"),
    (">out rm -rf x", "rm -rf x"),
    ("2> /dev/null rm -rf x", "rm -rf x"),
    ('echo "a   b"', 'echo "a   b"'),
    ("command -v rm", "command -v rm"),  # a lookup, not a run
]


@pytest.mark.parametrize(("piece", "expected"), NORMALISED)
def test_a_piece_is_normalised(piece: str, expected: str) -> None:
    cmd = normalize(piece)
    assert cmd is not None
    assert cmd.text == expected


@pytest.mark.parametrize("piece", ["FOO=1", "sudo", "2>&1", "{", "  "])
def test_a_piece_with_no_command_normalises_to_nothing(piece: str) -> None:
    assert normalize(piece) is None


def test_words_lose_their_quotes_and_programs_their_directory() -> None:
    cmd = normalize("/bin/r\"m\" -rf 'my dir'")
    assert cmd is not None
    assert cmd.words == ("/bin/rm", "-rf", "my dir")
    assert cmd.forms() == ("/bin/r\"m\" -rf 'my dir'", "/bin/rm -rf my dir", "rm -rf my dir")


@pytest.mark.parametrize(("line", "inner"), [
    ('bash -c "rm -rf x"', "rm -rf x"),
    ("sh -c 'a; rm -rf y'", "rm -rf y"),
    ("/usr/bin/zsh -lc 'rm -rf z'", "rm -rf z"),
    ("sudo bash -e -c 'rm -rf w'", "rm -rf w"),
    ('eval "rm -rf e"', "rm -rf e"),
    ("bash -c \"bash -c 'rm -rf twice'\"", "rm -rf twice"),
    ("echo $(sh -c 'rm -rf sub')", "rm -rf sub"),
])
def test_scripts_given_to_another_shell_are_opened(line: str, inner: str) -> None:
    assert inner in [c.text for c in commands(line)]


@pytest.mark.parametrize("line", ["bash <<'EOF'\nrm -rf x\nEOF", "sh -s -- a b <<EOF\nrm -rf x\nEOF",
                                  "sudo bash - <<EOF\nrm -rf x\nEOF"])
def test_a_heredoc_given_to_a_shell_is_its_script(line: str) -> None:
    assert ("rm -rf x", "script") in [(c.text, c.origin) for c in commands(line, heredoc_lines=False)]


def test_a_heredoc_given_to_a_shell_with_a_script_file_or_c_is_input() -> None:
    assert [c.origin for c in commands("bash run.sh <<EOF\nrm -rf x\nEOF", heredoc_lines=False)] == ["line"]


def test_a_script_file_argument_is_not_a_script_body() -> None:
    assert [c.text for c in commands("bash deploy.sh -c 'rm -rf x'")] == ["bash deploy.sh -c 'rm -rf x'"]


def test_heredoc_bodies_are_split_like_commands() -> None:
    # Documented over-denial: a heredoc body may be a script (`bash <<EOF`), so it is checked.
    assert "rm -rf x" in [c.text for c in commands("cat <<EOF\nrm -rf x\nEOF")]


def test_heredoc_bodies_are_set_aside_so_their_quotes_hide_nothing() -> None:
    # An apostrophe in a heredoc body is text: the commands after the delimiter line are still found.
    assert [c.text for c in commands("cat <<EOF > notes.md\ndon't\nEOF\nrm -rf x")] == ["cat", "rm -rf x", "don't"]
    # Inside $( ) too: Claude Code writes commit messages this way.
    line = "git commit -m \"$(cat <<'EOF'\nDon't crash\nEOF\n)\" && git push"
    assert [c.text for c in commands(line) if c.origin == "line"][-1] == "git push"


def test_a_heredoc_body_belongs_to_the_command_that_reads_it() -> None:
    [cat, ls] = commands("cat <<-'EOF' > out.txt\n\tone\n\ttwo\n\tEOF\nls", heredoc_lines=False)
    assert (cat.heredocs, cat.redirects) == (("one\ntwo",), (Redirect("<<-", "EOF"), Redirect(">", "out.txt")))
    assert ls.text == "ls"
    both = commands("cat <<A <<'B'\necho one\nA\necho two\nB")
    assert both[0].heredocs == ("echo one", "echo two")
    assert [(c.text, c.origin) for c in both[1:]] == [("echo one", "heredoc"), ("echo two", "heredoc")]
    # bash also ends a heredoc inside $( ) at `EOF)`
    assert commands("x=$(cat <<EOF\na\nEOF)\nrm -rf y", heredoc_lines=False)[0].text == "rm -rf y"
    # `<<` inside (( )) is a shift, not a heredoc: the next lines are commands
    assert "rm -rf z" in [c.text for c in commands("(( x = 1 << 2 ))\nrm -rf z", heredoc_lines=False)]


def test_redirections_are_kept_apart_from_the_words() -> None:
    cmd = normalize("2>/dev/null curl -s https://a.io > page.html 2>&1 &>>log")
    assert cmd is not None
    assert cmd.words == ("curl", "-s", "https://a.io")
    assert cmd.redirects == (Redirect(">", "/dev/null", "2"), Redirect(">", "page.html"), Redirect(">&", "1", "2"),
                             Redirect("&>>", "log"))
    assert cmd.stdout_to_file()


@pytest.mark.parametrize(("piece", "to_file"), [
    ("curl x > f", True), ("curl x >> f", True), ("curl x 1> f", True), ("curl x >| f", True),
    ("curl x &> f", True), ("curl x >& f", True), ("curl x >/dev/null", True),
    ("curl x 2> f", False), ("curl x 2>&1", False), ("curl x >&2", False), ("curl x < in", False), ("curl x", False),
])
def test_whether_stdout_goes_to_a_file(piece: str, to_file: bool) -> None:
    cmd = normalize(piece)
    assert cmd is not None
    assert cmd.stdout_to_file() is to_file


def test_pipelines_stages_origins_and_parents() -> None:
    got = commands("a | b |& c && d; x=$(e | f) bash -c 'g | h' | i")
    table = [(c.text, c.origin, c.stage, c.parent.text if c.parent else None) for c in got]
    assert table == [
        ("a", "line", 0, None), ("b", "line", 1, None), ("c", "line", 2, None), ("d", "line", 0, None),
        ("bash -c 'g | h'", "line", 0, None), ("g", "script", 0, "bash -c 'g | h'"),
        ("h", "script", 1, "bash -c 'g | h'"), ("i", "line", 1, None),
        ("e", "substitution", 0, None), ("f", "substitution", 1, None),
    ]
    pipeline = {c.text: c.pipeline for c in got}
    assert pipeline["a"] == pipeline["b"] == pipeline["c"] != pipeline["d"]
    assert pipeline["bash -c 'g | h'"] == pipeline["i"] != pipeline["g"] == pipeline["h"] != pipeline["e"]
    # a script inside a substitution is captured too; a substitution inside a script is a substitution
    assert [c.origin for c in commands("x=$(bash -c 'curl y')")] == ["substitution", "substitution"]
    assert [c.origin for c in commands("bash -c 'x=$(curl y)'")] == ["line", "substitution"]


def test_a_group_passes_its_redirections_to_its_commands() -> None:
    got = commands("{ a; { b; } 2>/dev/null; } > f\n(c; d) >> g\ne")
    assert [(c.text, [(r.fd, r.op, r.target) for r in c.redirects]) for c in got] == [
        ("a", [("", ">", "f")]), ("b", [("2", ">", "/dev/null"), ("", ">", "f")]),
        ("c", [("", ">>", "g")]), ("d", [("", ">>", "g")]), ("e", [])]


def test_an_open_quote_or_substitution_marks_its_line() -> None:
    # bash refuses the whole line (earlier lines still run)
    assert [(c.text, c.unterminated) for c in commands("pwd\nls; curl 'https://a.io/x")] == [
        ("pwd", False), ("ls", True), ("curl 'https://a.io/x", True)]
    assert [c.unterminated for c in commands('echo "$(date)" `pwd` $(id)')] == [False, False, False, False]
    assert commands("echo $(date")[0].unterminated


def test_nesting_past_the_depth_limit_is_still_checked() -> None:
    line = "echo " + "$(" * 200 + "rm -rf x" + ")" * 200
    assert "rm -rf x" in split_commands(line)
    chain = "eval " * 40 + "rm -rf x"
    assert "rm -rf x" in [c.text for c in commands(chain)]


_shellish = st.lists(st.sampled_from([*"ab -=;&|()$`'\"\\\n#{}<>!", "rm -rf x", "bash -c ", "eval ", "$(", "<<EOF",
                                      "<<-'EOF'", "\nEOF\n", "EOF)", "(("]),
                     max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(line=st.one_of(st.text(max_size=200), _shellish))
def test_splitting_never_raises_and_a_planted_command_is_found(line: str) -> None:
    assert isinstance(commands(line), list)
    # Whatever came before, a command on its own line after it is found, unless the text before
    # left a quote, a substitution or an escape open: those swallow the rest, as in the shell.
    found = [c.text for c in commands(line + "\nrm -rf planted")]
    balanced = "'" not in line and '"' not in line and "`" not in line and "(" not in line and "\\" not in line
    if balanced:
        assert "rm -rf planted" in found
