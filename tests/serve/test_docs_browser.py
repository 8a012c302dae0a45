"""dlrt serve's GET /docs in headless Chromium (scripts/test_docs_browser.sh, ctest serve.docs_browser).

The page is Swagger UI over the server's own /openapi.json: every documented route is listed
in the DOM, nothing is loaded from another origin, and "Try it out" on POST /embed returns the
vector the route itself answers. A screenshot of the page is saved (DLRT_DOCS_SCREENSHOT).
One browser, one tab, a bounded JS heap, every wait bounded.
"""
import json
import os
import shutil
import tempfile
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

URL = os.environ["DLRT_SERVE_URL"]
WAIT_S = 30


def get_json(path):
    with urllib.request.urlopen(URL + path, timeout=WAIT_S) as r:
        return json.load(r)


def post_json(path, body):
    req = urllib.request.Request(URL + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=WAIT_S) as r:
        return json.load(r)


@pytest.fixture(scope="module")
def browser():
    opts = Options()
    opts.binary_location = os.environ.get("DLRT_CHROMIUM", "/usr/bin/chromium")
    profile = tempfile.mkdtemp(prefix="dlrt-docs-chromium-")
    for arg in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--disable-sync",
                "--renderer-process-limit=1", "--js-flags=--max-old-space-size=256",
                "--window-size=1280,1800", f"--user-data-dir={profile}"):
        opts.add_argument(arg)
    if os.geteuid() == 0:
        opts.add_argument("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    service = Service(executable_path=os.environ.get("DLRT_CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=opts)
    driver.set_page_load_timeout(WAIT_S)
    driver.set_script_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def listed_operations(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('.opblock')].map(b => ["
        " b.querySelector('.opblock-summary-method').textContent.toLowerCase(),"
        " b.querySelector('.opblock-summary-path').getAttribute('data-path')]);")


def test_docs_lists_every_route_from_the_servers_own_document(browser):
    doc = get_json("/openapi.json")
    want = {(m, p) for p, item in doc["paths"].items() for m in item}
    browser.get(URL + "/docs")
    WebDriverWait(browser, WAIT_S).until(lambda d: len(listed_operations(d)) >= len(want))
    shown = set(map(tuple, listed_operations(browser)))
    assert want <= shown, f"not listed: {sorted(want - shown)}"
    assert ("post", "/embed") in shown
    shot = os.environ.get("DLRT_DOCS_SCREENSHOT")
    if shot:
        assert browser.save_screenshot(shot)
    # Everything the page loaded came from this server (no CDN, no validator badge).
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert any(u.split("?")[0].endswith("/docs/swagger-ui-bundle.js") for u in loaded), loaded
    assert all(u.startswith(URL + "/") for u in loaded), loaded


def test_try_it_out_on_embed_returns_the_routes_vector(browser):
    browser.get(URL + "/docs")
    wait = WebDriverWait(browser, WAIT_S)
    op = wait.until(lambda d: d.find_element(
        By.XPATH, "//div[contains(@class,'opblock-post')][.//*[@data-path='/embed']]"))
    op.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
    wait.until(lambda d: op.find_element(By.CSS_SELECTOR, ".try-out__btn")).click()
    body = wait.until(lambda d: op.find_element(By.CSS_SELECTOR, "textarea.body-param__text"))
    body.send_keys(Keys.CONTROL, "a")
    body.send_keys(Keys.DELETE)
    body.send_keys('{"inputs": "a vector from the docs page"}')
    op.find_element(By.CSS_SELECTOR, "button.execute").click()
    answer = wait.until(lambda d: op.find_element(By.CSS_SELECTOR, ".live-responses-table tr.response"))
    status = answer.find_element(By.CSS_SELECTOR, ".response-col_status").text.strip()
    assert status == "200", status
    text = answer.find_element(By.CSS_SELECTOR, ".response-col_description .highlight-code pre").text
    vectors = json.loads(text)
    want = post_json("/embed", {"inputs": "a vector from the docs page"})
    assert len(vectors) == 1 and len(vectors[0]) == len(want[0]) > 0
    assert max(abs(a - b) for a, b in zip(vectors[0], want[0])) < 1e-6
