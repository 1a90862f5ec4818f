"""The on-disk index format (one shop, one folder) and its in-memory form: FAISS vectors, BM25 terms, documents.

Index folder layout::

    <out>/CURRENT                             one line: the live version folder's name, swapped atomically (os.replace)
    <out>/.lock                               held (flock) by the `ask-engine index` run updating this folder
    <out>/versions/<build-id>/manifest.json   format_version, builder, model, dimension, created_at, build_seconds,
                                              shop info, counts, per-document content hash + passage ids, fingerprint,
                                              `files`: size + blake2b of every other file of the version, and
                                              `checksum`: blake2b of the manifest itself (canonical JSON, without it)
    <out>/versions/<build-id>/documents.jsonl Document.to_dict() per line, in catalogue order
    <out>/versions/<build-id>/passages.jsonl  Passage.to_dict() per line, in vector row order
    <out>/versions/<build-id>/vectors.faiss   faiss IndexFlatIP (inner product of normalised vectors = cosine, exact);
                                              IndexHNSWFlat instead from `hnsw_threshold` passages on, when set
    <out>/versions/<build-id>/embeddings.npy  float32 (passages, dimension): incremental builds reuse these rows
    <out>/versions/<build-id>/bm25/           bm25s index over passage title + text, plus tokenizer.json (stemmer)
    <out>/versions/<build-id>/aliases.json    alias key -> {"doc_id": ..., "variant_gid": ... | null}
    <out>/versions/<build-id>/unit_vectors.npy + unit_texts.json
                                              float32 vector of every text the extractive answerer compares with a
                                              question, and the text of each row (`ask_engine.unit_vectors`); opened
                                              memory-mapped. Optional: a version without them answers by embedding
                                              those texts at question time
    <out>/versions/<build-id>/unit_sources.json
                                              which of those rows are each document's, so a reindex makes the texts
                                              of changed documents only (`ask_engine.unit_texts`)

Version folders are immutable once renamed into place; `ShopIndex.open` reads everything into memory but the unit
vectors, which it maps (an unlinked file stays readable while mapped), so an open index keeps answering after a
rebuild swaps CURRENT and garbage-collects its folder. Opening verifies every checksum
first: a truncated, zeroed, bit-flipped or missing file is an IndexUnusable, never a silently wrong answer.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ask_engine.errors import IndexUnusable
from ask_engine.integrity import CHECKSUM, FILES, file_checksums, integrity_problems, manifest_checksum
from ask_engine.language import content_stems
from ask_engine.lexical import BM25, Bm25Index
from ask_engine.parallel import mapped
from ask_engine.types import Document, Hit, Passage, ShopInfo
from ask_engine.unit_vectors import UNIT_TEXTS, UNIT_VECTORS, UnitVectors

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: the manifest records (and opening verifies) a checksum of every file
CURRENT = "CURRENT"
VERSIONS = "versions"
MANIFEST = "manifest.json"
DOCUMENTS = "documents.jsonl"
PASSAGES = "passages.jsonl"
VECTORS = "vectors.faiss"
EMBEDDINGS = "embeddings.npy"
ALIASES = "aliases.json"
_REQUIRED = (MANIFEST, DOCUMENTS, PASSAGES, VECTORS, EMBEDDINGS, BM25, ALIASES)

# Subsets up to this many rows are scored with numpy on reconstructed rows instead of a filtered faiss scan.
_SMALL_SUBSET = 2048
_HNSW_M = 32
_HNSW_EF_SEARCH = 128


# --------------------------------------------------------------------------------------------- vectors


def _faiss() -> Any:
    import faiss

    return faiss


def _as_matrix(vectors: Any, dimension: int) -> npt.NDArray[np.float32]:
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != dimension:
        raise ValueError(f"expected a (n, {dimension}) matrix, got shape {matrix.shape}")
    return matrix


class FaissVectorIndex:
    """Cosine top-k over normalised passage vectors; `where` restricts a search to a set of passage ids."""

    def __init__(self, dimension: int, *, hnsw_threshold: int = 0) -> None:
        self.dimension = dimension
        self.hnsw_threshold = hnsw_threshold
        self.ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._index: Any = _faiss().IndexFlatIP(dimension)
        self._mapped = False  # read by `load` from a memory-mapped file: searchable, never added to

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def kind(self) -> str:
        return "hnsw" if isinstance(self._index, _faiss().IndexHNSWFlat) else "flat"

    def add(self, ids: Sequence[str], vectors: Any) -> None:
        if self._mapped:  # faiss aborts the process on a write to a mapped index; refuse first
            raise ValueError("a vector index loaded from disk is read-only (memory-mapped); build a new one")
        matrix = _as_matrix(vectors, self.dimension)
        ids = list(ids)
        if len(ids) != matrix.shape[0]:
            raise ValueError(f"{len(ids)} ids for {matrix.shape[0]} vectors")
        for pid in ids:
            if pid in self._rows:
                raise ValueError(f"duplicate passage id {pid!r}")
            self._rows[pid] = len(self.ids)
            self.ids.append(pid)
        total = len(self.ids)
        if self.kind == "flat" and self.hnsw_threshold > 0 and total >= self.hnsw_threshold:
            # Switching to HNSW rebuilds the graph from every row; it happens once, at build time.
            old = self._index
            self._index = self._new_hnsw()
            if old.ntotal:
                self._index.add(old.reconstruct_n(0, old.ntotal))
        if matrix.shape[0]:
            self._index.add(matrix)

    def _new_hnsw(self) -> Any:
        faiss = _faiss()
        index = faiss.IndexHNSWFlat(self.dimension, _HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = _HNSW_EF_SEARCH
        return index

    def vectors(self) -> npt.NDArray[np.float32]:
        """Every row, in passage order (a copy)."""
        if not self.ids:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(self._index.reconstruct_n(0, len(self.ids)), dtype=np.float32)

    def search(self, vector: Any, k: int, where: set[str] | None = None) -> list[Hit]:
        query = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dimension:
            raise ValueError(f"query vector has {query.shape[0]} dimensions, index has {self.dimension}")
        if k <= 0 or not self.ids:
            return []
        if where is None:
            scores, rows = self._index.search(query[None, :], min(k, len(self.ids)))
            return self._hits(rows[0], scores[0])
        subset = np.array(sorted(self._rows[p] for p in where if p in self._rows), dtype=np.int64)
        if subset.size == 0:
            return []
        if subset.size <= _SMALL_SUBSET or self.kind == "hnsw":
            # Exact scores for the subset: filtered HNSW walks can miss rows of a small subset entirely.
            sub_scores = self._index.reconstruct_batch(subset) @ query
            order = np.argsort(-sub_scores, kind="stable")[:k]
            return self._hits(subset[order], sub_scores[order])
        faiss = _faiss()
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(subset))
        scores, rows = self._index.search(query[None, :], min(k, int(subset.size)), params=params)
        return self._hits(rows[0], scores[0])

    def _hits(self, rows: Iterable[Any], scores: Iterable[Any]) -> list[Hit]:
        hits: list[Hit] = []
        for row, score in zip(rows, scores, strict=True):
            if row < 0:  # faiss pads with -1 when fewer than k rows qualify
                continue
            hits.append(Hit(passage_id=self.ids[int(row)], score=float(score), rank=len(hits) + 1, source="dense"))
        return hits

    def save(self, folder: str | os.PathLike[str]) -> None:
        _faiss().write_index(self._index, str(Path(folder) / VECTORS))

    @classmethod
    def load(cls, folder: str | os.PathLike[str], ids: Sequence[str]) -> FaissVectorIndex:
        """Read vectors.faiss from `folder`, memory-mapped: the vectors stay in the page cache, where every process
        serving the index (server workers, replicas on one host) shares them. `ids` name its rows."""
        faiss = _faiss()
        index = faiss.read_index(str(Path(folder) / VECTORS), getattr(faiss, "IO_FLAG_MMAP_IFC", 0))
        if index.ntotal != len(ids):
            raise ValueError(f"{VECTORS} has {index.ntotal} rows for {len(ids)} passages")
        self = cls(index.d)
        self._index, self._mapped = index, True
        if isinstance(index, _faiss().IndexHNSWFlat):
            index.hnsw.efSearch = max(index.hnsw.efSearch, _HNSW_EF_SEARCH)
        self.ids = list(ids)
        self._rows = {pid: row for row, pid in enumerate(self.ids)}
        if len(self._rows) != len(self.ids):
            raise ValueError("duplicate passage ids")
        return self


# --------------------------------------------------------------------------------------------- integrity
# (ask_engine/integrity.py; re-exported here for the indexer and the tests)

# --------------------------------------------------------------------------------------------- the shop index


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _jsonl_line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


def _dict_line(item: Document | Passage) -> str:
    return _jsonl_line(item.to_dict())


def write_version(
    folder: str | os.PathLike[str],
    *,
    manifest: dict[str, Any],
    documents: Sequence[Document],
    passages: Sequence[Passage],
    embeddings: Any,
    aliases: dict[str, tuple[str, str | None]],
    hnsw_threshold: int = 0,
    unit_vectors: UnitVectors | None = None,
    processes: int = 1,
) -> None:
    """Write one complete version folder (the files of the layout above). The caller makes it live. A large
    catalogue's lines and lexical tokens are made over `processes` processes (`ask_engine.parallel`)."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    matrix = _as_matrix(embeddings, int(manifest["dimension"]))
    if matrix.shape[0] != len(passages):
        raise ValueError(f"{matrix.shape[0]} embeddings for {len(passages)} passages")
    lines: tuple[tuple[str, Sequence[Document | Passage]], ...] = ((DOCUMENTS, documents), (PASSAGES, passages))
    for name, items in lines:
        with (target / name).open("w", encoding="utf-8") as fh:
            fh.writelines(mapped(_dict_line, items, processes))
    with (target / EMBEDDINGS).open("wb") as fh:
        np.save(fh, matrix, allow_pickle=False)
    vectors = FaissVectorIndex(matrix.shape[1], hnsw_threshold=hnsw_threshold)
    vectors.add([p.id for p in passages], matrix)
    vectors.save(target)
    lexical = Bm25Index.build(passages, processes=processes)
    lexical.save(target)
    alias_rows = {key: {"doc_id": doc_id, "variant_gid": gid} for key, (doc_id, gid) in sorted(aliases.items())}
    (target / ALIASES).write_text(json.dumps(alias_rows, ensure_ascii=False, indent=0), "utf-8")
    if unit_vectors is not None:
        unit_vectors.save(target)
    full_manifest = {
        **{k: v for k, v in manifest.items() if k not in (FILES, CHECKSUM)},
        "format_version": FORMAT_VERSION,
        "vector_index": {"type": vectors.kind, "metric": "inner_product"},
        "lexical_index": {"type": "bm25s", "stemmer": lexical.tokenizer.stemmer, "stopwords": "en"},
        FILES: file_checksums(target),
    }
    full_manifest[CHECKSUM] = manifest_checksum(full_manifest)
    (target / MANIFEST).write_text(json.dumps(full_manifest, ensure_ascii=False, indent=2), "utf-8")


