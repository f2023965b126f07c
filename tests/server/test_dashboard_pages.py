"""Every dashboard page and form over a real socket, on each store: what a person sees of
waiting, held and quarantined things, and what the forms do (and refuse)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import (
    Browser,
    Scene,
    csrf_of,
    eventually,
    stage,
    write_dashboard_project,
)
from server_support import Served, serve

from tarry.model import EventState, RunRecord, RunStatus
from tarry.server.dashboard import inbox as inbox_pages
from tarry.server.dashboard import runs as runs_pages


@pytest.fixture
def dashboard(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """The dashboard's test project served without a token (loopback only)."""
    with serve(write_dashboard_project(tmp_path / "project", store_url)) as served:
        yield served


@pytest.fixture
def scene(dashboard: Served) -> Scene:
    """The runs and the quarantined event, staged on the served project."""
    return stage(dashboard)


@pytest.fixture
def browser(dashboard: Served) -> Iterator[Browser]:
    """A browser-like client of the dashboard."""
    with Browser(dashboard) as client:
        yield client


def _rows(html: str) -> list[str]:
    """The run ids of a runs table, in order."""
    return re.findall(r'<tr data-run="([0-9a-f]+)">', html)


def _newest_first(served: Served, *runs: RunRecord) -> list[str]:
    """The ids of ``runs`` in the order of the listing (newest first; runs started in the
    same millisecond by id)."""
    ordered = sorted(runs, key=lambda run: (run.created_at, run.id), reverse=True)
    return [run.id for run in ordered]


def test_the_dashboard_opens_on_the_runs(browser: Browser) -> None:
    response = browser.get("/")
    assert (response.status_code, response.headers["location"]) == (303, "/runs")


def test_each_run_says_in_one_line_what_it_waits_for_and_until_when(
        dashboard: Served, browser: Browser, scene: Scene) -> None:
    html = browser.get("/runs").text

    assert _rows(html) == _newest_first(dashboard, scene.deploy, scene.nap, scene.approval)
    assert ("event deal.approved matching deal=&#34;D1&#34; at step &#39;approval&#39; · until "
            in html)
    assert "timer at step &#39;nap&#39; · until " in html
    assert "hold: ticket · next check " in html
    assert re.search(r"until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \(in 23h 59m\)", html)


def test_the_counts_say_how_many_runs_have_each_status(browser: Browser, scene: Scene) -> None:
    html = browser.get("/runs").text
    counts = dict(re.findall(r'data-status="(\w+)">\w+ <b>(\d+)</b>', html))
    assert counts == {"waiting": "2", "held": "1", "pending": "0", "running": "0",
                      "succeeded": "0", "failed": "0", "cancelled": "0", "refused": "0"}


@pytest.mark.parametrize(("query", "expected"), [
    ("waiting_for=timer", ["nap"]),
    ("waiting_for=event", ["approval"]),
    ("waiting_for=deal.approved", ["approval"]),
    ("waiting_for=ticket.closed", []),
    ("waiting_for=hold", ["deploy"]),
    ("status=waiting", ["nap", "approval"]),
    ("flow=nap", ["nap"]),
    ("target=acme/web%237", ["deploy"]),
    ("status=held&target=acme/web%237", ["deploy"]),
])
def test_runs_are_found_by_what_they_wait_for_status_flow_and_target(
        dashboard: Served, browser: Browser, scene: Scene, query: str, expected: list[str]) -> None:
    runs = {"approval": scene.approval, "nap": scene.nap, "deploy": scene.deploy}
    assert _rows(browser.get(f"/runs?{query}").text) == _newest_first(
        dashboard, *(runs[name] for name in expected))


def test_the_filters_count_within_what_they_show(browser: Browser, scene: Scene) -> None:
    html = browser.get("/runs?waiting_for=timer").text
    assert re.search(r'data-status="waiting">waiting <b>1</b>', html)
    assert 'href="/runs?status=held&amp;waiting_for=timer"' in html


