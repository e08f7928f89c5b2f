"""Intent that finds the line in ordinary outputs (issue 28's three repros): the install lines of the package asked
about in a dpkg log full of other installs; the deepest earthquake of a pandas table printed whole; the heaviest
penguin of an R data.frame that R wraps into blocks of columns — each with the header line that says what its
numbers are."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


def dpkg_log() -> str:
    """A dpkg.log of 300 package installs, postgresql's among them (each install is six lines, as dpkg writes)."""
    rng = random.Random(7)
    names = [f"lib{w}{i}-dev" for i, w in enumerate(rng.choices(["gpg-error", "ssl", "xml", "z", "ffi"], k=290))]
    names[150:150] = ["postgresql-client-common", "postgresql-common", "postgresql-client-15", "postgresql-15",
                      "postgresql", "postgresql-contrib"]
    names += ["build-essential"] * 4
    out = []
    for i, name in enumerate(names):
        ts = f"2026-05-20 16:{i // 60:02d}:{i % 60:02d}"
        version = f"{rng.randint(1, 20)}.{rng.randint(0, 9)}-1"
        arch = "all" if name.startswith("postgresql") and i % 2 else "amd64"
        what = f"{name}:{arch}"
        out += [f"{ts} install {what} <none> {version}", f"{ts} status half-installed {what} {version}",
                f"{ts} status unpacked {what} {version}", f"{ts} configure {what} {version} <none>",
                f"{ts} status half-configured {what} {version}", f"{ts} status installed {what} {version}"]
    return "\n".join(out) + "\n"


async def test_the_install_lines_of_the_package_asked_about(client: Client, project: Path) -> None:
    (project / "dpkg.log").write_text(dpkg_log())
    reply = text_of(await client.call_tool("ctx_execute", {"language": "shell", "code": "cat dpkg.log",
                                                           "intent": "when was postgresql installed"}))
    installs = [line for line in reply.splitlines() if " install postgresql" in line]
    assert len(installs) >= 3, reply
    assert len(reply.encode()) <= 4096


async def test_the_deepest_earthquake_of_a_pandas_table_with_its_header(client: Client) -> None:
    code = ("import pandas as pd, numpy as np\nrng = np.random.default_rng(3)\nn = 400\n"
            "q = pd.DataFrame({'time': pd.date_range('2024-03-01', periods=n, freq='5h').strftime('%Y-%m-%dT%H:%M'),"
            " 'latitude': rng.uniform(-60, 60, n).round(4), 'longitude': rng.uniform(-180, 180, n).round(4),"
            " 'depth': rng.uniform(1, 300, n).round(2), 'mag': rng.uniform(2.5, 6.5, n).round(1),"
            " 'place': rng.choice(['Fiji region', 'Kermadec Islands', 'central Alaska', 'Banda Sea'], n)})\n"
            "q.loc[217, ['depth', 'place']] = [662.31, 'Tonga Trench']\nprint(q.to_string())")
    reply = text_of(await client.call_tool("ctx_execute", {"language": "python", "code": code,
                                                           "intent": "deepest earthquake"}))
    assert "662.31" in reply and "Tonga Trench" in reply, reply
    assert any("depth" in line and "latitude" in line for line in reply.splitlines()), reply  # its header


async def test_the_heaviest_penguin_of_a_wrapped_r_frame_with_its_block_header(client: Client) -> None:
    code = ("set.seed(5); n <- 300; options(width = 80)\n"
            "p <- data.frame(species = sample(c('Adelie', 'Chinstrap', 'Gentoo'), n, TRUE),"
            " island = sample(c('Biscoe', 'Dream', 'Torgersen'), n, TRUE),"
            " bill_length_mm = round(runif(n, 32, 60), 1), bill_depth_mm = round(runif(n, 13, 21), 1),"
            " flipper_length_mm = sample(172:231, n, TRUE), body_mass_g = sample(2700:6000, n, TRUE),"
            " sex = sample(c('female', 'male'), n, TRUE), year = sample(2007:2009, n, TRUE),"
            " study_name = sample(c('PAL0708', 'PAL0809', 'PAL0910'), n, TRUE))\n"
            "p$body_mass_g[123] <- 6300L\nprint(p)")
    reply = text_of(await client.call_tool("ctx_execute", {"language": "r", "code": code,
                                                           "intent": "heaviest penguin body mass"}))
    lines = reply.splitlines()
    row = [line for line in lines if "6300" in line]
    assert row and any("body_mass_g" in line for line in lines), reply