def live_version(index_dir: str | os.PathLike[str]) -> str:
    """The live version's folder name; IndexUnusable saying what to do when `index_dir` holds no index.

    Cheap (reads one small file), so callers can check an --index before loading a model. A shop folder (it has
    shop.toml) is the commonest mistake: the message says how to index it, into a folder of its own.
    """
    root = Path(index_dir)
    if (root / "shop.toml").is_file():
        shop = root.resolve().name or "my-shop"
        raise IndexUnusable(
            f"{root} is a shop folder (it has shop.toml), not an index: index it first with "
            f"`ask-engine index {root} --out indexes/{shop}`, then pass --index indexes/{shop}"
        )
    if not root.is_dir():
        raise IndexUnusable(f"no index at {root}: build one with `ask-engine index SHOP_DIR --out {root}`")
    name = read_current(root)
    if name is None:
        raise IndexUnusable(
            f"{root} holds no live index (no {CURRENT} file): build one with `ask-engine index SHOP_DIR --out {root}`"
        )
    return name


def read_current(index_dir: str | os.PathLike[str]) -> str | None:
    """The live version's folder name from CURRENT, or None when there is none; IndexUnusable when it is damaged."""
    path = Path(index_dir) / CURRENT
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise IndexUnusable(f"cannot read {path}: {exc}") from exc
    try:
        name = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise IndexUnusable(
            f"{path} is corrupt (not UTF-8 text: {raw[:40]!r}); rebuild the index with `ask-engine index`"
        ) from None
    if (
        not name
        or not name.isprintable()
        or any(c.isspace() or c in "/\\" for c in name)
        or name in (".", "..")
        or name.startswith(".")
    ):
        raise IndexUnusable(f"{path} is corrupt (names {name!r}); rebuild the index with `ask-engine index`")
    return name


