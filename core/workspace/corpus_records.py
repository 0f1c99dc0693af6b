"""The corpora of a workspace and their splits: `CorpusRecords`, mixed into
core.workspace.store.Workspace. A corpus is a row of the corpora table plus its folder
corpora/<id>/ (the text as files, written inside the row's transaction; corpus.json, a
copy of the row); its split is a row of corpus_splits plus split.json beside the text.
"""
from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core import diskspace
from core.atomic import write_text_atomic
from core.data.corpus import Corpus
from core.errors import StoreError
from core.safepath import remove_tree, within
from core.workspace.database import WorkspaceDatabase
from core.workspace.health import row_json, row_number
from core.workspace.info import CorpusInfo, SplitInfo
from core.workspace.paths import (
    CORPORA_DIR,
    CORPUS_META,
    IMPORTING,
    corpus_files_size,
    corpus_needs_escaping,
    read_corpus_files,
    write_corpus_files,
    write_meta,
)


class CorpusRecords(WorkspaceDatabase):
    """Corpora (add, look up, load, rename, delete) and their stored splits."""

    def add_corpus(
        self,
        corpus: Corpus,
        name: str | None = None,
        format: str = "",
        options: dict[str, Any] | None = None,
        sources: Sequence[str | Path] = (),
    ) -> int:
        """Store `corpus` under `name` (default: corpus.name): its text as files in
        corpora/<id>/ and its row. Returns the new id."""
        pairs = corpus.pairs
        n_docs = len({p.doc_id for p in pairs if p.doc_id is not None})
        escaped = corpus_needs_escaping(corpus)
        with self._write() as conn:
            name = self._check_new_name("corpora", "corpus", name or corpus.name)
            cur = conn.execute(
                "INSERT INTO corpora (name, format, src_lang, tgt_lang, n_pairs, n_documents,"
                " created, sources, options, warnings, escaped)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (name, format, corpus.src_lang, corpus.tgt_lang, len(pairs), n_docs,
                 time.time(), json.dumps([str(s) for s in sources]),
                 json.dumps(options or {}), json.dumps(list(corpus.warnings)), int(escaped)),
            )
            corpus_id = int(cur.lastrowid)
            # Written inside the transaction: a failure leaves neither row nor files (a
            # crash leaves a folder marked IMPORTING, which the next open removes).
            folder = self.root / CORPORA_DIR / str(corpus_id)
            if folder.is_symlink():
                remove_tree(folder)  # a link left there goes itself: nothing is written through it
            self._claim_folder(folder, "corpus")
            folder = self.corpus_dir(corpus_id)
            try:
                (folder / IMPORTING).touch()
                write_corpus_files(folder, corpus, escaped)
                row = conn.execute("SELECT * FROM corpora WHERE id = ?", (corpus_id,)).fetchone()
                write_meta(folder / CORPUS_META, self._corpus_meta(row))
            except BaseException as exc:
                remove_tree(folder)  # no partial corpus stays
                if diskspace.is_full(exc):
                    raise diskspace.disk_full(folder, corpus_files_size(corpus),
                                              f"corpus {name!r}") from None
                raise
        (folder / IMPORTING).unlink(missing_ok=True)
        return corpus_id


    @staticmethod
    def _corpus_meta(row: sqlite3.Row) -> dict[str, Any]:
        """A corpus row as the CORPUS_META record beside its files."""
        meta = {k: row[k] for k in row.keys() if k != "id"}
        for key in ("sources", "options", "warnings"):
            meta[key] = json.loads(meta[key])
        return meta

    def _corpus_info(self, row: sqlite3.Row) -> CorpusInfo:
        db = self.db_path
        return CorpusInfo(
            id=row["id"], name=row["name"], format=row["format"], src_lang=row["src_lang"],
            tgt_lang=row["tgt_lang"], n_pairs=row_number(db, "corpus", row, "n_pairs"),
            n_documents=row_number(db, "corpus", row, "n_documents"),
            created=row_number(db, "corpus", row, "created", float),
            sources=row_json(db, "corpus", row, "sources", list, []),
            options=row_json(db, "corpus", row, "options", dict, {}),
            warnings=row_json(db, "corpus", row, "warnings", list, []),
            path=self.root / CORPORA_DIR / str(row["id"]),
        )

    def corpus_dir(self, ref: int | str) -> Path:
        """The folder of corpus `ref` (id or name), checked to lie inside the workspace
        (core.safepath.within: StoreError for a link out); not created."""
        path = self.root / CORPORA_DIR / str(self.corpus_id(ref))
        within(self.root, path, "the corpus folder", StoreError)
        return path

    def corpus_id(self, ref: int | str) -> int:
        """The id of corpus `ref` (an id, a name, or an id written as text)."""
        return self._resolve("corpora", "corpus", ref)

    def get_corpus(self, ref: int | str) -> CorpusInfo:
        """CorpusInfo of corpus `ref` (id or name); StoreError when there is none."""
        row = self._query("SELECT * FROM corpora WHERE id = ?", (self.corpus_id(ref),))[0]
        return self._corpus_info(row)

    def list_corpora(self) -> list[CorpusInfo]:
        """CorpusInfo of every corpus, by id."""
        return [self._corpus_info(r) for r in self._query("SELECT * FROM corpora ORDER BY id")]

    def load_corpus(self, ref: int | str) -> Corpus:
        """The corpus exactly as it was added: pairs, doc ids, origin lines, languages."""
        info = self.get_corpus(ref)
        escaped = bool(self._query("SELECT escaped FROM corpora WHERE id = ?",
                                   (info.id,))[0]["escaped"])
        pairs = read_corpus_files(self.corpus_dir(info.id), info.n_pairs, escaped)
        return Corpus(pairs, info.src_lang, info.tgt_lang, name=info.name,
                      warnings=list(info.warnings))

    def rename_corpus(self, ref: int | str, name: str) -> None:
        """Give a corpus a new, unused name; its id, files, split and runs stay."""
        corpus_id = self.corpus_id(ref)
        with self._write() as conn:
            current = conn.execute("SELECT name FROM corpora WHERE id = ?", (corpus_id,))
            if current.fetchone()[0] != name.strip():
                conn.execute("UPDATE corpora SET name = ? WHERE id = ?",
                             (self._check_new_name("corpora", "corpus", name), corpus_id))
                row = conn.execute("SELECT * FROM corpora WHERE id = ?",
                                   (corpus_id,)).fetchone()
                folder = self.root / CORPORA_DIR / str(corpus_id)
                if folder.is_dir():
                    write_meta(folder / CORPUS_META, self._corpus_meta(row))

    def delete_corpus(self, ref: int | str) -> None:
        """Delete a corpus, its split and its files. Refused while runs use it."""
        corpus_id = self.corpus_id(ref)
        with self._write() as conn:
            runs = [r[0] for r in conn.execute(
                "SELECT name FROM runs WHERE corpus_id = ? ORDER BY id", (corpus_id,))]
            if runs:
                raise StoreError(f"corpus {ref!r} is used by runs {', '.join(runs)}; delete "
                                 "those runs first.")
            conn.execute("DELETE FROM corpora WHERE id = ?", (corpus_id,))
        remove_tree(self.root / CORPORA_DIR / str(corpus_id))  # a link: only the link goes

    # --- splits -----------------------------------------------------------------------------
    def save_split(
        self, ref: int | str, seed: int, ratios: Sequence[float],
        assignment: dict[str, Sequence[int]],
    ) -> None:
        """Store the train/dev/test assignment of corpus `ref` (replacing an older one).
        `assignment`: split name -> pair indices."""
        info = self.get_corpus(ref)
        clean = {name: [int(i) for i in idx] for name, idx in assignment.items()}
        for name, idx in clean.items():
            bad = [i for i in idx if not 0 <= i < info.n_pairs]
            if bad:
                raise ValueError(f"split {name!r} holds index {bad[0]} outside corpus "
                                 f"{info.name!r} of {info.n_pairs} pairs")
        path = self.corpus_dir(info.id) / "split.json"
        payload = {"seed": seed, "ratios": [float(r) for r in ratios], "assignment": clean}
        with self._write() as conn:
            write_text_atomic(path, json.dumps(payload))
            conn.execute(
                "INSERT OR REPLACE INTO corpus_splits (corpus_id, seed, ratios, sizes, path,"
                " created) VALUES (?, ?, ?, ?, ?, ?)",
                (info.id, seed, json.dumps(payload["ratios"]),
                 json.dumps({k: len(v) for k, v in clean.items()}), self._rel(path),
                 time.time()),
            )

    def split_sizes(self, ref: int | str) -> dict[str, int] | None:
        """Pairs per set of corpus `ref`'s stored split (from its row, no file read), or
        None when it has none yet."""
        rows = self._query("SELECT corpus_id AS id, sizes FROM corpus_splits WHERE "
                           "corpus_id = ?", (self.corpus_id(ref),))
        if not rows:
            return None
        sizes = row_json(self.db_path, "split of corpus", rows[0], "sizes", dict, {})
        return {k: int(v) for k, v in sizes.items()}

    def split_settings(self, ref: int | str) -> tuple[int, list[float]] | None:
        """(seed, ratios) of corpus `ref`'s stored split, from its row (no file read: they
        survive a damaged split.json), or None when it has none yet."""
        rows = self._query("SELECT corpus_id AS id, seed, ratios FROM corpus_splits WHERE "
                           "corpus_id = ?", (self.corpus_id(ref),))
        if not rows:
            return None
        return (row_number(self.db_path, "split of corpus", rows[0], "seed"),
                row_json(self.db_path, "split of corpus", rows[0], "ratios", list, []))

    def load_split(self, ref: int | str) -> SplitInfo | None:
        """The stored split of corpus `ref`, or None when it has none yet."""
        corpus_id = self.corpus_id(ref)
        rows = self._query("SELECT * FROM corpus_splits WHERE corpus_id = ?", (corpus_id,))
        if not rows:
            return None
        path = self._inside(rows[0]["path"], f"the stored split of corpus {corpus_id}")
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StoreError(f"{path}: cannot read the stored split ({exc}); split the corpus "
                             "again.") from exc
        return SplitInfo(corpus_id, int(payload["seed"]), list(payload["ratios"]),
                         {k: list(v) for k, v in payload["assignment"].items()},
                         rows[0]["created"])
