"""``GET /v1/flows/{name}/graph`` and ``GET /v1/runs?at_step=``, over a real socket, on each
store: the drawing's structure, its counts, and names that are only names."""

from __future__ import annotations

import sys
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from server_support import Served, eventually, serve, start


def _nodes(region: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for node in region["nodes"]:
        found.append(node)
        for inner in node["regions"]:
            found += _nodes(inner)
    return found


def test_the_graph_counts_the_runs_waiting_at_each_step_and_links_to_them(
        served: Served) -> None:
    with served.client() as client:
        for deal in ("a", "b"):
            start(client, "approval", inputs={"deal": deal})
        assert eventually(lambda: len(client.get(
            "/v1/runs", params={"at_step": "approval"}).json()["runs"]) == 2)
        graph = client.get("/v1/flows/approval/graph")
        assert graph.status_code == 200, graph.text
        body = graph.json()
        nodes = {node["id"]: node for node in _nodes(body["steps"])}
        assert nodes["approval"]["counts"] == {"waiting": 2}
        assert (nodes["approval"]["kind"], nodes["approval"]["wait"]) == ("wait_for", "event")
        assert nodes["decided"] == {**nodes["decided"], "kind": "exit", "exit": "decided",
                                    "counts": {}, "ends": True}
        assert body["start"] == {"gates": [], "counts": {}}
        svg = ET.fromstring(body["svg"])
        links = [a.get("href") for a in svg.iter("{http://www.w3.org/2000/svg}a")]
        assert links == ["/runs?flow=approval&status=waiting&at_step=approval"]
        listed = client.get("/v1/runs", params={"at_step": "approval", "flow": "approval"})
        assert {run["inputs"]["deal"] for run in listed.json()["runs"]} == {"a", "b"}
        assert client.get("/v1/runs", params={"at_step": "decided"}).json()["runs"] == []


@pytest.mark.parametrize("name", ["..%2Fflows%2Fapproval", "..", "approval.yaml", "/etc/passwd",
                                  "Approval", "no-such-flow", "flows%2Fapproval"])
def test_a_graph_is_found_by_flow_name_only_and_a_miss_says_nothing_of_files(
        served: Served, name: str) -> None:
    with served.client() as client:
        answer = client.get(f"/v1/flows/{name}/graph")
    assert answer.status_code == 404
    message = answer.json()["error"]["message"]
    assert message.startswith((f"no flow named '{name}' among the project's flows",
                               "no such endpoint: "))
    assert str(served.settings.root) not in answer.text


PYTHON_FLOWS = """\
from tarry import App, Context

app = App()


def greeting(name):
    return f"Hello, {name}!"


@app.flow("greet")
async def greet(ctx: Context, name: str = "world") -> str:
    text = await ctx.step("greet", greeting, name)
    await ctx.wait("pause", "1d")
    return text
"""


def test_a_python_flow_is_drawn_from_the_operations_its_runs_recorded(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = f"flows_{uuid.uuid4().hex[:8]}"
    (project / f"{module}.py").write_text(PYTHON_FLOWS)
    config = project / "tarry.toml"
    config.write_text(config.read_text().replace("[tarry]\n", f'[tarry]\napp = "{module}:app"\n'))
    monkeypatch.setattr(sys, "path", list(sys.path))
    with serve(project) as served, served.client() as client:
        for name in ("Ada", "Grace"):
            start(client, "greet", inputs={"name": name})
        assert eventually(lambda: len(client.get(
            "/v1/runs", params={"at_step": "pause"}).json()["runs"]) == 2)
        body = client.get("/v1/flows/greet/graph").json()
    nodes = [(node["id"], node["kind"], node["wait"], node["counts"])
             for node in body["steps"]["nodes"]]
    assert nodes == [("greet", "action", None, {}), ("pause", "wait", "timer", {"waiting": 2})]
