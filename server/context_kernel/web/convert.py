"""A fetched body turned into indexable text: decode it, tell what it really is, convert it.

Pure functions: bytes and headers in, a `Converted` out; no network, no files. Whatever a page
holds, `convert` returns or raises `UnsupportedContent`, never anything else.

This module is the dispatcher: charset decoding, binary refusal, sniffing, JSON and text. HTML
is handed to `html.py` (readability, clean-up, html-to-markdown, code languages).
"""

from __future__ import annotations

import codecs
import json
import re
from posixpath import splitext
from urllib.parse import urlsplit

import charset_normalizer

from .errors import UnsupportedContent
from .html import MAX_READABILITY_CHARS, MIN_READABILITY_SHARE, Converted, convert_html, first_h1, words_only

# The HTML constants and Converted live in html.py; callers import them from here.
__all__ = ["MAX_READABILITY_CHARS", "MIN_READABILITY_SHARE", "SNIFF_BYTES", "Converted", "convert", "decode_body"]

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
            return convert_html(text, url)
        except Exception:  # noqa: BLE001 - lxml failing on a page nobody foresaw: its words, not a crash
            return words_only(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if route == "json":
        return _convert_json(text)
    if route == "markdown":
        return Converted(text, "page.md", first_h1(text), "markdown")
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
