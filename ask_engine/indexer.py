"""Builds and incrementally updates an index folder: validate the sources, embed only what changed, swap atomically.

A build never disturbs the live version: it validates every source file first (a SourceError writes nothing),
writes a complete new version under `versions/.tmp-<id>`, fsyncs it, renames it into place and only then replaces
CURRENT with `os.replace`. Any exception, Ctrl-C included, removes what the build wrote and leaves CURRENT as it
was. Two runs on one folder do not interleave: the second fails at once with an IndexUnusable naming the lock
(failing beats waiting here, because a queued run would re-index sources the first run may already have covered).
The previous version is kept after a swap (a process may still be loading it); older ones are removed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import secrets
import shutil
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ask_engine import __version__
from ask_engine.config import Settings
from ask_engine.encoding import embed_texts, normalised
from ask_engine.errors import IndexUnusable, SourceError
from ask_engine.indexes import (
    CURRENT,
    EMBEDDINGS,
    FORMAT_VERSION,
    MANIFEST,
    PASSAGES,
    VERSIONS,
    integrity_problems,
    read_current,
    write_version,
)
from ask_engine.parallel import default_processes, mapped
from ask_engine.protocols import Embedder
from ask_engine.types import Document, Passage, ShopInfo
from ask_engine.unit_texts import UNIT_SOURCES, AnswerTexts, load_sources
from ask_engine.unit_vectors import UNIT_TEXTS, UNIT_VECTORS, UnitVectors, updated_unit_vectors

LOCK = ".lock"
_TMP_PREFIX = ".tmp-"


@dataclass(frozen=True)
class BuildReport:
    """What one `build_index` run did."""

    version: str  # the live version after the run
    documents: int
    passages: int
    added: int
    changed: int
    removed: int
    unchanged: int
    embedded_passages: int
    seconds: float  # the whole run, model loading included
    path: Path  # the live version folder
    model: str = ""
    documents_by_kind: tuple[tuple[str, int], ...] = ()
    reembedded_all: str | None = None  # why every passage was embedded (first build, --full, model changed...)
    up_to_date: bool = False  # nothing changed: no new version was written
    warnings: tuple[str, ...] = ()
    model_seconds: float = 0.0  # creating and loading the embedding model (about 0 when it was not needed)
    embed_seconds: float = 0.0  # embedding the passages and answer texts that needed it
    unit_texts: int = 0  # texts the extractive answerer compares with questions, stored with their vectors
    embedded_units: int = 0  # of those, the ones embedded by this run (the others were reused by exact text)
    embedded_texts: int = 0  # distinct texts embedded: a passage that is also an answer text is embedded once
    text_documents: int = 0  # documents whose answer texts were made (the others' came from the live version)


@dataclass
class _Live:
    """The live version as an incremental build sees it."""

    name: str | None = None  # None: no live version (or an unreadable CURRENT)
    manifest: dict[str, Any] | None = None  # None: unreadable; every document then counts as added
    # Embeddings reusable with this build's model (None: re-embed everything, `reason` says why).
    rows: dict[str, int] | None = None  # passage id -> row in embeddings
    texts: dict[str, str] | None = None  # passage id -> the text that was embedded
    embeddings: npt.NDArray[np.float32] | None = None
    units: UnitVectors | None = None  # the live version's answer-text vectors (None: none, or not reusable)
    sources: dict[str, Any] | None = None  # where each document's answer texts are among units' rows (same code)
    reason: str | None = None
    damaged: str | None = None  # what of the live version fails its checksums: it is rewritten, never kept


def _now() -> datetime:
    return datetime.now(UTC)


def _fsync_path(path: Path, *, directory: bool = False) -> None:
    if directory and os.name == "nt":  # directories cannot be opened for fsync on Windows
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for folder, _dirs, files in os.walk(root):
        for name in files:
            _fsync_path(Path(folder) / name)
        _fsync_path(Path(folder), directory=True)


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Exclusive, non-blocking lock on `<out>/.lock` for the whole build."""
    path = out / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise IndexUnusable(f"cannot write to index folder {out}: {exc}") from exc
    try:
        try:
            if sys.platform == "win32":
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise IndexUnusable(
                f"another `ask-engine index` run is updating {out} (it holds {path}); run again when it has finished"
            ) from exc
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _read_live(out: Path, embedder: Embedder) -> _Live:
    """What of the live version an incremental build can use: its manifest, and its vectors if the model matches.

    Nothing is taken on trust: a manifest that fails its own checksum counts as unreadable, and vectors are reused
    only when embeddings.npy and passages.jsonl match the checksums the manifest recorded for them.
    """
    try:
        name = read_current(out)
    except IndexUnusable as exc:
        return _Live(reason=f"the live version is unreadable ({exc})")
    if name is None:
        return _Live(reason="first build")
    folder = out / VERSIONS / name
    try:
        manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
        if not isinstance(manifest, dict) or not isinstance(manifest.get("documents"), dict):
            raise ValueError(f"{MANIFEST} has no documents table")
    except (OSError, ValueError) as exc:
        return _Live(name=name, reason=f"the live version is unreadable ({type(exc).__name__}: {exc})")
    if manifest.get("format_version") != FORMAT_VERSION:
        return _Live(
            name=name,
            manifest=manifest,
            reason=f"index format changed ({manifest.get('format_version')} → {FORMAT_VERSION})",
        )
    problems = integrity_problems(folder, manifest)
    if problems and problems[0].startswith(MANIFEST):
        return _Live(name=name, reason=f"the live version is damaged ({problems[0]})")
    live = _Live(name=name, manifest=manifest, damaged="; ".join(problems) or None)
    if manifest.get("model") != embedder.name or manifest.get("dimension") != embedder.dimension:
        live.reason = f"embedding model changed ({manifest.get('model')} → {embedder.name})"
        return live
    vector_problems = [p for p in problems if p.startswith((PASSAGES, EMBEDDINGS))]
    if vector_problems:
        live.reason = f"the live version's vectors are damaged ({'; '.join(vector_problems)})"
        return live
    try:
        with (folder / PASSAGES).open(encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        embeddings = np.load(folder / EMBEDDINGS, allow_pickle=False)
        if embeddings.shape != (len(rows), embedder.dimension):
            raise ValueError(f"{EMBEDDINGS} has shape {embeddings.shape} for {len(rows)} passages")
        live.rows = {str(r["id"]): i for i, r in enumerate(rows)}
        live.texts = {str(r["id"]): str(r["text"]) for r in rows}
        live.embeddings = np.asarray(embeddings, dtype=np.float32)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        live.reason = f"the live version's vectors are unreadable ({type(exc).__name__}: {exc})"
        return live
    if not [p for p in problems if p.startswith((UNIT_VECTORS, UNIT_TEXTS))]:
        # unreadable or missing (an older version): every answer text is embedded, nothing else changes
        with contextlib.suppress(OSError, ValueError):
            live.units = UnitVectors.load(folder, dimension=embedder.dimension)
        if live.units is not None and not [p for p in problems if p.startswith(UNIT_SOURCES)]:
            live.sources = load_sources(folder)
    return live


def _check_out_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise IndexUnusable(f"--out {out} is a file, not an index folder")
    if (out / "shop.toml").is_file():
        raise IndexUnusable(
            f"--out {out} is a shop folder (it has shop.toml); write the index to a folder of its own, "
            f"e.g. --out indexes/{out.resolve().name or 'my-shop'}"
        )
    if out.is_dir():
        entries = {p.name for p in out.iterdir()}
        if entries and not entries & {CURRENT, VERSIONS, LOCK}:
            raise IndexUnusable(f"--out {out} is a non-empty folder that holds no index; choose a new or empty folder")


def _passages_for(shop: ShopInfo, documents: Sequence[Document]) -> dict[str, list[Passage]]:
    from ask_engine.chunking import passages as make_passages

    by_doc: dict[str, list[Passage]] = {}
    seen: set[str] = set()
    for doc in documents:
        if doc.id in by_doc:
            raise SourceError(doc.source, "id", f"duplicate document id {doc.id!r}")
        made = make_passages(doc, shop)
        for p in made:
            if p.doc_id != doc.id or p.id in seen:
                raise IndexUnusable(f"chunking produced an inconsistent passage {p.id!r} for document {doc.id!r}")
            seen.add(p.id)
        by_doc[doc.id] = made
    return by_doc


def _fingerprint(
    model: str,
    shop: ShopInfo,
    passages: Sequence[Passage],
    hashes: dict[str, str],
    aliases: dict[str, Any],
    unit_texts: Sequence[str],
) -> str:
    # The answer texts count: a version that stores none (an older build), or other ones, is not up to date.
    digest = hashlib.sha256()
    parts = (FORMAT_VERSION, model, asdict(shop), hashes, [p.to_dict() for p in passages], sorted(aliases.items()))
    for part in (*parts, unit_texts):
        digest.update(json.dumps(part, sort_keys=True, ensure_ascii=False, default=list).encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _swap_current(out: Path, name: str) -> None:
    tmp = out / f"{CURRENT}.tmp"
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, out / CURRENT)
    _fsync_path(out, directory=True)


def _collect_garbage(out: Path, keep: set[str]) -> None:
    """Remove old versions and leftovers of killed runs; best effort (the new version is already live)."""
    with contextlib.suppress(OSError):
        for entry in (out / VERSIONS).iterdir():
            if entry.name not in keep:
                shutil.rmtree(entry, ignore_errors=True)
        (out / f"{CURRENT}.tmp").unlink(missing_ok=True)


def build_threads() -> int:
    """Embedding threads of an index build when the settings name none: every core, up to 8. A build is a batch job
    of large batches, which intra-op threads speed up; a server keeps half the cores (`embedders.default_threads`)."""
    return max(1, min(os.cpu_count() or 1, 8))


def _build_settings(settings: Settings) -> Settings:
    if settings.embedding_threads:
        return settings
    return settings.model_copy(update={"embedding_threads": build_threads()})


def build_index(
    shop_dir: str | Path,
    out: str | Path,
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    full: bool = False,
    progress: bool | None = None,
) -> BuildReport:
    """Index the shop folder `shop_dir` into `out`, re-embedding only new and changed documents (all when `full`)."""
    from ask_engine.sources import load_documents, shop_aliases

    started = time.perf_counter()
    settings = settings or Settings.load()
    out = Path(out)
    # Everything that can reject the input runs before anything is written.
    processes = settings.build_processes or default_processes()
    shop, documents = load_documents(shop_dir, processes=processes)
    by_doc = _passages_for(shop, documents)
    aliases, warnings = shop_aliases(documents)
    _check_out_folder(out)
    model_seconds = 0.0
    if embedder is None:
        from ask_engine import registry

        # Built-in embedders load their model on first use: a no-op rebuild never loads it (see _build_locked).
        loading = time.perf_counter()
        embedder = registry.create("embedder", settings.embedder, _build_settings(settings))
        model_seconds = time.perf_counter() - loading
    show_progress = sys.stderr.isatty() if progress is None else progress
    batch_size = int(getattr(embedder, "batch_size", 0) or settings.embedding_batch_size)

    # The topmost folder this build creates: a failed first build removes it, leaving no trace at all.
    created: Path | None = None
    if not out.exists():
        created = out.absolute()
        while not created.parent.exists():
            created = created.parent
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexUnusable(f"cannot create index folder {out}: {exc}") from exc
        with _locked(out):
            return _build_locked(
                out,
                shop=shop,
                documents=documents,
                by_doc=by_doc,
                aliases=aliases,
                warnings=warnings,
                embedder=embedder,
                settings=settings,
                full=full,
                progress=show_progress,
                batch_size=batch_size,
                started=started,
                model_seconds=model_seconds,
            )
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise


def _build_locked(
    out: Path,
    *,
    shop: ShopInfo,
    documents: Sequence[Document],
    by_doc: dict[str, list[Passage]],
    aliases: dict[str, tuple[str, str | None]],
    warnings: list[str],
    embedder: Embedder,
    settings: Settings,
    full: bool,
    progress: bool,
    batch_size: int,
    started: float,
    model_seconds: float = 0.0,
) -> BuildReport:
    live = _read_live(out, embedder)
    reason = "full rebuild requested" if full else live.reason
    notices = list(warnings)
    if live.damaged:
        notices.append(f"the live version {live.name} was damaged ({live.damaged}); this build replaces it")
    old_docs: dict[str, Any] = live.manifest["documents"] if live.manifest else {}

    passages = [p for doc in documents for p in by_doc[doc.id]]
    processes = settings.build_processes or default_processes()
    hashes = dict(zip([doc.id for doc in documents], mapped(Document.content_hash, documents, processes), strict=True))
    kinds = Counter(doc.kind for doc in documents)
    by_kind = tuple(sorted(kinds.items()))
    previous = None  # each unchanged document's answer texts, from the live version (made by this very code)
    if not full and live.sources is not None and live.units is not None:
        previous = (live.sources, live.units.texts)
    made = AnswerTexts(documents, by_doc, hashes, previous, processes=processes)
    unit_texts = made.texts
    fingerprint = _fingerprint(embedder.name, shop, passages, hashes, aliases, unit_texts)

    added = changed = unchanged = 0
    for doc in documents:
        old = old_docs.get(doc.id)
        if old is None:
            added += 1
        elif old.get("hash") != hashes[doc.id]:
            changed += 1
        else:
            unchanged += 1
    removed = len(old_docs.keys() - hashes.keys())

    if (
        live.name
        and live.manifest
        and not live.damaged
        and not full
        and live.manifest.get("fingerprint") == fingerprint
        and (live.units is not None or not unit_texts)  # a version built before unit vectors gains them
    ):
        return BuildReport(
            version=live.name,
            documents=len(documents),
            passages=len(passages),
            added=0,
            changed=0,
            removed=0,
            unchanged=len(documents),
            embedded_passages=0,
            seconds=time.perf_counter() - started,
            path=out / VERSIONS / live.name,
            model=embedder.name,
            documents_by_kind=by_kind,
            up_to_date=True,
            warnings=tuple(warnings),
            model_seconds=model_seconds,
            unit_texts=len(unit_texts),
            text_documents=made.made,
        )

    # A passage keeps the vector of the very text it had last time, whichever document it is in now; answer texts
    # likewise. What is left is embedded in one pass, each distinct text once (`ask_engine.encoding`).
    embeddings = np.zeros((len(passages), embedder.dimension), dtype=np.float32)
    old_rows: dict[str, int] = {}
    if reason is None and live.embeddings is not None and live.rows is not None and live.texts is not None:
        old_rows = {text: live.rows[pid] for pid, text in live.texts.items() if pid in live.rows}
    todo: list[int] = []
    kept: list[int] = []
    for i, passage in enumerate(passages):
        (kept if passage.text in old_rows else todo).append(i)
    if kept and live.embeddings is not None:
        embeddings[kept] = live.embeddings[[old_rows[passages[i].text] for i in kept]]
    old_units = live.units if reason is None else None
    new_units = [t for t in unit_texts if old_units is None or t not in old_units]
    load = getattr(embedder, "load", None)
    if (todo or new_units) and callable(load):
        loading = time.perf_counter()  # a lazy embedder: count its loading apart from the embedding
        load()
        model_seconds += time.perf_counter() - loading
    embedding = time.perf_counter()
    needed = list(dict.fromkeys([*(passages[i].text for i in todo), *new_units]))
    desc = "Embedding passages and answer texts"
    computed = embed_texts(embedder, needed, batch_size=batch_size, progress=progress, desc=desc)
    row_of = {text: i for i, text in enumerate(needed)}
    if todo:
        embeddings[todo] = normalised(computed[[row_of[passages[i].text] for i in todo]])
    units, embedded_units = updated_unit_vectors(
        unit_texts, old_units, lambda texts: computed[[row_of[t] for t in texts]], embedder.dimension
    )
    embed_seconds = time.perf_counter() - embedding

    created_at = _now()
    build_id = f"{created_at:%Y%m%dT%H%M%S}Z-{secrets.token_hex(3)}"
    manifest: dict[str, Any] = {
        "version": build_id,
        "builder": f"ask-engine {__version__}",
        "created_at": created_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "model": embedder.name,
        "dimension": embedder.dimension,
        "shop": asdict(shop),
        "counts": {
            "documents": len(documents),
            "documents_by_kind": dict(by_kind),
            "passages": len(passages),
            "aliases": len(aliases),
            "unit_texts": len(unit_texts),
        },
        "changes": {
            "added": added,
            "changed": changed,
            "removed": removed,
            "unchanged": unchanged,
            "embedded_passages": len(todo),
            "embedded_units": len(embedded_units),
            "embedded_texts": len(needed),
            "text_documents": made.made,
            "reembedded_all": reason,
            "repaired": live.damaged,
        },
        "documents": {
            doc.id: {"kind": doc.kind, "hash": hashes[doc.id], "passages": [p.id for p in by_doc[doc.id]]}
            for doc in documents
        },
        "fingerprint": fingerprint,
        "warnings": warnings,
    }

    versions = out / VERSIONS
    versions.mkdir(exist_ok=True)
    tmp = versions / f"{_TMP_PREFIX}{build_id}"
    final = versions / build_id
    swapped = False
    try:
        tmp.mkdir()
        made.save(tmp)
        manifest["build_seconds"] = round(time.perf_counter() - started, 3)
        write_version(
            tmp,
            manifest=manifest,
            documents=documents,
            passages=passages,
            embeddings=embeddings,
            aliases=aliases,
            hnsw_threshold=settings.hnsw_threshold,
            unit_vectors=units,
            processes=processes,
        )
        _fsync_tree(tmp)
        os.rename(tmp, final)
        _fsync_path(versions, directory=True)
        _swap_current(out, build_id)
        swapped = True
    finally:
        if not swapped:
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(final, ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                (out / f"{CURRENT}.tmp").unlink()
    _collect_garbage(out, {build_id} | ({live.name} if live.name else set()))

    return BuildReport(
        version=build_id,
        documents=len(documents),
        passages=len(passages),
        added=added,
        changed=changed,
        removed=removed,
        unchanged=unchanged,
        embedded_passages=len(todo),
        seconds=time.perf_counter() - started,
        path=final,
        model=embedder.name,
        documents_by_kind=by_kind,
        reembedded_all=reason,
        warnings=tuple(notices),
        model_seconds=model_seconds,
        embed_seconds=embed_seconds,
        unit_texts=len(unit_texts),
        embedded_units=len(embedded_units),
        embedded_texts=len(needed),
        text_documents=made.made,
    )


_PLURALS = {"policy": "policies", "faq": "FAQ entries", "passage": "passages"}


def _count(n: int, word: str) -> str:
    """`1 passage`, `2 passages`, `3 policies`, `1 FAQ entry`."""
    if n == 1:
        return f"1 {'FAQ entry' if word == 'faq' else word}"
    return f"{n:,} {_PLURALS.get(word, word + 's')}"


def format_report(report: BuildReport, out: str | Path) -> str:
    """The short summary `ask-engine index` prints: what changed, and where the time went."""
    kinds = ", ".join(_count(n, kind) for kind, n in report.documents_by_kind)
    lines = [
        f"{out}: {_count(report.documents, 'document')} ({kinds or 'none'}), {_count(report.passages, 'passage')}, "
        f"version {report.version}",
    ]
    shared = 0 < report.embedded_texts < report.embedded_passages + report.embedded_units
    if report.up_to_date:
        lines.append("already up to date; nothing embedded")
    else:
        lines.append(
            f"added {report.added}, changed {report.changed}, removed {report.removed}, unchanged {report.unchanged}; "
            f"embedded {_count(report.embedded_passages, 'passage')} and {_count(report.embedded_units, 'answer text')} "
            + (f"({report.embedded_texts:,} distinct) " if shared else "")
            + f"in {report.embed_seconds:.1f} s"
            + (f" ({report.reembedded_all})" if report.reembedded_all else "")
        )
    timing = f"{report.seconds:.1f} s in all"
    if report.model_seconds >= 0.05:  # a lazy embedder that never loaded costs a few ms: not worth a line
        timing = f"loading the embedding model took {report.model_seconds:.1f} s; " + timing
    lines.append(timing)
    lines.extend(f"warning: {w}" for w in report.warnings)
    return "\n".join(lines)


def cli_index(args: argparse.Namespace) -> int:
    """`ask-engine index SHOP_DIR --out DIR [--config F] [--model PATH] [--full] [--quiet]`."""
    settings = Settings.load(getattr(args, "config", None), embedding_model=getattr(args, "model", None))
    report = build_index(
        args.shop_dir,
        args.out,
        settings,
        full=bool(getattr(args, "full", False)),
        progress=False if getattr(args, "quiet", False) else None,
    )
    print(format_report(report, args.out))
    return 0