def test_runs_come_a_page_at_a_time(dashboard: Served, browser: Browser, scene: Scene,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runs_pages, "PAGE_SIZE", 2)
    newest, middle, oldest = _newest_first(dashboard, scene.deploy, scene.nap, scene.approval)
    first = browser.get("/runs").text
    older = re.search(r'href="/runs\?([^"]+)" rel="next"', first)
    assert _rows(first) == [newest, middle]
    assert older is not None

    second = browser.get(f"/runs?{older.group(1).replace('&amp;', '&')}").text
    assert _rows(second) == [oldest]
    assert 'rel="next"' not in second
    assert "« newest" in second


def test_a_bad_filter_or_page_link_is_a_page_that_says_what_to_do(browser: Browser) -> None:
    status = browser.get("/runs?status=sleeping")
    cursor = browser.get("/runs?cursor=garbage")
    assert status.status_code == 400
    assert ("There is no status &#39;sleeping&#39;; choose one of: waiting, held, pending, "
            "running, succeeded, failed, cancelled, refused.") in status.text
    wait = browser.get("/runs?waiting_for=deal.aproved")
    assert wait.status_code == 400
    assert ("The filter waiting_for &#39;deal.aproved&#39; is neither a kind of wait (child, "
            "event, hold, poll, retry, slot, task, throttle, timer, window) nor a declared event "
            "type (did you mean &#39;deal.approved&#39;?).") in wait.text
    assert cursor.status_code == 400
    assert "start again from the first page" in cursor.text


def test_a_run_page_explains_the_wait_and_draws_it_from_start_to_deadline(
        browser: Browser, scene: Scene) -> None:
    html = browser.get(f"/runs/{scene.approval.id}").text

    explanation = re.search(r'<p class="explanation" id="explanation">([^<]+)</p>', html)
    assert explanation is not None
    assert explanation.group(1).startswith(
        "waiting for event &#39;deal.approved&#39; matching deal=&#34;D1&#34; at step "
        "&#39;approval&#39; since ")
    assert ("then resumes at step &#39;approval&#39; with the event, or with status timeout "
            "at the deadline; next reminder at ") in explanation.group(1)
    span = re.search(r'<g class="span kind-event outcome-waiting" data-kind="event" '
                     r'data-outcome="waiting">\s*<title>([^<]+)</title>', html)
    assert span is not None
    assert span.group(1).startswith("event deal.approved: from ")
    assert "deadline " in span.group(1)
    assert span.group(1).endswith("still waiting")
    assert '<line class="deadline"' in html
    assert '<g class="now">' in html
    assert ('<pre class="json" id="bindings">{\n  &#34;ask&#34;: {\n    &#34;message&#34;: '
            '&#34;please approve D1&#34;\n  }\n}</pre>') in html
    assert "wait.registered" in html  # the history
    assert f'href="/runs/{scene.approval.id}/cancel"' in html
    steps = re.findall(r'<td class="mono">([^<]+)</td>\s*<td class="nowrap">([a-z]+)</td>',
                       html[html.index('id="steps"'):html.index('aria-label="bindings"')])
    assert steps == [("ask", "completed"), ("approval", "waiting")]


def test_a_run_page_asked_for_live_is_its_fragment_only(browser: Browser, scene: Scene) -> None:
    response = browser.get(f"/runs/{scene.nap.id}", headers={"X-Tarry-Live": "1"})
    assert response.status_code == 200
    assert "<html" not in response.text
    assert 'data-kind="timer"' in response.text


def test_an_unknown_run_is_a_404_page(browser: Browser) -> None:
    response = browser.get("/runs/nope")
    assert response.status_code == 404
    assert "no run with id &#39;nope&#39;" in response.text.lower()


