"""Code blocks' languages: found where each site's generator writes them, put where the converter reads them.

html-to-markdown reads `language-*`/`lang-*` on <code>; GitHub's `highlight-source-*`, Sphinx's
`highlight-*`, pandoc's `sourceCode python` and `data-lang` it does not, and a fence without its
language loses what the chunker and the reader go by.
"""

from __future__ import annotations

import re

import lxml.html

_CODE_WRAPPER = re.compile(r"highlight|code|source|syntax", re.IGNORECASE)  # GitHub, Sphinx, Rouge, MkDocs...
_LANGUAGE_PREFIXES = ("language-", "lang-", "highlight-source-", "highlight-")
_NO_LANGUAGE = frozenset({"", "none", "text", "plain", "plaintext", "default", "nohighlight", "txt", "output"})
_BARE_LANGUAGES = frozenset({  # read as a language only on the <pre>/<code> itself (pandoc, rustdoc)
    "python", "py", "javascript", "js", "typescript", "ts", "jsx", "tsx", "bash", "sh", "shell", "zsh", "console",
    "powershell", "json", "yaml", "toml", "ini", "html", "xml", "css", "scss", "sql", "c", "cpp", "csharp", "java",
    "kotlin", "go", "rust", "ruby", "php", "perl", "swift", "scala", "haskell", "elixir", "lua", "dockerfile",
    "makefile", "diff", "r", "julia"})
_LANGUAGE = re.compile(r"[\w+#.-]{1,32}")


def label_code_blocks(root: lxml.html.HtmlElement) -> None:
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
