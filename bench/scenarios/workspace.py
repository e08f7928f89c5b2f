"""Builds the whole benchmark project (data, code, a git repo, a web site) in one directory, from fixed seeds."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from . import codebase, tabular
from .gitrepo import RepoFacts, git_repo
from .site import SiteFacts, build_site


@dataclass(frozen=True)
class Workspace:
    project: Path
    site_root: Path
    sales: tabular.SalesFacts
    sensors: tabular.SensorFacts
    shop: tabular.ShopFacts
    app_log: tabular.AppLogFacts
    access: tabular.AccessFacts
    definition_file: str
    big_module: tuple[str, list[str]]
    tests: tuple[int, str, int]
    largest_asset: str
    lock: tuple[int, list[str]]
    loose_requirements: list[str]
    build_error: str
    failing_tests: list[str]
    deprecated_cursor_ops: list[str]
    docs_facts: tuple[str, str]
    config_fact: str
    repo: RepoFacts
    site: SiteFacts


def build(project: Path, site_root: Path) -> Workspace:
    """Every generator gets its own seeded RNG, so adding one never changes the data of another."""

    def rng(seed: int) -> random.Random:
        return random.Random(seed)

    p = project
    return Workspace(
        project=p,
        site_root=site_root,
        sales=tabular.sales_csv(p / "data" / "sales.csv", rng(1)),
        sensors=tabular.sensors_csv(p / "data" / "sensors.csv", rng(2)),
        shop=tabular.shop_db(p / "data" / "shop.db", rng(3)),
        app_log=tabular.app_log(p / "logs" / "app.log", rng(4)),
        access=tabular.access_log(p / "logs" / "access.log", rng(5)),
        definition_file=codebase.source_tree(p / "src", rng(6)),
        big_module=codebase.big_module(p / "engine" / "scheduler.py", rng(7)),
        tests=codebase.test_tree(p / "tests", rng(8)),
        largest_asset=codebase.asset_tree(p / "assets", rng(9)),
        lock=codebase.lockfile(p / "package-lock.json", rng(10)),
        loose_requirements=codebase.requirements(p / "requirements.txt", rng(11)),
        build_error=codebase.build_script(p / "build.sh"),
        failing_tests=codebase.pytest_suite(p / "suite", rng(12)),
        deprecated_cursor_ops=codebase.openapi(p / "api" / "openapi.json", rng(13)),
        docs_facts=codebase.docs_folder(p / "docs", rng(14)),
        config_fact=codebase.app_config(p / "config" / "app.ini", rng(15)),
        repo=git_repo(p / "repo", rng(16)),
        site=build_site(site_root, rng(17)),
    )
