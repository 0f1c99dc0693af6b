"""Workspace store: opening and migrating, corpora round trip, splits, runs, metrics,
checkpoints, evaluations, translations."""
from __future__ import annotations

import math
import sqlite3
import threading

import pytest

from core.data.corpus import Corpus, SentencePair
from core.errors import StoreError
from core.workspace.paths import LATEST_VERSION, apply_migrations
from core.workspace.store import Workspace

CONFIG = {"model": {"family": "luong", "hidden_size": 8}, "train": {"epochs": 1}}


@pytest.fixture
def ws(tmp_path):
    with Workspace.open(tmp_path / "ws") as workspace:
        yield workspace


def small_corpus(name: str = "toy") -> Corpus:
    pairs = [
        SentencePair("¿Qué tal?", "How are you?", "d1", 1),
        SentencePair("Ñandú — 鳥 😀", "Rhea — bird", "d1", 2),
        SentencePair("a\u2028b\x0bc\tTab", "back\\slash \\n stays", "d2", 5),
        SentencePair("  espacios  ", "", None, 7),  # kept as written, empty side too
    ]
    return Corpus(pairs, "es", "en", name=name, warnings=["line 7: empty target kept"])


# --- opening, schema, migrations --------------------------------------------------------


def test_new_workspace_has_layout_and_latest_schema(tmp_path):
    with Workspace.open(tmp_path / "new") as ws:
        assert ws.schema_version == LATEST_VERSION == 3
        assert {p.name for p in ws.root.iterdir()} >= {
            "workspace.sqlite", "corpora", "runs", "exports"}
        mode = ws._conn().execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        assert ws._conn().execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_v1_workspace_is_migrated_and_keeps_its_data(tmp_path):
    root = tmp_path / "old"
    root.mkdir()
    conn = sqlite3.connect(root / "workspace.sqlite", isolation_level=None)
    assert apply_migrations(conn, target=1) == 1
    conn.execute("INSERT INTO runs (name, config, created) VALUES ('old-run', '{}', 5.0)")
    conn.execute("INSERT INTO metrics VALUES (1, 10, 'train', 'loss', 2.5, 6.0)")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "evaluations" not in tables  # really at version 1
    conn.close()

    with Workspace.open(root, create=False) as ws:
        assert ws.schema_version == LATEST_VERSION
        run = ws.get_run("old-run")
        assert (run.id, run.created, run.status) == (1, 5.0, "queued")
        assert [(m.step, m.name, m.value) for m in ws.metrics(1)] == [(10, "loss", 2.5)]
        eval_id = ws.add_evaluation(1, "test", {"bleu": 12.5})  # a version-2 table
        assert ws.evaluations(1)[0].id == eval_id
    # Opening again applies nothing more.
    with Workspace.open(root) as ws:
        assert ws.schema_version == LATEST_VERSION and len(ws.list_runs()) == 1


def test_metrics_are_idempotent_per_run_step_and_name(tmp_path):
    with Workspace.open(tmp_path / "ws") as ws:
        rid = ws.create_run("r", CONFIG, None)
        ws.log_metrics(rid, 10, "train", {"loss": 2.5, "ppl": 12.0})
        ws.log_metrics(rid, 10, "train", {"loss": 2.25})  # a resume repeats step 10
        ws.log_metrics(rid, 11, "train", {"loss": 2.0})
        assert [(m.step, m.name, m.value) for m in ws.metrics(rid)] == [
            (10, "loss", 2.25), (10, "ppl", 12.0), (11, "loss", 2.0)]


def test_v2_duplicate_metrics_are_merged_by_the_migration(tmp_path):
    root = tmp_path / "old"
    root.mkdir()
    conn = sqlite3.connect(root / "workspace.sqlite", isolation_level=None)
    assert apply_migrations(conn, target=2) == 2
    conn.execute("INSERT INTO runs (name, config, created) VALUES ('old-run', '{}', 5.0)")
    for value in (2.5, 2.4, 2.4):  # a killed run resumed twice
        conn.execute("INSERT INTO metrics VALUES (1, 10, 'train', 'loss', ?, 6.0)", (value,))
    conn.execute("INSERT INTO metrics VALUES (1, 10, 'valid', 'dev_ppl', 9.0, 6.0)")
    conn.close()
    with Workspace.open(root, create=False) as ws:
        assert [(m.step, m.kind, m.name, m.value) for m in ws.metrics(1)] == [
            (10, "train", "loss", 2.4), (10, "valid", "dev_ppl", 9.0)]


