"""Finding flows: by name in the project's flows folder, by file path, or by stored digest.

A run keeps the digest of the exact flow source it started with (saved in the store), so it
resumes against that definition on any worker, even after the file was edited or removed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from tarry._suggest import did_you_mean
from tarry.errors import FlowNotFound, LoadError
from tarry.language.loader import load_flow, parse_flow
from tarry.language.manifests import Manifest
from tarry.language.model import Flow
from tarry.store.base import Store

__all__ = ["FlowCatalog"]

_SUFFIXES = (".yaml", ".yml")


class FlowCatalog:
    """Resolves flow names and digests to loaded :class:`Flow` objects (cached).

    Flows are loaded checked against ``manifests`` when given (their event types and
    ``match`` keys). A stored flow, which a run already started with, is not checked again:
    it resumes whatever the manifests say now.
    """

    def __init__(self, flows_dir: Path, store: Store, actions: Collection[str],
                 manifests: Mapping[str, Manifest] | None = None) -> None:
        self.flows_dir = flows_dir
        self.store = store
        self.actions = frozenset(actions)
        self.manifests = manifests
        self._by_digest: dict[str, Flow] = {}

    def resolve(self, name_or_path: str) -> Flow:
        """The flow named ``name_or_path`` in the flows folder, or the YAML file at that path."""
        path = Path(name_or_path)
        if path.suffix in _SUFFIXES and path.is_file():
            return self._remember(self._load(path))
        candidates = self._named_files()
        if name_or_path in candidates:
            return self._remember(self._load(candidates[name_or_path]))
        if path.suffix in _SUFFIXES:
            raise FlowNotFound(f"no flow file at {name_or_path}")
        raise FlowNotFound(f"no flow named '{name_or_path}' in {self.flows_dir}"
                           f"{did_you_mean(name_or_path, candidates)}")

    def by_digest(self, digest: str) -> Flow:
        """The flow a run started with, from the store."""
        flow = self._by_digest.get(digest)
        if flow is None:
            source = self.store.flow_source(digest)
            flow = parse_flow(source, f"<stored flow {digest[:12]}>", actions=self.actions)
            self._by_digest[digest] = flow
        return flow

    def all_files(self) -> list[Path]:
        """Every YAML file in the flows folder, sorted."""
        if not self.flows_dir.is_dir():
            return []
        return sorted(p for p in self.flows_dir.rglob("*") if p.suffix in _SUFFIXES)

    def _named_files(self) -> dict[str, Path]:
        named: dict[str, Path] = {}
        for path in self.all_files():
            try:
                named[self._load(path).name] = path
            except LoadError:
                named.setdefault(path.stem, path)
        return named

    def _load(self, path: Path) -> Flow:
        return load_flow(path, actions=self.actions, manifests=self.manifests)

    def _remember(self, flow: Flow) -> Flow:
        if flow.digest not in self._by_digest:
            self.store.save_flow(flow.digest, flow.name, flow.source)
            self._by_digest[flow.digest] = flow
        return flow