@dataclass
class ShopIndex:
    """One shop's index version, fully in memory."""

    path: Path
    manifest: dict[str, Any]
    shop: ShopInfo
    documents: dict[str, Document]
    passages: list[Passage]
    aliases: dict[str, tuple[str, str | None]]
    vectors: FaissVectorIndex
    lexical: Bm25Index
    unit_vectors: UnitVectors | None = None  # None: built before they were stored; answers embed at question time
    passage_by_id: dict[str, Passage] = field(init=False)
    _by_doc: dict[str, list[Passage]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.passage_by_id = {p.id: p for p in self.passages}
        self._by_doc = {}
        for p in self.passages:
            self._by_doc.setdefault(p.doc_id, []).append(p)

    @property
    def model(self) -> str:
        """Name of the embedding model the vectors were made with."""
        return str(self.manifest["model"])

    @property
    def dimension(self) -> int:
        return int(self.manifest["dimension"])

    @property
    def version(self) -> str:
        return self.path.name

    @cached_property
    def embeddings(self) -> npt.NDArray[np.float32]:
        """Passage vectors in row order (reconstructed from the vector index on first use)."""
        return self.vectors.vectors()

    @cached_property
    def on_sale(self) -> tuple[str, ...]:
        """The ids of the products with a sale price, in catalogue order ("which of your products are on sale?" asks
        for every one of them, not only those retrieval ranks first)."""
        return tuple(d.id for d in self.documents.values() if d.kind == "product" and d.fact("sale") is not None)

    @cached_property
    def vendors(self) -> frozenset[str]:
        """The lower-case vendor names of the catalogue's products (the makers a policy may single out: "our own
        Kettle & Crane cookware … Covered: …" is no rule for another maker's pan)."""
        return frozenset(d.vendor.strip().lower() for d in self.documents.values() if d.kind == "product" and d.vendor)

    @cached_property
    def fact_labels(self) -> tuple[str, ...]:
        """The distinct labels, of two words or more, of the catalogue's recorded attributes (metafields): "bed temp?"
        names "Bed temperature", recorded for other filaments, and not the "Nozzle temperature" a product in view
        records in its place."""
        labels = {
            f.label
            for d in self.documents.values()
            if d.kind == "product"
            for f in d.facts
            if f.source == "metafield" and len(content_stems(f.label)) >= 2
        }
        return tuple(sorted(labels))

    @cached_property
    def kind_words(self) -> frozenset[str]:
        """The stems of the catalogue's product types: "do you ship saddles to France?" asks about saddles, whose own
        delivery rule ("Saddles - UK and Republic of Ireland only") outranks the destination's rates, with no saddle in
        view. Types only: a title's words ("Powder-free") would read "is it free?" as naming a kind."""
        types = " ".join({d.product_type for d in self.documents.values() if d.kind == "product" and d.product_type})
        return content_stems(types)

    @cached_property
    def catalogue_words(self) -> frozenset[str]:
        """The stems of every product's title, type and vendor: "can I return an opened PLA spool?" names something the
        catalogue sells, though the returns policy retrieved for it never says "PLA"."""
        return frozenset().union(
            *(
                content_stems(" ".join(filter(None, (d.title, d.product_type, d.vendor))))
                for d in self.documents.values()
                if d.kind == "product"
            )
        )

    def passages_of(self, doc_id: str) -> list[Passage]:
        """The passages of one document, in order ([] for an unknown id)."""
        return list(self._by_doc.get(doc_id, ()))

    @staticmethod
    def current_version(index_dir: str | Path) -> str | None:
        """Name of the live version folder, or None when the folder holds no index yet."""
        return read_current(index_dir)

    @classmethod
    def open(cls, index_dir: str | Path, *, expected_model: str | None = None) -> ShopIndex:
        """Load the live version of `index_dir`; IndexUnusable when it is missing, corrupt or made with another model."""
        root = Path(index_dir)
        name = live_version(root)
        return cls.load_version(root / VERSIONS / name, expected_model=expected_model)

    @classmethod
    def load_version(cls, folder: str | Path, *, expected_model: str | None = None) -> ShopIndex:
        """Load one version folder (normally reached through `open`)."""
        path = Path(folder)
        if not path.is_dir():
            raise IndexUnusable(f"index version {path} named by {CURRENT} is missing; rebuild the index")
        missing = [name for name in _REQUIRED if not (path / name).exists()]
        if missing:
            raise IndexUnusable(f"index version {path} is incomplete (missing {', '.join(missing)}); rebuild the index")
        try:
            manifest = json.loads((path / MANIFEST).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexUnusable(f"{path / MANIFEST} is unreadable ({exc}); rebuild the index") from exc
        if not isinstance(manifest, dict) or manifest.get("format_version") != FORMAT_VERSION:
            found = manifest.get("format_version") if isinstance(manifest, dict) else None
            raise IndexUnusable(
                f"{path} has index format {found!r}, this ask-engine reads format {FORMAT_VERSION}; rebuild the index"
            )
        problems = integrity_problems(path, manifest)
        if problems:
            raise IndexUnusable(
                f"index version {path} is corrupt ({'; '.join(problems[:3])}"
                f"{f'; {len(problems) - 3} more' if len(problems) > 3 else ''}); rebuild the index"
            )
        if expected_model is not None and manifest.get("model") != expected_model:
            raise IndexUnusable(
                f"{path} was built with embedding model {manifest.get('model')!r} but {expected_model!r} is "
                "configured; rebuild the index with this model (ask-engine index --full) or configure that one"
            )
        try:
            documents = [Document.from_dict(row) for row in _read_jsonl(path / DOCUMENTS)]
            passages = [Passage.from_dict(row) for row in _read_jsonl(path / PASSAGES)]
            ids = [p.id for p in passages]
            vectors = FaissVectorIndex.load(path, ids)
            if vectors.dimension != manifest.get("dimension"):
                raise ValueError(
                    f"{VECTORS} has dimension {vectors.dimension}, manifest says {manifest.get('dimension')}"
                )
            lexical = Bm25Index.load(path, ids)
            raw_aliases = json.loads((path / ALIASES).read_text("utf-8"))
            aliases = {key: (str(v["doc_id"]), v.get("variant_gid")) for key, v in raw_aliases.items()}
            shop = ShopInfo.from_dict(manifest["shop"])
            unit_vectors = _unit_vectors(path, manifest)
        except IndexUnusable:
            raise
        except Exception as exc:  # any parse/shape failure means the folder is corrupt; say which one
            raise IndexUnusable(
                f"index version {path} is corrupt ({type(exc).__name__}: {exc}); rebuild the index"
            ) from exc
        by_id = {d.id: d for d in documents}
        orphans = sorted({p.doc_id for p in passages} - by_id.keys())
        dangling = sorted({doc_id for doc_id, _ in aliases.values()} - by_id.keys())
        if orphans or dangling:
            raise IndexUnusable(
                f"index version {path} is corrupt (passages or aliases name unknown documents: "
                f"{', '.join((orphans + dangling)[:5])}); rebuild the index"
            )
        return cls(
            path=path,
            manifest=manifest,
            shop=shop,
            documents=by_id,
            passages=passages,
            aliases=aliases,
            vectors=vectors,
            lexical=lexical,
            unit_vectors=unit_vectors,
        )


def _unit_vectors(path: Path, manifest: dict[str, Any]) -> UnitVectors | None:
    """The version's unit vectors when its manifest vouches for them (checksums verified by the caller)."""
    recorded = manifest.get(FILES) or {}
    if UNIT_VECTORS in recorded and UNIT_TEXTS in recorded:
        return UnitVectors.load(path, dimension=int(manifest["dimension"]))
    log.info(
        "index version %s has no stored unit vectors (built by %s): answers embed their sentences at question time; "
        "reindex (`ask-engine index`) to store them",
        path.name,
        manifest.get("builder", "an older ask-engine"),
    )
    return None