def test_newer_schema_is_refused_with_the_version(tmp_path):
    Workspace.open(tmp_path / "ws").close()
    conn = sqlite3.connect(tmp_path / "ws" / "workspace.sqlite")
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 3}")
    conn.close()
    with pytest.raises(StoreError) as err:
        Workspace.open(tmp_path / "ws")
    assert f"schema version {LATEST_VERSION + 3}" in str(err.value)
    assert "Upgrade" in str(err.value)


def test_non_workspace_folders_are_refused(tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="not empty"):
        Workspace.open(busy)
    assert not (busy / "workspace.sqlite").exists()
    Workspace.open(busy, allow_nonempty=True).close()
    assert (busy / "workspace.sqlite").exists()

    with pytest.raises(StoreError, match="missing: no such folder"):
        Workspace.open(tmp_path / "missing", create=False)
    assert not (tmp_path / "missing").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="not a workspace"):
        Workspace.open(tmp_path / "empty", create=False)

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "workspace.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="workspace.sqlite"):
        Workspace.open(broken)


def test_closed_workspace_refuses_use(tmp_path):
    ws = Workspace.open(tmp_path / "ws")
    ws.close()
    with pytest.raises(StoreError, match="closed"):
        ws.list_corpora()


# --- corpora ------------------------------------------------------------------------------


def test_corpus_round_trip_keeps_text_docs_lines_and_langs(ws):
    corpus = small_corpus()
    cid = ws.add_corpus(corpus, name="toy", format="tsv", options={"src_col": 1},
                        sources=["/data/toy.tsv"])
    back = ws.load_corpus("toy")
    assert back.pairs == corpus.pairs
    assert (back.src_lang, back.tgt_lang, back.name) == ("es", "en", "toy")
    assert back.warnings == corpus.warnings
    assert ws.load_corpus(cid).pairs == corpus.pairs
    assert ws.load_corpus(str(cid)).pairs == corpus.pairs

    info = ws.list_corpora()[0]
    assert (info.id, info.name, info.n_pairs, info.n_documents) == (cid, "toy", 4, 2)
    assert info.options == {"src_col": 1} and info.sources == ["/data/toy.tsv"]
    # Without line breaks inside segments the files are plain text, one segment a line.
    raw_tgt = (info.path / "raw.tgt").read_text(encoding="utf-8").split("\n")
    assert raw_tgt[2] == "back\\slash \\n stays"
    assert (info.path / "docids").read_text(encoding="utf-8") == "d1\nd1\nd2\n\n"


def test_segments_with_line_breaks_survive(ws):
    pairs = [SentencePair("one\nline\r\nbreak", "x\\ny", None, 3),
             SentencePair("\\", "\n", None, 4)]
    ws.add_corpus(Corpus(pairs, "fr", "en"), name="tmx-like", format="tmx")
    assert ws.load_corpus("tmx-like").pairs == pairs
    assert (ws.get_corpus("tmx-like").path / "raw.src").read_text().count("\n") == 2


def test_corpus_without_documents_has_no_docids_file(ws):
    corpus = Corpus([SentencePair("hola", "hello", None, 1)], "es", "en")
    ws.add_corpus(corpus, name="plain")
    info = ws.get_corpus("plain")
    assert info.n_documents == 0 and not (info.path / "docids").exists()
    assert ws.load_corpus("plain").pairs[0].doc_id is None


def test_bad_corpus_names_and_references(ws):
    ws.add_corpus(small_corpus(), name="toy")
    ws.add_corpus(small_corpus(), name="toy-2")
    with pytest.raises(StoreError, match="'toy-3'"):  # suggests a free name
        ws.add_corpus(small_corpus(), name="toy")
    with pytest.raises(StoreError, match="only digits"):
        ws.add_corpus(small_corpus(), name="42")
    with pytest.raises(StoreError, match="known: toy, toy-2"):
        ws.load_corpus("nope")
    with pytest.raises(StoreError, match="id 99"):
        ws.load_corpus(99)
    assert [c.name for c in ws.list_corpora()] == ["toy", "toy-2"]  # failures left nothing
    assert sorted(p.name for p in (ws.root / "corpora").iterdir()) == ["1", "2"]


