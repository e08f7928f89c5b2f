"""A fetched body turned into indexable text: decode it, tell what it really is, convert it.

Pure functions: bytes and headers in, a `Converted` out; no network, no files. Whatever a page
holds, `convert` returns or raises `UnsupportedContent`, never anything else.

HTML goes through readability-lxml for the main content, then to Markdown with
html-to-markdown. We tried markdownify, html2text and html-to-markdown on the same pages:
html2text writes code as indented blocks (the language is lost, fences are what the chunker
keeps whole) and tables in a non-GFM form; markdownify keeps fences but ignores the language
unless called back, leaves `|` unescaped inside table cells (the row splits) and a fence inside
code closes the block early, and it recurses per nesting level (RecursionError on deep pages,
~1 s for a 2 MB page). html-to-markdown writes ATX headings, GFM pipe tables with `\\|`
escaped, longer fences around code that holds ```, reads `language-*`/`lang-*`, keeps the text
of tab panels a browser hides at first, caps its own depth and converts 2 MB in ~50 ms.
Languages it does not read (GitHub's `highlight-source-*`, Sphinx's `highlight-*`, pandoc's
`sourceCode python`, `data-lang`) are moved onto `<code class="language-*">` here first.
"""

from __future__ import annotations

import codecs
import html
import json
import re
from dataclasses import dataclass
from posixpath import splitext
from urllib.parse import urlsplit

import charset_normalizer
import html_to_markdown
import lxml.html
from lxml import etree
from readability import Document

from context_kernel.errors import ContextKernelError

# readability keeping less than this share of the cleaned page's text means it picked one
# section of an index or reference page, not an article: convert the whole cleaned page.
MIN_READABILITY_SHARE = 0.3
# readability parses three times and scores every node in Python, ~2 s per MB of cleaned HTML;
# pages past this are single-page references, where the whole page is the answer anyway.
MAX_READABILITY_CHARS = 1_000_000
SNIFF_BYTES = 8192

# Most binary formats have a NUL in their first bytes; these may not, or deserve a better name.
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
          (b"%PDF-", "a PDF document"), (b"PK\x03\x04", "a ZIP archive"), (b"\x1f\x8b", "gzip data"))
_BINARY_TOP = frozenset({"image", "audio", "video", "font", "model"})
_BINARY_TYPES = frozenset({  # refused even when the bytes would decode: they are not documents we read
    "application/pdf", "application/zip", "application/gzip", "application/x-gzip", "application/x-tar",
    "application/x-bzip2", "application/x-xz", "application/x-7z-compressed", "application/vnd.rar",
    "application/wasm", "application/java-archive", "application/msword", "application/epub+zip"})
_TEXT_APPLICATION = frozenset({  # application/* types that are text; other unknown ones are sniffed
    "application/xml", "application/javascript", "application/ecmascript", "application/x-javascript",
    "application/x-sh", "application/sql", "application/yaml", "application/x-yaml", "application/toml",
    "application/graphql", "application/x-ndjson", "application/rtf"})


@dataclass(frozen=True)
class Converted:
    text: str            # what gets indexed
    name: str            # a file-like name that selects the chunker: "page.md", "data.json", "page.txt"
    title: str | None    # page title when known
    kind: str            # "html" | "html-fallback" | "json" | "json-invalid" | "markdown" | "text"


class UnsupportedContent(ContextKernelError):
    """The body is binary (image, PDF, archive, ...): nothing in it can be indexed as text."""

    hint = "Look for an HTML or text version of it, or download the file and read it with code in a kernel."

    def __init__(self, content_type: str, detected: str | None = None) -> None:
        what = f"{detected} (served as {content_type})" if detected else f"{content_type} content"
        super().__init__(f"cannot index {what}: only text, HTML, JSON and markdown are indexed")
        self.content_type = content_type
        self.detected = detected


# --- decoding -------------------------------------------------------------------------------

