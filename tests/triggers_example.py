"""What the tests of examples/triggers share: a copy of the example, its environment, the
label event GitHub sends."""

from __future__ import annotations

import shutil
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "triggers"
SECRET = "webhook-secret"
LABELED = {"action": "labeled", "label": {"name": "deploy"}, "issue": {"number": 7},
           "repository": {"full_name": "acme/web"}}


def example_copy(folder: Path) -> Path:
    """A copy of the example in ``folder`` (its checks read the copy's window/ folder)."""
    root = folder / "triggers"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".tarry"))
    return root


def environment(root: Path, store_url: str) -> dict[str, str]:
    """What the operator exports before running the example at ``root``."""
    checks = root / "checks"
    return {"TARRY_DATABASE": store_url, "GITHUB_WEBHOOK_SECRET": SECRET,
            "TARRY_CHECKS": f"deploy-window:{checks / 'deploy-window.sh'},"
                            f"ledger:{checks / 'ledger-closed.sh'}"}
