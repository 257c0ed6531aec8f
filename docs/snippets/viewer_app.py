"""The viewer as an ASGI app, asked for one page in-process (needs okfx[web] and httpx)."""

from pathlib import Path

from starlette.testclient import TestClient

from okfx import Bundle
from okfx.web import create_app

bundle = Bundle.load(Path(__file__).resolve().parents[2] / "examples" / "knowledge")
app = create_app(bundle)  # a plain ASGI app: serve it on loopback, or use `okfx view`
page = TestClient(app, base_url="http://127.0.0.1").get("/b/knowledge/c/metrics/dock-availability")
print(page.status_code, page.headers["content-security-policy"].split(";")[0])
print("<h1>Dock availability</h1>" in page.text)