def test_cancel_asks_first_then_cancels_and_records_who(dashboard: Served, browser: Browser,
                                                        scene: Scene) -> None:
    confirm = browser.get(f"/runs/{scene.approval.id}/cancel")
    assert confirm.status_code == 200
    assert "Cancel this run?" in confirm.text
    assert dashboard.engine.store.get_run(scene.approval.id).status is RunStatus.WAITING

    response = browser.submit(f"/runs/{scene.approval.id}/cancel",
                              f"/runs/{scene.approval.id}/cancel")

    assert (response.status_code, response.headers["location"]) == (
        303, f"/runs/{scene.approval.id}")
    record = dashboard.engine.store.get_run(scene.approval.id)
    assert (record.status, record.cancelled_by) == (RunStatus.CANCELLED, "anonymous")
    assert 'class="status s-cancelled"' in browser.get(f"/runs/{scene.approval.id}").text


@pytest.mark.parametrize("token", [None, "forged-token"])
def test_a_cancel_without_this_sessions_csrf_token_is_refused(
        dashboard: Served, browser: Browser, scene: Scene, token: str | None) -> None:
    browser.get("/runs")  # the session, with its own token
    fields = {"csrf": token} if token else {}
    response = browser.http.post(f"/runs/{scene.nap.id}/cancel", data=fields)

    assert response.status_code == 403
    assert "did not carry this session&#39;s security token" in response.text
    assert dashboard.engine.store.get_run(scene.nap.id).status is RunStatus.WAITING


def test_a_form_from_another_browser_is_refused(dashboard: Served, scene: Scene) -> None:
    with Browser(dashboard) as mine, Browser(dashboard) as theirs:
        their_token = csrf_of(theirs.get(f"/runs/{scene.nap.id}/cancel").text)
        mine.get("/runs")
        response = mine.http.post(f"/runs/{scene.nap.id}/cancel", data={"csrf": their_token})
    assert response.status_code == 403
    assert dashboard.engine.store.get_run(scene.nap.id).status is RunStatus.WAITING


def test_cancelling_an_ended_run_says_it_has_ended(dashboard: Served, browser: Browser,
                                                   scene: Scene) -> None:
    page = browser.get(f"/runs/{scene.nap.id}/cancel").text
    dashboard.engine.cancel(scene.nap.id, by="ops")
    response = browser.http.post(f"/runs/{scene.nap.id}/cancel", data={"csrf": csrf_of(page)})
    assert response.status_code == 409
    assert browser.get(f"/runs/{scene.nap.id}/cancel").status_code == 409


def test_held_runs_show_target_conditions_how_long_next_check_and_faults(
        browser: Browser, scene: Scene) -> None:
    html = browser.get("/held").text

    assert '<b id="held-total">1</b> held' in html
    row = html[html.index(f'<tr data-run="{scene.deploy.id}">'):]
    assert ">acme/web#7</a>" in row
    assert '<span class="cond-kind">check</span> ticket <span class="cond-state">not yet clear' \
        in row
    assert "1 round of checks" in row
    assert re.search(r'<span class="rel">in (\d+m|\d+s|\d+m \d+s)</span>', row)  # next check
    assert "ticket: 1 in a row" in row  # the fault
    assert f'href="/runs/{scene.deploy.id}/cancel?back=/held"' in row


def test_a_held_run_cancelled_from_the_held_page_goes_back_to_it(
        dashboard: Served, browser: Browser, scene: Scene) -> None:
    page = f"/runs/{scene.deploy.id}/cancel?back=/held"
    response = browser.submit(page, f"/runs/{scene.deploy.id}/cancel", back="/held")
    assert (response.status_code, response.headers["location"]) == (303, "/held")
    assert dashboard.engine.store.get_run(scene.deploy.id).status is RunStatus.CANCELLED
    assert "No run is held." in browser.get("/held").text


def test_after_a_form_only_a_path_on_this_server_is_followed(
        browser: Browser, scene: Scene) -> None:
    response = browser.submit(f"/runs/{scene.nap.id}/cancel", f"/runs/{scene.nap.id}/cancel",
                              back="//elsewhere.example/runs")
    assert response.headers["location"] == f"/runs/{scene.nap.id}"