def test_damaged_corpus_files_are_reported(ws):
    ws.add_corpus(small_corpus(), name="toy")
    path = ws.get_corpus("toy").path / "raw.src"
    path.write_text("only one line\n", encoding="utf-8")
    with pytest.raises(StoreError, match="holds 1 lines.*expects 4"):
        ws.load_corpus("toy")


def test_delete_corpus_refused_while_a_run_uses_it(ws):
    cid = ws.add_corpus(small_corpus(), name="toy")
    run = ws.create_run("r1", CONFIG, cid)
    with pytest.raises(StoreError, match="used by runs r1"):
        ws.delete_corpus("toy")
    ws.delete_run(run)
    ws.delete_corpus("toy")
    assert ws.list_corpora() == [] and not (ws.root / "corpora" / str(cid)).exists()


def test_rename_corpus_keeps_its_id_files_and_runs(ws):
    cid = ws.add_corpus(small_corpus(), name="toy")
    other = ws.add_corpus(small_corpus(), name="other")
    run = ws.create_run("r1", CONFIG, cid)
    ws.rename_corpus("toy", "toy corpus")
    assert ws.get_corpus(cid).name == "toy corpus" and len(ws.load_corpus(cid)) == 4
    assert ws.get_run(run).corpus_id == cid
    with pytest.raises(StoreError, match="already exists"):
        ws.rename_corpus(cid, "other")
    ws.rename_corpus(cid, "toy corpus")  # its own name: nothing to do
    assert [c.name for c in ws.list_corpora()] == ["toy corpus", "other"] and other == 2


def test_split_round_trip_and_replacement(ws):
    cid = ws.add_corpus(small_corpus(), name="toy")
    assert ws.load_split(cid) is None
    ws.save_split(cid, 7, [0.5, 0.25, 0.25], {"train": [3, 0], "dev": [1], "test": [2]})
    ws.save_split("toy", 8, [0.5, 0.5, 0.0], {"train": [0, 1], "dev": [2, 3], "test": []})
    split = ws.load_split("toy")
    assert (split.seed, split.ratios) == (8, [0.5, 0.5, 0.0])
    assert split.assignment == {"train": [0, 1], "dev": [2, 3], "test": []}
    assert split.sizes == {"train": 2, "dev": 2, "test": 0}
    with pytest.raises(ValueError, match="index 4"):
        ws.save_split(cid, 1, [1.0], {"train": [0, 4]})


# --- runs, metrics, checkpoints -----------------------------------------------------------


def test_run_lifecycle(ws):
    cid = ws.add_corpus(small_corpus(), name="toy")
    rid = ws.create_run("luong-a", CONFIG, "toy")
    run = ws.get_run("luong-a")
    assert (run.id, run.family, run.corpus_id, run.status) == (rid, "luong", cid, "queued")
    assert run.config == CONFIG and run.started is None and run.path == ws.run_dir(rid)
    assert run.path.is_dir()

    ws.update_run(rid, status="running", device="cpu")
    started = ws.get_run(rid).started
    assert started is not None and started >= run.created
    ws.update_run(rid, status="paused")
    ws.update_run(rid, status="running")  # a resume keeps the first start
    assert ws.get_run(rid).started == started
    ws.update_run(rid, status="failed", error="NaN loss at step 30", steps=30, elapsed_s=4.5)
    done = ws.get_run(rid)
    assert (done.status, done.error, done.steps, done.elapsed_s) == (
        "failed", "NaN loss at step 30", 30, 4.5)
    assert done.finished >= started

    other = ws.create_run("tf", {"model": {"family": "transformer"}}, None)
    assert [r.name for r in ws.list_runs(status="failed")] == ["luong-a"]
    assert [r.id for r in ws.list_runs(corpus_id=cid)] == [rid]
    assert [r.id for r in ws.list_runs()] == [rid, other]
    with pytest.raises(StoreError, match="'luong-a-2'"):
        ws.create_run("luong-a", CONFIG, None)
    with pytest.raises(StoreError, match="already exists"):
        ws.update_run(other, name="luong-a")
    with pytest.raises(ValueError, match="status"):
        ws.update_run(rid, status="done")
    with pytest.raises(TypeError, match="colour"):
        ws.update_run(rid, colour="red")
    ws.update_run(other, config=CONFIG)
    assert ws.get_run(other).family == "luong"


