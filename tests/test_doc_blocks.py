"""Every fenced block of README.md and docs/*.md is run by a test as printed, or says why not.

The inventory of ``tests/README.md`` ("Documents"): each block carries exactly one directive
on the line right above its fence, ``<!-- run: tests/…/test_….py -->`` or ``<!-- not run:
<why> -->``; the module a ``run:`` names exists and, when pytest imports it, reads that very
block through ``markdown_blocks.Document`` (which refuses a read of a block not marked for
the reader).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from markdown_blocks import ROOT, Block, covered_documents, fenced_blocks

BLOCKS = [block for document in covered_documents()
          for block in fenced_blocks((ROOT / document).read_text(encoding="utf-8"), document)]
RUN = [block for block in BLOCKS
       if block.directive is not None and block.directive.kind == "run"]
_ANY_DIRECTIVE = re.compile(r"^\s*<!-- (run|not run):")
_DIRECTIVES = ("put <!-- run: tests/<area>/test_<name>.py --> (the test module that runs it "
               "as printed) or <!-- not run: <why no test can> -->")


def _how(block: Block) -> str:
    """Where to put the directive of ``block``."""
    where = ("on the line right below its closing fence (the block opens the document)"
             if block.line == 1 else "on the line right above its fence")
    return f"{_DIRECTIVES} {where}"


def _kind(block: Block) -> str:
    return f"{block.language or 'plain'} block"


def _directive_problem(block: Block) -> str | None:
    """What is wrong with the directive of ``block``, if anything."""
    directive = block.directive
    if directive is None and block.above.startswith("<!--"):
        return (f"{block.where}: the comment beside this {_kind(block)} is no directive; "
                f"{_how(block)}")
    if directive is None:
        return f"{block.where}: this {_kind(block)} has no directive; {_how(block)}"
    if directive.kind == "not run" and not directive.value.strip():
        return f"{block.where}: <!-- not run: --> gives no reason; say why no test runs it"
    module = ROOT / directive.value
    if directive.kind == "run" and not (re.fullmatch(r"tests/(\w+/)*test_\w+\.py",
                                                     directive.value) and module.is_file()):
        return (f"{block.where}: <!-- run: {directive.value} --> names no test module; name "
                "the tests/…/test_….py file that runs the block")
    return None


def _stray_directives(document: str) -> list[str]:
    """The directives of ``document`` that are not right above a fence, or sit on another."""
    lines = (ROOT / document).read_text(encoding="utf-8").split("\n")
    problems = []
    for number, line in enumerate(lines, start=1):
        if not _ANY_DIRECTIVE.match(line):
            continue
        below = lines[number].lstrip() if number < len(lines) else ""
        if _closes_the_opening_block(lines, number - 1):
            continue
        if below.startswith(("<!-- run:", "<!-- not run:")):
            problems.append(f"{document}:{number}: two directives over one block; keep one")
        elif not below.startswith(("```", "~~~")):
            problems.append(f"{document}:{number}: a directive must be on the line right above "
                            "the fence of the block it is about")
    return problems


def _closes_the_opening_block(lines: list[str], index: int) -> bool:
    """Whether line ``index`` follows the closing fence of a block that opens its document
    (where that block's directive belongs)."""
    blocks = fenced_blocks("\n".join(lines), "")
    return bool(blocks) and blocks[0].line == 1 \
        and index == 1 + len(blocks[0].text.splitlines()) + 1


def test_the_documents_have_blocks() -> None:
    assert "README.md" in covered_documents()
    assert len(BLOCKS) > 90


def test_every_block_has_exactly_one_directive() -> None:
    problems = [problem for block in BLOCKS if (problem := _directive_problem(block))]
    problems += [problem for document in covered_documents()
                 for problem in _stray_directives(document)]
    assert not problems, "\n".join(problems)


_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[2])
import markdown_blocks
import pytest
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[3:]])
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump({"code": int(code), "reads": {module: sorted(reads)
               for module, reads in markdown_blocks.READS.items()}}, out)
"""


def _reads_on_import(modules: list[str], tmp_path: Path) -> dict[str, set[tuple[str, int]]]:
    """Which blocks each of ``modules`` reads when pytest collects it, in a process of its
    own (exactly as the suite imports them)."""
    dump = tmp_path / "reads.json"
    env = {name: value for name, value in os.environ.items() if name != "PYTEST_ADDOPTS"}
    result = subprocess.run([sys.executable, "-c", _PROBE, str(dump), str(ROOT / "tests"),
                             *modules], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300, check=False)
    output = result.stdout + result.stderr
    errors = output[output.index("= ERRORS ="):] if "= ERRORS =" in output else output
    failed = "collecting the modules that run blocks failed:\n" + errors
    assert dump.exists(), failed
    found = json.loads(dump.read_text(encoding="utf-8"))
    assert found["code"] == 0, failed
    return {module: {(document, line) for document, line in reads}
            for module, reads in found["reads"].items()}


@pytest.mark.timeout(300)  # one pytest collection of every module named, on a busy machine
def test_every_module_a_directive_names_reads_its_blocks(tmp_path: Path) -> None:
    modules = sorted({block.directive.value for block in RUN if block.directive is not None
                      and not _directive_problem(block)})
    reads = _reads_on_import(modules, tmp_path)
    problems = [
        f"{block.where}: <!-- run: {block.directive.value} --> but that module does not read "
        f"this {_kind(block)} when it is imported; read it there with "
        f"Document({block.document!r}, __file__).block(…) at module level and run it in a "
        "test, or mark the block <!-- not run: <why> -->"
        for block in RUN if block.directive is not None
        and (block.document, block.line) not in reads.get(block.directive.value, set())]
    assert not problems, "\n".join(problems)


def _read_names(tree: ast.Module) -> set[str]:
    """The module-level names a module binds to blocks it reads (``X = DOC.block(…)``)."""
    return {target.id for node in tree.body if isinstance(node, ast.Assign)
            for call in ast.walk(node.value) if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute) and call.func.attr in ("block", "blocks")
            for element in node.targets for target in ast.walk(element)
            if isinstance(target, ast.Name)}


def _used_by_tests(tree: ast.Module) -> set[str]:
    """The names a module's functions (their bodies, defaults and decorators) load, and the
    module-level names the values of those names are computed from."""
    def loaded(node: ast.AST) -> set[str]:
        return {name.id for name in ast.walk(node)
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load)}
    used = set().union(*(loaded(node) for node in tree.body
                         if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)))
    assignments = [(loaded(node.value), {t.id for e in node.targets for t in ast.walk(e)
                                         if isinstance(t, ast.Name)})
                   for node in tree.body if isinstance(node, ast.Assign)]
    grown = True
    while grown:
        before = len(used)
        for sources, targets in assignments:
            if targets & used:
                used |= sources
        grown = len(used) > before
    return used


@pytest.mark.parametrize("module", sorted({block.directive.value for block in RUN
                                           if block.directive is not None}))
def test_every_block_a_module_reads_is_used_by_one_of_its_tests(module: str) -> None:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"), module)
    unused = sorted(_read_names(tree) - _used_by_tests(tree))
    assert not unused, (f"{module} reads blocks into {', '.join(unused)} but no test uses "
                        "them; run each block a directive says this module runs")
