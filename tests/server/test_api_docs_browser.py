"""The API's docs page (``/docs``) in real headless Chromium with every other host blocked:
its script, stylesheet and icon come from the package, and it draws the operations."""

from __future__ import annotations

from server_support import Served

from browsers import Tab


def test_the_docs_page_draws_the_operations_with_no_other_host(tab: Tab,
                                                                 served: Served) -> None:
    loaded: list[str] = []
    tab.page.on("response", lambda response: loaded.append(response.url))
    tab.page.goto(f"{served.url}/docs")
    tab.page.wait_for_selector(".opblock", timeout=15_000)
    operations = tab.page.locator(".opblock-summary-path").all_inner_texts()
    assert {"/v1/runs", "/v1/events/{event}", "/v1/tasks/{task_id}/complete"} <= {
        text.replace("\u200b", "").strip() for text in operations}
    assert f"{served.url}/docs/assets/swagger-ui-bundle.js" in loaded
    assert f"{served.url}/docs/assets/swagger-ui.css" in loaded
    tab.screenshot("api-docs")