def test_metrics_and_curves(ws):
    rid = ws.create_run("r", CONFIG, None)
    for step in (100, 200, 300):
        ws.log_metrics(rid, step, "train", {"loss": 10.0 / step, "lr": 0.5})
    ws.log_metrics(rid, 200, "valid", {"ppl": 40.0, "bleu": 3.5})
    ws.log_metrics(rid, 400, "valid", {"ppl": math.nan})

    curves = ws.curves(rid, "train")
    assert curves == {"loss": ([100, 200, 300], [0.1, 0.05, 10.0 / 300]),
                      "lr": ([100, 200, 300], [0.5, 0.5, 0.5])}
    ppl = ws.curves(rid, "valid")["ppl"]
    assert ppl[0] == [200, 400] and ppl[1][0] == 40.0 and math.isnan(ppl[1][1])
    assert [(m.step, m.value) for m in ws.metrics(rid, "train", "loss", after_step=100)] == [
        (200, 0.05), (300, 10.0 / 300)]
    assert len(ws.metrics(rid)) == 9
    assert ws.metrics(rid + 1) == []
    with pytest.raises(ValueError, match="kind"):
        ws.log_metrics(rid, 1, "test", {"x": 1.0})


def test_best_dev_perplexity_of_every_run_in_one_query(ws):
    """The runs table's "best dev ppl" column: NaN (a diverged validation) is no best,
    a run that never validated has none."""
    a, b, never = (ws.create_run(n, CONFIG, None) for n in ("a", "b", "c"))
    for step, value in ((1000, 12.5), (2000, math.nan), (3000, 9.75), (4000, 11.0)):
        ws.log_metrics(a, step, "valid", {"dev_ppl": value})
    ws.log_metrics(b, 1000, "valid", {"dev_ppl": math.nan})
    ws.log_metrics(b, 1000, "train", {"dev_ppl": 1.5})  # another kind: not a validation
    ws.log_metrics(never, 1000, "train", {"loss": 3.0})
    assert ws.best_dev_ppl() == {a: 9.75}
    assert ws.best_dev_ppl([b, never]) == {}
    ws.log_metrics(b, 2000, "valid", {"dev_ppl": 20.0})
    assert ws.best_dev_ppl([b]) == {b: 20.0}


def test_checkpoints_upsert_and_follow_a_moved_workspace(tmp_path):
    with Workspace.open(tmp_path / "a") as ws:
        rid = ws.create_run("r", CONFIG, None)
        last = ws.run_dir(rid) / "last.pt"
        ws.add_checkpoint(rid, 100, last, "last")
        ws.add_checkpoint(rid, 100, ws.run_dir(rid) / "best.pt", "best", dev_ppl=30.0)
        ws.add_checkpoint(rid, 200, last, "last")  # rewritten: same row, new step
        outside = tmp_path / "elsewhere.pt"
        with pytest.raises(StoreError, match="outside"):  # a checkpoint lives in its run
            ws.add_checkpoint(rid, 50, outside, "best", dev_ppl=35.0)
        cks = ws.checkpoints(rid)
        assert [(c.step, c.path.name, c.kind, c.dev_ppl) for c in cks] == [
            (100, "best.pt", "best", 30.0), (200, "last.pt", "last", None)]
        assert [c.step for c in ws.checkpoints(rid, kind="best")] == [100]
        with pytest.raises(ValueError, match="kind"):
            ws.add_checkpoint(rid, 1, last, "first")
    (tmp_path / "a").rename(tmp_path / "b")
    with Workspace.open(tmp_path / "b") as ws:
        paths = [c.path for c in ws.checkpoints(rid)]
        assert paths == [ws.root / "runs" / str(rid) / "best.pt",
                         ws.root / "runs" / str(rid) / "last.pt"]