def test_the_inbox_shows_quarantined_events_with_their_validation_errors(
        browser: Browser, scene: Scene) -> None:
    html = browser.get("/events").text
    assert f'<tr data-event="{scene.quarantined.id}">' in html
    assert "<li>approved: &#39;yes&#39; is not of type &#39;boolean&#39;</li>" in html
    assert "No buffered events." in browser.get("/events?state=buffered").text
    assert browser.get("/events?state=lost").status_code == 400


def test_an_event_that_started_a_run_links_to_it_in_the_inbox(dashboard: Served,
                                                              browser: Browser) -> None:
    event = dashboard.engine.send("ticket.closed", {"ticket": 7})  # starts a run of reopen
    [run] = event.started
    row = re.search(rf'<tr data-event="{event.id}">.*?</tr>',
                    browser.get(f"/events?state={event.state.value}").text, re.S)
    assert row is not None
    assert f'started <a class="mono" href="/runs/{run}">{run[:12]}</a>' in row.group(0)
    assert (f'<p class="explanation" id="started">Started <a class="mono" href="/runs/{run}">'
            f"{run}</a> (its flows' triggers).</p>") in browser.get(f"/events/{event.id}").text


def test_the_inbox_tabs_count_what_needs_an_operator(dashboard: Served, browser: Browser,
                                                      scene: Scene) -> None:
    dashboard.engine.send("ticket.closed", {"ticket": 7})  # kept 5m for a wait to take it
    html = browser.get("/events").text
    counts = dict(re.findall(r'data-state="(\w+)"[^>]*>\w+ <b>(\d+)</b>', html))
    assert counts == {"invalid": "1", "buffered": "1", "unmatched": "0"}


def test_the_inbox_comes_a_page_at_a_time_and_by_event_type(
        dashboard: Served, browser: Browser, scene: Scene,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inbox_pages, "PAGE_SIZE", 1)
    second = dashboard.engine.send("deal.approved", {"deal": 7})
    first_page = browser.get("/events").text
    older = re.search(r'href="/events\?([^"]+)" rel="next"', first_page)
    assert re.findall(r'<tr data-event="(\w+)">', first_page) == [second.id]
    assert older is not None

    next_page = browser.get(f"/events?{older.group(1).replace('&amp;', '&')}").text
    assert re.findall(r'<tr data-event="(\w+)">', next_page) == [scene.quarantined.id]
    assert 'rel="next"' not in next_page
    other_type = browser.get("/events?type=ticket.closed").text
    assert "No quarantined events of type ticket.closed." in other_type


def test_a_corrected_payload_is_redelivered_to_the_waiting_run(
        dashboard: Served, browser: Browser, scene: Scene) -> None:
    page = f"/events/{scene.quarantined.id}"
    shown = browser.get(page).text
    assert "&#34;approved&#34;: &#34;yes&#34;" in shown  # the payload to edit

    response = browser.submit(page, f"{page}/redeliver",
                              data='{"deal": "D1", "approved": true}')

    assert (response.status_code, response.headers["location"]) == (303, page)
    event = dashboard.engine.store.get_event(scene.quarantined.id)
    assert (event.state, event.runs) == (EventState.DELIVERED, (scene.approval.id,))
    eventually(lambda: dashboard.engine.store.get_run(scene.approval.id).status
               is RunStatus.SUCCEEDED, "the run resumed with the event")
    assert f'href="/runs/{scene.approval.id}"' in browser.get(page).text


def test_a_payload_that_is_not_json_is_shown_back_as_typed_with_the_reason(
        dashboard: Served, browser: Browser, scene: Scene) -> None:
    page = f"/events/{scene.quarantined.id}"
    response = browser.submit(page, f"{page}/redeliver", data='{"deal": "D1", approved}')

    assert response.status_code == 422
    assert ("The payload is not valid JSON: Expecting property name enclosed in double quotes "
            "(line 1, column 16).") in response.text
    assert "{&#34;deal&#34;: &#34;D1&#34;, approved}</textarea>" in response.text
    assert dashboard.engine.store.get_event(scene.quarantined.id).state is EventState.INVALID


