"""The two servers under test, each started as its users start it: a process over stdio, spoken to by
the MCP SDK's own client. Ours (`context-kernel serve`) and the reference (npm context-mode).

An engine knows how to start its server on a given data directory, where that server keeps its
index (so a copy of it can be taken and a fresh process started on the copy), and how to read the
sources of the hits in a reply.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
REFERENCE = "context-mode@1.0.169"


@dataclass(frozen=True)
class Engine:
    name: str

    def params(self, home: Path, project: Path) -> StdioServerParameters:
        raise NotImplementedError

    def databases(self, home: Path) -> list[Path]:
        """The SQLite files that hold the index under `home`."""
        raise NotImplementedError

    def sources(self, reply: str) -> list[str]:
        """The source label of each hit, in order."""
        raise NotImplementedError

    def snapshot(self, home: Path, into: Path) -> None:
        """A consistent copy of the index (the server may still be writing): SQLite's backup API per file."""
        for db in self.databases(home):
            target = into / db.relative_to(home)
            target.parent.mkdir(parents=True, exist_ok=True)
            src = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)
            dst = sqlite3.connect(target)
            try:
                src.backup(dst)
            finally:
                dst.close()
                src.close()


@dataclass(frozen=True)
class Ours(Engine):
    name: str = "ours"
    semantic: bool = True
    extra_env: tuple[tuple[str, str], ...] = ()

    def params(self, home: Path, project: Path) -> StdioServerParameters:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXT_KERNEL_")}
        env.update(CONTEXT_KERNEL_HOME=str(home), **dict(self.extra_env))
        if not self.semantic:
            env["CONTEXT_KERNEL_SEMANTIC"] = "0"
        exe = Path(sys.executable).with_name("context-kernel")
        return StdioServerParameters(command=str(exe), args=["serve", "--project", str(project)], env=env,
                                     cwd=str(project))

    def databases(self, home: Path) -> list[Path]:
        return [home / "context-kernel.sqlite3"]

    def sources(self, reply: str) -> list[str]:
        return [m.strip() for m in re.findall(r"^### .* — source: (.+?)(?: \(same text in .*\))?$", reply, re.M)]


@dataclass(frozen=True)
class Reference(Engine):
    name: str = "reference"
    install_dir: Path = Path("/tmp/context-mode-ref")

    def install(self) -> None:
        cli = self.install_dir / "node_modules" / "context-mode" / "cli.bundle.mjs"
        node = self.install_dir / "node_modules" / ".bin" / "node"
        if cli.exists() and node.exists():
            return
        self.install_dir.mkdir(parents=True, exist_ok=True)
        print(f"installing {REFERENCE} and node@22 into {self.install_dir} …", file=sys.stderr)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", REFERENCE, "node@22"],
                       cwd=self.install_dir, check=True, timeout=900)

    def params(self, home: Path, project: Path) -> StdioServerParameters:
        node = self.install_dir / "node_modules" / ".bin" / "node"
        cli = self.install_dir / "node_modules" / "context-mode" / "cli.bundle.mjs"
        env = dict(os.environ, HOME=str(home), CONTEXT_MODE_PROJECT_DIR=str(project),
                   NODE_NO_WARNINGS="1")
        return StdioServerParameters(command=str(node), args=[str(cli)], env=env, cwd=str(project))

    def databases(self, home: Path) -> list[Path]:
        root = home / ".claude" / "context-mode"
        return sorted(root.rglob("*.db")) if root.is_dir() else []

    def sources(self, reply: str) -> list[str]:
        # `--- [session | time | label] ---`; a file indexed from a directory is `dir:dir/file`.
        return [m.split(":", 1)[-1].strip() if m.startswith("/") else m.strip()
                for m in re.findall(r"^--- \[[^|\]]*\|[^|\]]*\| (.+)\] ---$", reply, re.M)]


def copy_home(engine: Engine, snapshot: Path, into: Path) -> None:
    """A fresh data directory holding the snapshot's index (nothing else: logs and sockets are per process)."""
    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(snapshot, into)