def test_evaluations_and_translations(ws):
    r1 = ws.create_run("r1", CONFIG, None)
    r2 = ws.create_run("r2", CONFIG, None)
    e1 = ws.add_evaluation(r1, "newstest", {"bleu": 20.5, "chrf": 45.0})
    e2 = ws.add_evaluation([r2, r1], "newstest", {"bleu": 22.0})
    assert [e.id for e in ws.evaluations(r1)] == [e1, e2]
    assert [e.id for e in ws.evaluations(r2)] == [e2]
    assert ws.evaluations()[1].run_ids == [r2, r1]
    assert ws.evaluations()[0].metrics == {"bleu": 20.5, "chrf": 45.0}

    out = ws.exports_dir / "doc.en.txt"
    t = ws.add_translation(r1, "doc.es.txt", out)
    assert [(x.id, x.run_id, x.document, x.path) for x in ws.translations(r1)] == [
        (t, r1, "doc.es.txt", out)]

    e3 = ws.add_evaluation(r2, "newstest", {"bleu": 19.0})
    ws.delete_run(r1)  # cascades: e1 and the ensemble's e2 go (not read as r2's alone)
    assert [(e.id, e.run_ids) for e in ws.evaluations()] == [(e3, [r2])]
    assert ws.translations()[0].run_id is None and ws.translations(r1) == []
    assert ws.metrics(r1) == [] and ws.checkpoints(r1) == []


def test_a_training_thread_writes_while_another_reads(ws):
    rid = ws.create_run("bg", CONFIG, None)
    seen: list[int] = []

    def train() -> None:
        for step in range(1, 201):
            ws.log_metrics(rid, step, "train", {"loss": 1.0 / step})

    worker = threading.Thread(target=train)
    worker.start()
    while worker.is_alive():
        seen.append(len(ws.metrics(rid, "train")))
    worker.join()
    steps, values = ws.curves(rid, "train")["loss"]
    assert steps == list(range(1, 201)) and values[-1] == 1.0 / 200
    assert seen == sorted(seen)  # the reader only ever sees complete, growing data


# --- a damaged, emptied or lost database (#round-2 items 3, 4) -------------------------------
def _fill(ws: Workspace) -> Workspace:
    """Corpus 'toy' (split, renamed from 'raw'), run 'r1' on it with a last.pt of step 120
    and two kept best checkpoints, and enough metric rows for a database of ~100 KB."""
    import torch

    cid = ws.add_corpus(small_corpus("raw"), format="tsv", options={"columns": [0, 1]},
                        sources=["/data/toy.tsv"])
    ws.rename_corpus(cid, "toy")
    ws.save_split(cid, 7, [0.5, 0.25, 0.25], {"train": [0, 1], "dev": [2], "test": [3]})
    config = {**CONFIG, "train": {"max_steps": 500}}
    rid = ws.create_run("r1", config, "toy")
    folder = ws.run_dir(rid)
    best = [[40.25, 100, "best-00000100.pt"], [42.5, 80, "best-00000080.pt"]]
    for name in ("last.pt", "best-00000100.pt", "best-00000080.pt"):
        torch.save({"config": config, "position": {"step": 120, "seconds": 9.5}, "best": best},
                   folder / name)
    for step in range(1500):
        ws.log_metrics(rid, step, "train", {"loss": 1.0 / (step + 1), "ppl": 2.0 + step})
    return ws


def _corrupt(db, offset: int) -> bytes:
    """4 KB of random bytes written over `db` at `offset`; returns the damaged file."""
    import os

    with open(db, "r+b") as f:
        f.seek(offset)
        f.write(os.urandom(4096))
    return db.read_bytes()


