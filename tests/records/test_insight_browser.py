"""The ctx_insight page in a real browser: headless Chromium driven by selenium.

The page is for people, so it is tested as people use it: it opens from disk, lists the
sessions, its links lead to the exported notebooks, and a history of 1,000 sessions loads at
once. Set CONTEXT_KERNEL_UPDATE_SCREENSHOT=1 to rewrite docs/insight.png from the small session.
Needs Debian's `chromium` and `chromium-driver` (CI installs them); without them these tests skip.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.client import Client
from selenium import webdriver
from selenium.webdriver.common.by import By
from tests.helpers import text_of

from context_kernel.settings import Settings
from context_kernel.store.db import open_engine
from context_kernel.store.executions import ExecutionEnd, ExecutionRepository, ExecutionStart

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.anyio,
    pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                       reason="headless Chromium is not installed: apt-get install chromium chromium-driver"),
]
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "insight.png"
PAGE_LOAD_LIMIT_S = 30  # every wait is bounded; the load-time check is below, from the browser's own timing


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,800", "--allow-file-access-from-files"):
        options.add_argument(flag)
    # The driver Debian installed, named: selenium must not go looking for one on the internet.
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=str(DRIVER)))
    driver.set_page_load_timeout(PAGE_LOAD_LIMIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def page_of(reply_text: str) -> Path:
    return Path(reply_text.split("Wrote ", 1)[1].split(" (", 1)[0])


@pytest.mark.kernels
async def test_the_page_lists_the_sessions_and_its_links_open_the_exported_notebooks(
        client: Client, browser: webdriver.Chrome) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "rows = [3, 1, 2]\nprint(sorted(rows))"})
    await client.call_tool("ctx_execute", {"language": "shell", "code": "echo counted $(seq 3 | wc -l) lines"})
    await client.call_tool("ctx_execute", {"language": "python", "code": "for i in range(3000): print('row', i)"})
    await client.call_tool("ctx_export", {"format": "html"})
    page = page_of(text_of(await client.call_tool("ctx_insight", {})))

    browser.get(page.as_uri())
    assert browser.title == "context-kernel sessions"
    sessions = browser.find_elements(By.XPATH, "//h2[starts-with(., 'Sessions')]/following-sibling::table[1]//tr[td]")
    assert len(sessions) == 1 and "python, shell" in sessions[0].text
    session = sessions[0].find_element(By.TAG_NAME, "code").text
    anchors = sessions[0].find_elements(By.TAG_NAME, "a")
    links = {a.text: a for a in anchors}
    stem = f"session-{session}"
    assert anchors[0].text == f"{stem}.html"  # the entry point first
    assert sorted(links) == sorted(f"{stem}{part}.{ext}" for part in ("", "-python3", "-ck-bash")
                                   for ext in ("html", "ipynb"))
    if os.environ.get("CONTEXT_KERNEL_UPDATE_SCREENSHOT"):
        _save_screenshot(browser)
    index = links[f"{stem}.html"]
    index.click()
    assert browser.current_url.endswith(f"/{stem}.html")
    assert "Table of contents" in browser.find_element(By.TAG_NAME, "h1").text
    # The index links each kernel's page; follow one to the cell whose output the agent saw trimmed.
    browser.find_element(By.CSS_SELECTOR, 'a[href$="-python3.html"]').click()
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "row 2999" in body and "Shown to the agent: trimmed output" in body


def test_a_history_of_1000_sessions_loads_at_once(settings: Settings, browser: webdriver.Chrome) -> None:
    executions = ExecutionRepository(open_engine(settings.db_path))
    for n in range(1000):
        session = f"hist-{n:04d}"
        executions.touch_session(session, client="claude-code", transport="stdio", project_dir="/p")
        exec_id = executions.start(ExecutionStart(session_id=session, tool="ctx_execute", code="print(1)",
                                                  language="python", kernel_name="python3"))
        executions.finish(exec_id, ExecutionEnd(status="ok", bytes_produced=2, bytes_returned=2))
    done = subprocess.run([sys.executable, "-m", "context_kernel", "insight"], capture_output=True, text=True,
                          env={**os.environ, "CONTEXT_KERNEL_HOME": str(settings.home)}, timeout=120)
    assert done.returncode == 0, done.stderr
    page = settings.insight_page
    assert page.stat().st_size < 1_000_000  # a page a browser renders at once, not a data dump

    browser.get(page.as_uri())  # bounded by the page load limit
    rows = browser.find_elements(By.XPATH, "//h2[starts-with(., 'Sessions')]/following-sibling::table[1]//tr[td]")
    heading = browser.find_element(By.XPATH, "//h2[starts-with(., 'Sessions')]").text
    assert heading == "Sessions (1,000)"
    shown = len(rows)
    assert 0 < shown <= 1000 and rows[0].text.startswith("hist-0999")  # the newest first
    if shown < 1000:
        assert f"{1000 - shown} older sessions not shown" in browser.find_element(By.TAG_NAME, "body").text
    # The browser's own clock: parsing and laying out the whole page took well under the limit.
    loaded_ms = browser.execute_script(
        "const t = performance.getEntriesByType('navigation')[0]; return t.domContentLoadedEventEnd - t.startTime;")
    assert loaded_ms < PAGE_LOAD_LIMIT_S * 1000 / 10, f"{shown} sessions took {loaded_ms:.0f} ms to load"


def _save_screenshot(browser: webdriver.Chrome) -> None:
    """A small PNG for the docs: the top of the page, reduced to a palette."""
    from PIL import Image

    # This machine's temporary data dir is no one's business in the docs.
    browser.execute_script("document.querySelector('p.muted code').textContent = '~/.context-kernel';")
    browser.set_window_size(1280, 760)
    image = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    image.quantize(colors=64).save(SCREENSHOT, optimize=True)