_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?\s*([\w.:+-]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([\w.:+-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([\w.:+-]+)""")
# Browsers decode these labels as the superset (WHATWG Encoding): a page labelled ISO-8859-1
# with curly quotes at 0x93/0x94 is cp1252, and Shift_JIS pages use cp932's extra characters.
_SUPERSET = {"iso8859-1": "cp1252", "ascii": "cp1252", "iso8859-9": "cp1254", "shift_jis": "cp932",
             "gb2312": "gb18030", "gbk": "gb18030", "euc_kr": "cp949", "tis-620": "cp874", "iso8859-11": "cp874"}
_NOT_CHARSETS = frozenset({"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape", "utf-7"})
_LABEL_ALIASES = {"windows-31j": "cp932", "x-sjis": "cp932", "x-gbk": "gbk", "x-euc-jp": "euc_jp"}
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode_body(body: bytes, content_type: str | None) -> str:
    """The body as text; undecodable bytes become U+FFFD, it never raises.

    Order: a BOM (it is in the bytes, so it beats a header that contradicts it, as in browsers),
    the header's charset, for markup `<meta charset>` or an XML declaration in the first 4 KB,
    strict UTF-8, then charset-normalizer's guess, then cp1252. NULs are dropped.
    """
    try:
        text = body.decode(_encoding_of(body, content_type), errors="replace")
    except (LookupError, UnicodeError, ValueError):  # a codec that refuses errors="replace"
        text = body.decode("utf-8", errors="replace")
    return text.replace("\x00", "")


def _encoding_of(body: bytes, content_type: str | None) -> str:
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return codec
    if (param := _CHARSET_PARAM.search(content_type or "")) and (declared := _codec(param.group(1))):
        return declared
    head, media = body[:4096], _media_type(content_type)
    # Only markup is searched: a `<meta charset>` in JSON or markdown is an example, not a label.
    if "html" in media or media.endswith("xml") or (_is_sniffable(media) and head.lstrip()[:1] == b"<"):
        label = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
        if label and (declared := _codec(label.group(1).decode("ascii"))):
            # A page that could declare itself in ASCII is not UTF-16, whatever it says.
            return "utf-8" if declared.startswith(("utf-16", "utf-32")) else declared
    try:
        body.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        best = charset_normalizer.from_bytes(body[:65536]).best()
        return best.encoding if best is not None and _codec(best.encoding) else "cp1252"


def _codec(label: str) -> str | None:
    """Python's codec for a charset label, or None. Headers are untrusted: Python also has codecs
    that are not charsets (base64, rot13, zlib, unicode-escape) and must never be picked."""
    label = label.strip().lower()
    try:
        name = codecs.lookup(_LABEL_ALIASES.get(label, label)).name
        b"a".decode(name, "replace")  # LookupError for bytes-to-bytes codecs (empty input skips the check)
    except (LookupError, UnicodeError):
        return None
    return None if name in _NOT_CHARSETS else _SUPERSET.get(name, name)


# --- routing, JSON, text --------------------------------------------------------------------

def convert(body: bytes, content_type: str | None, url: str) -> Converted:
    """Index-ready text for a fetched body. Raises UnsupportedContent for binary bodies only."""
    media = _media_type(content_type)
    _refuse_binary(body, media, content_type)
    text = decode_body(body, content_type)
    route = _route(media, text, url)
    if route == "html":
        try:
            return _convert_html(text, url)
        except Exception:  # noqa: BLE001 - lxml failing on a page nobody foresaw: its words, not a crash
            return _words_only(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if route == "json":
        return _convert_json(text)
    if route == "markdown":
        return Converted(text, "page.md", _first_h1(text), "markdown")
    return Converted(text, "page.txt", None, "text")


def _refuse_binary(body: bytes, media: str, content_type: str | None) -> None:
    served = media or "no Content-Type"
    if media.split("/", 1)[0] in _BINARY_TOP or media in _BINARY_TYPES:
        raise UnsupportedContent(served)
    head = body[:SNIFF_BYTES]
    for magic, description in _MAGIC:
        if head.startswith(magic):
            raise UnsupportedContent(served, description)
    # UTF-16 and UTF-32 text is full of NULs; anything else with one is binary.
    wide = any(head.startswith(bom) for bom, codec in _BOMS if codec != "utf-8-sig") or re.search(
        r"charset\s*=\s*[\"']?utf-(16|32)", content_type or "", re.IGNORECASE)
    if b"\x00" in head and not wide:
        raise UnsupportedContent(served, "binary data")
    if _is_opaque(media):
        try:  # an opaque type is taken as text only when it is plainly UTF-8
            codecs.getincrementaldecoder("utf-8")().decode(head, final=len(body) <= SNIFF_BYTES)
        except UnicodeDecodeError:
            raise UnsupportedContent(served, "binary data") from None


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _is_opaque(media: str) -> bool:
    """Types that say nothing about the bytes: octet-stream and unknown application/* or other."""
    if not media or media.startswith("text/") or media in _TEXT_APPLICATION:
        return False
    return not media.endswith(("+json", "+xml", "/json"))


def _is_sniffable(media: str) -> bool:
    """Types servers put on anything: what the bytes look like decides."""
    return not media or media == "text/plain" or _is_opaque(media)


# A comment body is matched by a token that cannot run past "-->": with `.*?` a run of comments
# can be split in 2^n ways and a failed match backtracks through all of them.
_HTML_START = re.compile(
    r"\s*(?:<\?xml[^>]*>\s*)?(?:<!--(?:[^-]|-(?!->))*-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.IGNORECASE)


def _route(media: str, text: str, url: str) -> str:
    if media in ("text/html", "application/xhtml+xml"):
        return "html"
    if media.endswith(("/json", "+json")):
        return "json"
    if media in ("text/markdown", "text/x-markdown"):
        return "markdown"
    if not _is_sniffable(media):
        return "text"
    if _HTML_START.match(text[:4096]):
        return "html"
    if text.lstrip()[:1] in ("{", "[") and _parse_json(text) is not _INVALID:
        return "json"
    if splitext(_path_of(url))[1].lower() in (".md", ".markdown", ".mdx"):
        return "markdown"
    return "text"


def _path_of(url: str) -> str:
    try:
        return urlsplit(url).path
    except ValueError:  # "http://[::1": not ours to judge here
        return ""


_INVALID = object()


def _parse_json(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: thousands of nested brackets
        return _INVALID


def _convert_json(text: str) -> Converted:
    if not text.strip():
        return Converted("", "data.json", None, "json")
    data = _parse_json(text)
    if data is _INVALID:
        return Converted(text, "data.txt", None, "json-invalid")
    try:
        return Converted(json.dumps(data, indent=2, ensure_ascii=False), "data.json", None, "json")
    except RecursionError:  # parsed, but too deep to write back: keep it as sent
        return Converted(text, "data.json", None, "json")


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _first_h1(markdown: str) -> str | None:
    """The first ATX level-1 heading outside code fences (a `# comment` in bash is not one)."""
    fence = ""
    for line in markdown.splitlines():
        if match := _FENCE.match(line):
            marker = match.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker):]:
                fence = ""
        elif not fence and line.startswith("# "):
            return line[2:].strip().strip("#").strip() or None
    return None


# --- HTML -----------------------------------------------------------------------------------

_XML_DECL = re.compile(r"^\s*<\?xml[^>]*>")  # lxml refuses str input that declares an encoding
_TAG = re.compile(r"<[^<>]*>")  # [^<>]: each scan stops at the next "<", so linear on any input
_BLOCK_TAG = re.compile(r"<(?:br|/?(?:p|div|h[1-6]|li|dt|dd|tr|pre|table|section|article|blockquote))\b[^<>]*>",
                        re.IGNORECASE)
_RAW_TEXT_START = re.compile(r"<(script|style)\b", re.IGNORECASE)
_NEVER_CONTENT = ("script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
                  "canvas", "button")
_CHROME = ("nav", "footer", "aside", "form")
_CHROME_ROLES = "//*[@role='navigation' or @role='banner' or @role='contentinfo']"
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# A start tag this long is attribute soup: libxml2 checks attribute names pairwise, so 200k
# attributes take minutes to parse. Only the attributes conversion reads are kept.
_SOUP_TAG = re.compile(r"<([a-zA-Z][\w:-]*)(\s[^<>]{2048,})>")
_ATTRIBUTE = re.compile(r"""([^\s=/<>"']+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?""")
_KEPT_ATTRIBUTES = frozenset({"href", "src", "alt", "title", "class", "id", "lang", "data-lang", "data-language",
                              "role", "hidden", "colspan", "rowspan", "start", "charset", "http-equiv", "content"})
_ANCHOR_MARKS = frozenset({"¶", "#", "§", "🔗", "\u200b", "link", "permalink"})
_CODE_WRAPPER = re.compile(r"highlight|code|source|syntax", re.IGNORECASE)  # GitHub, Sphinx, Rouge, MkDocs...
_LANGUAGE_PREFIXES = ("language-", "lang-", "highlight-source-", "highlight-")
_NO_LANGUAGE = frozenset({"", "none", "text", "plain", "plaintext", "default", "nohighlight", "txt", "output"})
_BARE_LANGUAGES = frozenset({  # read as a language only on the <pre>/<code> itself (pandoc, rustdoc)
    "python", "py", "javascript", "js", "typescript", "ts", "jsx", "tsx", "bash", "sh", "shell", "zsh", "console",
    "powershell", "json", "yaml", "toml", "ini", "html", "xml", "css", "scss", "sql", "c", "cpp", "csharp", "java",
    "kotlin", "go", "rust", "ruby", "php", "perl", "swift", "scala", "haskell", "elixir", "lua", "dockerfile",
    "makefile", "diff", "r", "julia"})
_LANGUAGE = re.compile(r"[\w+#.-]{1,32}")
_MARKDOWN_OPTIONS = html_to_markdown.ConversionOptions(
    heading_style="atx", code_block_style="backticks", bullets="-", extract_metadata=False,
    hidden_content="reachable",  # inactive tabs of code examples are still documentation
    inline_data_media="alt_text_only",  # a base64 image is not text anyone searches for
    preprocessing=html_to_markdown.PreprocessingOptions(enabled=False))  # _drop_chrome decides what goes


def _convert_html(text: str, url: str) -> Converted:
    root = _parse_html(text)
    if root is None:  # nothing lxml could read, or it stopped early: keep the words at least
        return _words_only(text)
    _drop_chrome(root)
    _label_code_blocks(root)
    _drop_noise_links(root)
    if url.startswith(("http://", "https://")):
        root.make_links_absolute(url, resolve_base_href=True, handle_failures="ignore")
    body = root.find("body")
    body = root if body is None else body
    summary, short_title = _readability(lxml.html.tostring(root, encoding="unicode"))
    title = short_title or _title_of(root)
    if summary is not None and _keeps_enough(summary, body):
        chosen, kind = summary, "html"
    else:
        chosen, kind = body, "html-fallback"
    markdown = _to_markdown(lxml.html.tostring(chosen, encoding="unicode")).strip()
    if not markdown:  # the converter gave up (depth limit, panic): keep the words at least
        markdown = "\n".join(line for line in (" ".join(t.split()) for t in chosen.itertext()) if line)
    if title and markdown and _first_h1(markdown) is None:
        markdown = f"# {title}\n\n{markdown}"
    return Converted(markdown + "\n" if markdown else "", "page.md", title, kind)


def _parse_html(text: str) -> lxml.html.HtmlElement | None:
    """The document tree, or None when lxml read nothing or lost most of the text.

    libxml2 stops at nesting depth 256 (2048 with huge_tree) and then returns an empty tree, not
    a partial one; thousands of unclosed <font> or <div> tags in old pages get there.
    """
    text = _SOUP_TAG.sub(_trim_soup, _XML_DECL.sub("", text, count=1))
    if not text.strip():
        return None
    try:  # a parser per call: lxml parsers must not be shared between threads
        root = lxml.html.document_fromstring(text, parser=lxml.html.HTMLParser(huge_tree=True))
    except (etree.ParserError, ValueError, RecursionError):  # "Document is empty": comments only
        return None
    expected = len("".join(html.unescape(_TAG.sub("", text)).split()))
    return root if _text_size(root) >= expected / 2 else None


def _words_only(markup: str) -> Converted:
    plain = _plain_text(markup)
    return Converted(plain + "\n" if plain else "", "page.md", None, "html-fallback" if plain else "html")


def _plain_text(markup: str) -> str:
    """Words of a page lxml could not parse, blocks on their own lines. Regexes that stop at the
    next "<" and forward-only searches keep this linear (the stdlib HTMLParser is quadratic on
    "<a <a <a ...")."""
    kept, pos, lower = [], 0, markup.lower()
    while match := _RAW_TEXT_START.search(markup, pos):  # script/style: their text is not words
        kept.append(markup[pos:match.start()])
        close = lower.find(f"</{match.group(1).lower()}", match.end())
        pos = len(markup) if close < 0 else close
    kept.append(markup[pos:])
    text = html.unescape(_TAG.sub("", _BLOCK_TAG.sub("\n", "".join(kept))))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _trim_soup(match: re.Match[str]) -> str:
    kept: dict[str, str] = {}  # the first of each name, as an HTML parser would keep it
    for attribute in _ATTRIBUTE.finditer(match.group(2)):
        if (name := attribute.group(1).lower()) in _KEPT_ATTRIBUTES:
            kept.setdefault(name, attribute.group(0))
    return f"<{match.group(1)} {' '.join(kept.values())}>"


def _drop_chrome(root: lxml.html.HtmlElement) -> None:
    """Remove what is never content, then site chrome unless it holds most of the page."""
    for el in list(root.iter(*_NEVER_CONTENT)):
        el.drop_tree()
    total = _text_size(root)
    chrome = list(root.iter(*_CHROME)) + root.xpath(_CHROME_ROLES)
    # A page header goes; an article's own <header> carries its H1 and stays.
    chrome += [h for h in root.iter("header") if h.find(".//h1") is None
               and not any(a.tag in ("article", "main") for a in h.iterancestors())]
    for el in chrome:
        # ASP.NET wraps whole pages in one <form>: "chrome" holding most of the text is the page.
        if el.getparent() is not None and _text_size(el) <= total / 2:
            el.drop_tree()


def _label_code_blocks(root: lxml.html.HtmlElement) -> None:
    """Put each code block's language where the converter reads it: <pre><code class="language-x">."""
    for pre in list(root.iter("pre")):
        for a in list(pre.iter("a")):  # rustdoc, javadoc link names in code: `[Global](url)` breaks the code
            a.drop_tag()
        if (language := _language_of(pre)) is None:
            continue
        children = list(pre)
        if len(children) == 1 and children[0].tag == "code" and not (pre.text or "").strip():
            code = children[0]
        else:
            code = lxml.html.Element("code")
            code.text, pre.text = pre.text, None
            for child in children:
                code.append(child)  # moves the child, its tail text with it
            pre.append(code)
        code.set("class", f"language-{language}")
        pre.set("class", f"language-{language}")


def _language_of(pre: lxml.html.HtmlElement) -> str | None:
    """From the block itself first, then from up to three wrappers that look like code wrappers
    (not any ancestor: `<body class="lang-en">` or `data-lang="fr"` name a human language)."""
    own = [el for el in (pre.find("code"), pre) if el is not None]
    wrappers = [el for el in list(pre.iterancestors())[:3] if _CODE_WRAPPER.search(el.get("class", ""))]
    for el in own + wrappers:
        for attribute in ("data-lang", "data-language"):
            if language := _clean_language(el.get(attribute, "")):
                return language
    for el in own + wrappers:
        if language := _language_from_classes(el.get("class", ""), bare=el in own):
            return language
    return None


def _language_from_classes(classes: str, *, bare: bool) -> str | None:
    if brush := re.search(r"brush:\s*([\w+#-]+)", classes):  # SyntaxHighlighter
        return _clean_language(brush.group(1))
    for token in classes.lower().split():
        for prefix in _LANGUAGE_PREFIXES:
            if token.startswith(prefix) and (language := _clean_language(token[len(prefix):])):
                return language
        if bare and token in _BARE_LANGUAGES:
            return token
    return None


def _clean_language(value: str) -> str | None:
    value = value.strip().lower()
    return None if value in _NO_LANGUAGE or not _LANGUAGE.fullmatch(value) else value


def _drop_noise_links(root: lxml.html.HtmlElement) -> None:
    """Icon links (their <svg> is gone) would be `[](...)` noise, a heading's permalink (¶) would
    end up in every section title the chunker builds from headings, and "Skip to content" is a
    control, not text."""
    for a in list(root.iter("a")):
        label, in_page = a.text_content().strip(), a.get("href", "").startswith("#")
        if a.find(".//img") is None and (not label or (in_page and (label in _ANCHOR_MARKS
                                                                     or label.lower().startswith("skip to")))):
            a.drop_tree()


def _readability(markup: str) -> tuple[lxml.html.HtmlElement | None, str]:
    """The main content as readability sees it, and its short title; (None, "") when it fails."""
    if len(markup) > MAX_READABILITY_CHARS:
        return None, ""
    try:
        document = Document(markup)
        title = " ".join((document.short_title() or "").split())
        summary = document.summary(html_partial=True)
        return (lxml.html.fromstring(summary) if summary.strip() else None), title
    except Exception:  # noqa: BLE001 - Unparseable, RecursionError on deep pages, lxml errors: whole page
        return None, ""


def _keeps_enough(summary: lxml.html.HtmlElement, body: lxml.html.HtmlElement) -> bool:
    """Readability picked the content rather than one section of an index or reference page."""
    if _text_size(summary) < MIN_READABILITY_SHARE * _text_size(body):
        return False
    # Readability drops small code blocks and tables it scores as boilerplate; for documentation
    # a lost code block is a lost answer, so any lost one sends the page down the fallback path.
    for tags, floor, share in ((_HEADINGS, 3, 0.5), (("pre",), 1, 1.0), (("table",), 1, 0.5)):
        in_body = sum(1 for _ in body.iter(*tags))
        if in_body >= floor and sum(1 for _ in summary.iter(*tags)) < share * in_body:
            return False
    return True


def _text_size(el: lxml.html.HtmlElement) -> int:
    return sum(len(t) - t.count(" ") - t.count("\n") for t in el.itertext())


def _title_of(root: lxml.html.HtmlElement) -> str | None:
    for path in (".//title", ".//h1"):
        el = root.find(path)
        if el is not None and (title := " ".join(el.text_content().split())):
            return title
    return None


def _to_markdown(markup: str) -> str:
    try:
        return html_to_markdown.convert(markup, _MARKDOWN_OPTIONS).content or ""
    except Exception:  # noqa: BLE001 - its ConversionError, PanicError, ...: the caller keeps plain text
        return ""
