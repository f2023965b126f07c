"""docs/events.md shows only what works: its manifest declares what it says, its ``emit`` step
sends, and the ``tarry send`` session and the event document are what tarry prints, in a
project made by ``tarry init`` with the guide's manifest and flow added."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from textwrap import indent

import pytest

from markdown_blocks import TARRY, Document, add_event_types, fresh_project, run_console
from tarry.errors import LoadError
from tarry.language.manifests import parse_manifests
from tarry.testing import Harness

GUIDE = Document("docs/events.md", __file__)
MANIFEST = GUIDE.block("yaml", after="## Manifests")
EMIT = GUIDE.block("yaml", after="## Sending from a flow: `emit`")
APPROVAL = GUIDE.block("yaml", after="## The command line")
SESSION = GUIDE.block("console", after="## The command line")
EVENT_DOCUMENT = GUIDE.block("json", after="## The event document")
PATHS = GUIDE.block("yaml", after="### Paths into the payload")
PATH_WAIT = GUIDE.block("yaml", after="### Paths into the payload", starting="- labelled:")
GUIDE_TEXT = " ".join(GUIDE.text.split())  # the page's prose, its line breaks as spaces

pytestmark = pytest.mark.timeout(240)  # processes, on a machine that may be busy


def test_the_manifest_declares_what_the_page_says() -> None:
    declared = parse_manifests(MANIFEST, "events.yaml")
    assert {name: m.correlate_on for name, m in declared.items()} == {
        "slack.approval": ("message",), "email.reply": ("ticket",)}


async def test_the_emit_step_sends_its_event_with_its_id(tmp_path: Path) -> None:
    harness = Harness(tmp_path, manifests=MANIFEST)
    flow = harness.flow("flow: tell\nsteps:\n  - ask: { set: { ts: \"1700000000.100\" } }\n"
                        + indent(EMIT, "  "))
    run_id = harness.start(flow)
    await harness.run_until_idle()
    sent = harness.document(run_id)["bindings"]["tell"]
    harness.close()
    assert (sent["id"], sent["state"], sent["data"]) == (
        f"{run_id}-approval", "buffered", {"message": "1700000000.100", "approved": True})


def test_the_path_manifest_declares_keys_at_the_real_payloads_paths() -> None:
    declared = parse_manifests(PATHS, "events.yaml")
    assert {name: {key: m.path_of(key) for key in m.correlate_on}
            for name, m in declared.items()} == {
        "github.issues": {"issue": ("issue", "number"),
                          "repo": ("repository", "full_name")},
        "slack.actions": {"message": ("container", "message_ts")}}


async def test_the_wait_on_key_names_takes_a_github_issue_event(tmp_path: Path) -> None:
    with Harness(tmp_path, manifests=PATHS) as harness:
        flow = harness.flow("flow: triage\ninputs:\n  issue: { type: integer, required: true }"
                            "\nsteps:\n" + indent(PATH_WAIT, "  "))
        run_id = harness.start(flow, {"issue": 7})
        await harness.run_due()
        labeled = {"action": "labeled", "issue": {"number": 7},
                   "repository": {"full_name": "acme/web"}}
        assert harness.send("github.issues", labeled).runs == (run_id,)
        missing = harness.send("github.issues", {**labeled, "issue": {}})
        nested = harness.send("github.issues", {**labeled, "issue": {"number": {"id": 8}}})
    assert f"`{missing.errors[0]}`" in GUIDE_TEXT
    assert f"`{nested.errors[0]}`" in GUIDE_TEXT


def test_a_path_the_schema_proves_absent_is_refused_as_the_page_shows() -> None:
    text = PATHS.replace("issue.number", "issue.numbr").replace(
        "  slack.actions:", "    schema:\n      type: object\n      properties:\n        issue:"
        "\n          type: object\n          additionalProperties: false\n"
        "          properties: { number: { type: integer } }\n  slack.actions:")
    with pytest.raises(LoadError) as caught:
        parse_manifests(text, "events.yaml")
    [problem] = caught.value.problems
    assert f"`{problem}`" in GUIDE_TEXT


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project of the page's manifest, with a run waiting for the approval the session
    sends."""
    root = fresh_project(tmp_path / "p")
    add_event_types(root, MANIFEST)
    (root / "flows" / "approval.yaml").write_text(APPROVAL, encoding="utf-8")
    started = subprocess.run([str(TARRY), "run", "approval"], cwd=root,
                             capture_output=True, text=True, timeout=60, check=False)
    assert started.returncode == 0, started.stderr
    return root


def test_the_send_session_prints_what_the_page_shows(project: Path) -> None:
    run_console(SESSION, project)


def test_the_event_document_has_the_printed_shape(project: Path) -> None:
    sent = subprocess.run([str(TARRY), "send", "slack.approval", "--data",
                           '{"message": "1700000000.100", "approved": true}', "--id", "e1",
                           "--json"], cwd=project, capture_output=True, text=True, timeout=60,
                          check=True)
    printed, shown = json.loads(sent.stdout), json.loads(EVENT_DOCUMENT)
    assert list(printed) == list(shown)
    volatile = {"runs", "received_at"}
    assert {k: v for k, v in printed.items() if k not in volatile} == {
        k: v for k, v in shown.items() if k not in volatile}
    assert len(printed["runs"]) == 1