def test_an_emptied_or_lost_database_beside_data_is_refused_and_nothing_deleted(ws):
    _fill(ws)
    ws.close()
    db = ws.root / "workspace.sqlite"
    kept = sorted(p.relative_to(ws.root) for p in ws.root.rglob("*") if p.is_file()
                  and p.parent.name.isdigit())
    db.write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        (ws.root / f"workspace.sqlite{suffix}").unlink(missing_ok=True)
    with pytest.raises(StoreError) as err:
        Workspace.open(ws.root)
    assert str(err.value).startswith(f"{db}: the workspace database is empty (0 bytes")
    assert "1 corpus folder and 1 run folder (corpora/1, runs/1)" in str(err.value)
    assert f"--workspace {ws.root} workspace rebuild" in str(err.value)
    db.unlink()
    with pytest.raises(StoreError, match="database is missing, but the folder holds 1 corpus"):
        Workspace.open(ws.root, allow_nonempty=True)
    assert not db.exists()
    assert sorted(p.relative_to(ws.root) for p in ws.root.rglob("*") if p.is_file()
                  and p.parent.name.isdigit()) == kept


def test_rebuild_indexes_the_folders_and_keeps_the_old_database(ws):
    from core.services.workspace_rebuild import rebuild_workspace

    _fill(ws)
    ws.close()
    db = ws.root / "workspace.sqlite"
    with pytest.raises(StoreError, match="is healthy; .*--force"):
        rebuild_workspace(ws.root)
    db.write_bytes(b"")
    report = rebuild_workspace(ws.root)
    assert [p.name.split(".damaged-")[0] for p in report.moved_to][0] == "workspace.sqlite"
    assert report.moved_to[0].read_bytes() == b""  # moved aside, not deleted
    assert report.corpora == ["1 'toy' (4 pairs)"] and report.skipped == []
    assert report.runs == ["1 'r1' (interrupted, 120 steps)"]
    with Workspace.open(ws.root) as new:
        corpus = new.get_corpus("toy")
        assert (corpus.src_lang, corpus.tgt_lang, corpus.format) == ("es", "en", "tsv")
        assert (corpus.sources, corpus.options) == (["/data/toy.tsv"], {"columns": [0, 1]})
        assert new.load_corpus("toy").pairs == small_corpus().pairs  # escaped text too
        assert new.load_split("toy").assignment == {"train": [0, 1], "dev": [2], "test": [3]}
        assert new.split_sizes("toy") == {"train": 2, "dev": 1, "test": 1}
        run = new.get_run("r1")
        assert (run.id, run.corpus_id, run.steps, run.status) == (1, 1, 120, "interrupted")
        assert run.config["train"]["max_steps"] == 500 and "--resume r1" in run.error
        assert [(c.step, c.kind, c.dev_ppl) for c in new.checkpoints(1)] == [
            (80, "best", 42.5), (100, "best", 40.25), (120, "last", None)]
        assert new.best_dev_ppl() == {1: 40.25}
        assert new.create_run("r2", CONFIG, "toy") == 2  # not the old run's id, nor folder


def test_a_new_corpus_or_run_never_takes_a_folder_the_database_does_not_know(ws):
    """A database restored from an older backup: its next ids are the folders of the
    corpus and run made after it. Both are refused, and the folders stay as they were."""
    import shutil

    ws.add_corpus(small_corpus("first"))
    ws.close()
    backup = ws.root.parent / "backup.sqlite"
    shutil.copy(ws.root / "workspace.sqlite", backup)
    with Workspace.open(ws.root) as later:
        later.add_corpus(small_corpus("second"))
        later.create_run("r1", CONFIG, "second")
    shutil.copy(backup, ws.root / "workspace.sqlite")
    for suffix in ("-wal", "-shm"):
        (ws.root / f"workspace.sqlite{suffix}").unlink(missing_ok=True)
    before = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()
              and p.parent.name.isdigit()}
    with Workspace.open(ws.root) as old:
        assert [c.name for c in old.list_corpora()] == ["first"]
        with pytest.raises(StoreError, match="corpora/2: holds the files of a corpus this "
                           "workspace database does not know .*workspace rebuild"):
            old.add_corpus(small_corpus("third"))
        with pytest.raises(StoreError, match="runs/1: holds the files of a run"):
            old.create_run("r9", CONFIG, "first")
        assert [c.name for c in old.list_corpora()] == ["first"] and old.list_runs() == []
    assert {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()
            and p.parent.name.isdigit()} == before


