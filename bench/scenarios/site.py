"""A local web site on 127.0.0.1: a large documentation page, an issues API response, and a plain HTML-to-text
converter that stands for what a naive fetch tool puts into the agent's context."""

from __future__ import annotations

import json
import random
import shutil
import threading
from dataclasses import dataclass
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self

from .words import paragraph

REPO = Path(__file__).resolve().parents[2]


class LocalSite:
    """Serves a directory on 127.0.0.1 (an ephemeral port) until the `with` block ends."""

    def __init__(self, root: Path) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="bench-site", daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/{path.lstrip('/')}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


# --- plain HTML to text ------------------------------------------------------------------------

_BLOCK = {"p", "div", "section", "article", "main", "nav", "header", "footer", "aside", "li", "ul", "ol", "tr",
          "table", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "br", "title", "dt", "dd", "form", "blockquote"}
_SKIP = {"script", "style", "noscript", "template", "svg"}


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag == "pre":
            self._pre += 1
        if tag in _BLOCK:
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.parts.append(data if self._pre else " ".join(data.split()) + (" " if data[-1:].isspace() else ""))


def plain_text(html: str) -> str:
    """Every visible text node (navigation, sidebar and footer too), scripts and styles dropped, blank lines
    collapsed: the view of a fetch tool without main-content extraction."""
    parser = _TextParser()
    parser.feed(html)
    lines = [line.rstrip() for line in "".join(parser.parts).splitlines()]
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line)
    return "\n".join(out).strip() + "\n"


# --- the pages ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SiteFacts:
    docs_page: str
    small_page: str
    issues: str
    option: str
    option_default: str
    leak_issue: int
    leak_title: str
    top_open_label: str
    top_open_label_count: int
    oldest_open: int


OPTION_TYPES = ["int", "float", "bool", "str", "duration", "list[str]"]
DEFAULTS = ["5", "0.25", "true", "\"auto\"", "10s", "[]", "100", "2m", "false", "\"info\"", "64", "1.5"]


def build_site(root: Path, rng: random.Random) -> SiteFacts:
    root.mkdir(parents=True, exist_ok=True)
    option, default = _docs_page(root / "docs" / "configuration.html", rng)
    # A small real-looking page shared with the fetch tests: the case where there is little to save.
    shutil.copy(REPO / "tests" / "web" / "pages" / "docs.html", root / "docs" / "widgetlib.html")
    leak, title, label, label_count, oldest = _issues(root / "api" / "issues.json", rng)
    return SiteFacts("docs/configuration.html", "docs/widgetlib.html", "api/issues.json",
                     option, default, leak, title, label, label_count, oldest)


def _docs_page(path: Path, rng: random.Random) -> tuple[str, str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    groups = ["transport", "pool", "retry", "auth", "cache", "logging", "tracing", "tls", "proxy"]
    options: list[tuple[str, str, str, str]] = []
    for g in groups:
        for k in ("enabled", "timeout", "limit", "interval", "mode"):
            options.append((f"{g}.{k}", rng.choice(OPTION_TYPES), rng.choice(DEFAULTS), paragraph(rng, 5)))
    planted = ("retry.max_backoff", "duration", "30s",
               ("Upper bound for the exponential backoff between two retries; the delay doubles from "
                "retry.interval until it reaches this value, then stays there until retry.limit is spent."))
    options.insert(23, planted)
    nav = "".join(f'<li class="toctree-l1"><a href="../{g}/{i}.html">{g.title()} guide part {i}</a></li>'
                  for g in groups for i in range(14))
    toc = "".join(f'<li><a href="#{o[0]}">{o[0]}</a></li>' for o in options)
    sections = []
    for name, typ, default, text in options:
        sections.append(
            f'<section id="{name}"><h2>{name}<a class="headerlink" href="#{name}">¶</a></h2><p>{text}</p>'
            f"<table><tr><th>Type</th><th>Default</th><th>Environment</th></tr><tr><td>{typ}</td>"
            f"<td><code>{default}</code></td><td>ACME_{name.upper().replace('.', '_')}</td></tr></table>"
            f'<div class="highlight-python"><pre>client = acme.Client(config={{"{name}": {default}}})\n'
            f"client.connect()</pre></div><p>{paragraph(rng, 3)}</p></section>")
    script = "<script>" + "var _i=[];" * 800 + "</script>"
    style = "<style>" + ".rst-content .toctree-wrapper{margin:0}" * 300 + "</style>"
    html = (f"<!doctype html><html><head><meta charset='utf-8'><title>Configuration reference — acmeclient 3.2"
            f"</title>{style}{script}</head><body><nav class='wy-nav-side'><form class='search'><input name='q'>"
            f"</form><ul>{nav}</ul></nav><div class='sidebar'><ul>{toc}</ul></div><div role='main'>"
            f"<h1>Configuration reference</h1><p>{paragraph(rng, 4)}</p>{''.join(sections)}</div>"
            f"<footer>© 2024 Acme Corp. Built with Sphinx using a theme provided by Read the Docs."
            f"<a href='#'>Back to top</a></footer></body></html>")
    path.write_text(html)
    return planted[0], planted[2]


def _issues(path: Path, rng: random.Random) -> tuple[int, str, str, int, int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    labels = ["bug", "enhancement", "docs", "parser", "performance", "windows", "good first issue", "question"]
    users = [f"dev{n:03d}" for n in range(60)]
    issues: list[dict[str, object]] = []
    for k in range(420):
        number = 4500 - k
        chosen = sorted(rng.sample(labels, rng.randint(0, 3)))
        issues.append({
            "number": number,
            "title": paragraph(rng, 1)[:70].rstrip(". ").capitalize(),
            "state": "open" if rng.random() < 0.45 else "closed",
            "labels": [{"name": n, "color": f"{rng.randrange(16 ** 6):06x}"} for n in chosen],
            "user": {"login": (u := rng.choice(users)), "id": 1000 + users.index(u),
                     "html_url": f"https://github.example/{u}", "type": "User"},
            "comments": rng.randint(0, 40),
            "created_at": f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
                          f"{rng.randint(0, 59):02d}:00Z",
            "updated_at": "2024-05-02T10:00:00Z",
            "body": paragraph(rng, 4),
        })
    leak_title = "Memory leak in streaming parser when a chunk boundary splits a UTF-8 sequence"
    issues[137].update({"number": 4182, "title": leak_title, "state": "open",
                        "labels": [{"name": "bug", "color": "d73a4a"}, {"name": "parser", "color": "0e8a16"}]})
    path.write_text(json.dumps(issues, separators=(",", ":")))
    open_ = [i for i in issues if i["state"] == "open"]
    counts: dict[str, int] = {}
    for i in open_:
        for lab in i["labels"]:  # type: ignore[attr-defined]
            counts[lab["name"]] = counts.get(lab["name"], 0) + 1
    label, label_count = max(counts.items(), key=lambda kv: kv[1])
    oldest = min(open_, key=lambda i: str(i["created_at"]))
    return 4182, leak_title, label, label_count, int(oldest["number"])  # type: ignore[call-overload]
