"""Code that moves a kernel into the folder the session's cells ran in, per language: the first cell of an exported
notebook. JupyterLab and `nbconvert --execute` start a notebook's kernel in the notebook's own folder, where the
session's relative paths (`data/sales.csv`) are not; with this cell they are, when that folder exists on the
reader's machine. Where it does not, the cell says so and stays put. It prints nothing when it worked."""

from __future__ import annotations

import json
import shlex

_NOT_HERE = "context-kernel: the session ran in {where}, which is not here; relative paths resolve from"


def python_chdir(path: str) -> str:
    where = json.dumps(path, ensure_ascii=False)  # a JSON string is a Python string literal
    return (f"# {_COMMENT}\nimport os as _os\nif _os.path.isdir({where}):\n    _os.chdir({where})\nelse:\n"
            f"    print({json.dumps(_NOT_HERE.format(where=path))}, _os.getcwd())\ndel _os")


def shell_chdir(path: str) -> str:
    where = shlex.quote(path)
    return f'# {_COMMENT}\ncd {where} 2>/dev/null || echo {shlex.quote(_NOT_HERE.format(where=path))} "$PWD"'


def r_chdir(path: str) -> str:
    where = json.dumps(path, ensure_ascii=False)  # R reads a JSON string as its string literal
    return (f"# {_COMMENT}\nif (dir.exists({where})) setwd({where}) else "
            f"cat({json.dumps(_NOT_HERE.format(where=path))}, getwd(), '\\n')")


def node_chdir(path: str) -> str:
    where = json.dumps(path, ensure_ascii=False)
    return (f"// {_COMMENT}\nif (require('fs').existsSync({where})) process.chdir({where});\n"
            f"else console.log({json.dumps(_NOT_HERE.format(where=path))}, process.cwd());")


_COMMENT = "context-kernel: run the cells in the folder the session ran them in (replay skips this cell)"