def test_a_payload_that_is_not_an_object_is_refused(browser: Browser, scene: Scene) -> None:
    page = f"/events/{scene.quarantined.id}"
    response = browser.submit(page, f"{page}/redeliver", data="[1, 2]")
    assert response.status_code == 422
    assert "The payload must be a JSON object ({…}), not list." in response.text


def test_a_payload_still_invalid_stays_quarantined_with_the_new_errors(
        dashboard: Served, browser: Browser, scene: Scene) -> None:
    page = f"/events/{scene.quarantined.id}"
    browser.submit(page, f"{page}/redeliver", data='{"deal": "D1"}')
    html = browser.get(page).text
    assert "<li>&#39;approved&#39; is a required property</li>" in html
    assert dashboard.engine.store.get_event(scene.quarantined.id).state is EventState.INVALID


def test_a_redelivery_without_the_csrf_token_is_refused(dashboard: Served, browser: Browser,
                                                        scene: Scene) -> None:
    browser.get("/events")
    response = browser.http.post(f"/events/{scene.quarantined.id}/redeliver",
                                 data={"data": '{"deal": "D1", "approved": true}'})
    assert response.status_code == 403
    assert dashboard.engine.store.get_event(scene.quarantined.id).state is EventState.INVALID


def test_an_event_is_discarded_from_its_page(dashboard: Served, browser: Browser,
                                             scene: Scene) -> None:
    page = f"/events/{scene.quarantined.id}"
    token = csrf_of(browser.get(page).text)
    response = browser.http.post(f"{page}/discard", data={"csrf": token})

    assert (response.status_code, response.headers["location"]) == (303, page)
    assert dashboard.engine.store.get_event(scene.quarantined.id).state is EventState.DISCARDED
    assert "Correct and redeliver" not in browser.get(page).text  # nothing left to do
    again = browser.http.post(f"{page}/discard", data={"csrf": token})
    assert again.status_code == 409
    assert "only invalid, unmatched or" in again.text


def test_an_unknown_event_is_a_404_page(browser: Browser) -> None:
    assert browser.get("/events/nope").status_code == 404


def test_the_tasks_and_flows_pages_are_there(dashboard: Served, browser: Browser) -> None:
    (dashboard.settings.flows_dir / "broken.yaml").write_text("flow: broken\nsteps: 3\n")
    tasks = browser.get("/tasks")
    flows = browser.get("/flows")
    assert tasks.status_code == flows.status_code == 200
    assert "No open task." in tasks.text
    assert '<td class="mono">deal.approved</td>' in flows.text
    assert '<tr data-flow="deploy">' in flows.text
    assert "held before its first step" in flows.text
    assert 'href="/runs?flow=approval"' in flows.text
    assert '<span class="trigger">on each ticket.closed event</span>' in flows.text
    assert "Reopen the deal when its ticket closes." in flows.text
    assert "broken.yaml:2:" in flows.text  # a file that does not load, with its problem
    assert 'href="/runs?waiting_for=ticket.closed"' in flows.text


def test_the_stylesheet_and_script_ship_in_the_package(browser: Browser) -> None:
    css, script = browser.get("/assets/dashboard.css"), browser.get("/assets/dashboard.js")
    assert css.headers["content-type"] == "text/css; charset=utf-8"
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert "X-Tarry-Live" in script.text
    assert browser.get("/assets/other.js").status_code == 404


def test_pages_load_nothing_from_elsewhere_and_cannot_be_framed(browser: Browser,
                                                                scene: Scene) -> None:
    response = browser.get(f"/runs/{scene.approval.id}")
    assert response.headers["content-security-policy"].startswith("default-src 'self'")
    assert response.headers["x-frame-options"] == "DENY"
    assert not re.search(r'(src|href)="(https?:)?//', response.text)