@pytest.mark.parametrize("offset", [16384, 40960])
def test_a_damaged_database_is_refused_before_anything_is_written(ws, offset):
    _fill(ws)
    ws._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    ws.close()
    db = ws.root / "workspace.sqlite"
    damaged = _corrupt(db, offset)
    with pytest.raises(StoreError) as err:
        Workspace.open(ws.root)
    assert str(err.value).startswith(f"{db}: the workspace database is damaged (")
    assert "nothing was written to it. Restore it from a backup, or re-index" in str(err.value)
    assert db.read_bytes() == damaged and (ws.root / "runs" / "1" / "last.pt").exists()


def test_damage_met_after_opening_refuses_every_later_write(ws):
    _fill(ws)
    ws._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    leaf = ws._conn().execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'")
    page = leaf.fetchone()[0]
    ws.close()
    ws = Workspace.open(ws.root)
    _corrupt(ws.db_path, (page - 1) * 4096)
    result: list[BaseException] = []
    reader = threading.Thread(target=lambda: result.append(_raised(ws.list_runs)))
    reader.start()  # a new thread: a new connection, which reads the damaged page
    reader.join()
    assert isinstance(result[0], StoreError) and "is damaged (" in str(result[0])
    with pytest.raises(StoreError, match="is damaged"):
        ws.add_corpus(small_corpus("after"))
    ws.close()


def _raised(call) -> BaseException | None:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - handed to the test
        return exc
    return None


@pytest.mark.parametrize("sql, call, says", [
    ("UPDATE runs SET config = '{not json'", "list_runs",
     "run 1 'r1': its config field is damaged (not JSON: "),
    ("UPDATE runs SET config = '[1,2]'", "list_runs",
     "run 1 'r1': its config field is damaged ('[1,2]' is not an object)"),
    ("UPDATE runs SET steps = 'many'", "list_runs",
     "run 1 'r1': its steps field is damaged ('many' is not a number)"),
    ("UPDATE corpora SET sources = '{not json'", "list_corpora",
     "corpus 1 'toy': its sources field is damaged (not JSON: "),
    ("UPDATE corpora SET options = '[1]'", "list_corpora",
     "corpus 1 'toy': its options field is damaged ('[1]' is not an object)"),
    ("UPDATE corpus_splits SET sizes = 'x'", "split_sizes",
     "split of corpus 1: its sizes field is damaged (not JSON: "),
])
def test_a_damaged_field_names_its_row(ws, sql, call, says):
    _fill(ws)
    ws._conn().execute(sql)
    args = (1,) if call == "split_sizes" else ()
    with pytest.raises(StoreError) as err:
        getattr(ws, call)(*args)
    assert str(err.value).startswith(f"{ws.db_path}: {says}")
    assert "changed outside the workbench" in str(err.value)
    assert "workspace rebuild" in str(err.value)


def test_a_missing_table_or_a_changed_version_number_is_explained(tmp_path):
    root = tmp_path / "ws"
    Workspace.open(root).close()
    db = root / "workspace.sqlite"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA user_version = 1")
    with pytest.raises(StoreError) as err:
        Workspace.open(root)
    text = str(err.value)
    assert "says schema version 1 (PRAGMA user_version, the number of schema steps " in text
    assert "2 evaluations and translations" in text
    assert "holds tables evaluation_runs, evaluations, translations of version 2" in text
    assert "already exists" not in text and "PRAGMA user_version = 2" in text
    conn.execute("PRAGMA user_version = 2")  # as the message says: then it migrates on
    Workspace.open(root).close()
    conn.execute("DROP TABLE metrics")
    with pytest.raises(StoreError, match="lacks table metrics, which its schema version 3 "
                       "has; .*workspace rebuild"):
        Workspace.open(root)
    conn.close()


def test_a_file_where_a_workspace_folder_belongs_is_named(tmp_path):
    root = tmp_path / "ws"
    Workspace.open(root).close()
    (root / "runs").rmdir()
    (root / "runs").write_text("not a folder")
    with pytest.raises(StoreError, match=r"ws/runs: is a file, but the workspace keeps its "
                       "runs in a folder of that name"):
        Workspace.open(root)
