"""`corpus` CLI: import, list, stats, split, show, and its error messages."""
from __future__ import annotations

import sys

import pytest

from core.cli import run_cli
from core.workspace.paths import default_workspace_dir
from core.workspace.store import Workspace

# English<TAB>Spanish like the Anki/Tatoeba files: Spanish (es) is column 1.
TSV = "Go.\tVe.\nI see it now.\tAhora lo veo.\nHello, world!\t¡Hola, mundo!\nGo.\tVe.\n"


@pytest.fixture
def tsv(tmp_path):
    path = tmp_path / "small.tsv"
    path.write_text(TSV, encoding="utf-8")
    return path


def cli(ws, *argv: str) -> int:
    return run_cli(["--workspace", str(ws), *argv])


def table_row(text: str, label: str) -> list[str]:
    """The cells after `label` on the line of the stats table that starts with it."""
    for line in text.splitlines():
        if line.startswith(label + " "):
            return line[len(label):].split()
    raise AssertionError(f"no {label!r} row in:\n{text}")


def test_import_then_stats_counts(tmp_path, tsv, capsys):
    ws = tmp_path / "ws"
    assert cli(ws, "corpus", "import", str(tsv), "--format", "tsv", "--src-lang", "es",
               "--tgt-lang", "en", "--name", "small") == 0
    out = capsys.readouterr().out
    assert "corpus 1 'small': 4 pairs (es -> en), 0 documents" in out

    with Workspace.open(ws) as store:
        corpus = store.load_corpus("small")
    assert [(p.src, p.tgt, p.line) for p in corpus.pairs] == [
        ("Ve.", "Go.", 1), ("Ahora lo veo.", "I see it now.", 2),
        ("¡Hola, mundo!", "Hello, world!", 3), ("Ve.", "Go.", 4)]

    assert cli(ws, "corpus", "stats", "small") == 0
    out = capsys.readouterr().out
    # es: Ve. | Ahora lo veo. | ¡Hola, mundo! | Ve.  -> 7 tokens, 6 types
    # en: Go. | I see it now. | Hello, world! | Go.  -> 8 tokens, 7 types
    assert "pairs: 4" in out
    assert table_row(out, "tokens") == ["7", "8"]
    assert table_row(out, "types") == ["6", "7"]
    assert table_row(out, "max length") == ["3", "4"]

    assert cli(ws, "corpus", "list") == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows[1][:5] == ["1", "small", "es-en", "4", "0"]


def test_format_is_guessed_and_columns_can_be_swapped(tmp_path, tsv, capsys):
    ws = tmp_path / "ws"
    assert cli(ws, "corpus", "import", str(tsv), "--src-lang", "en", "--tgt-lang", "es",
               "--src-col", "0", "--tgt-col", "1") == 0
    assert "corpus 1 'small': 4 pairs (en -> es)" in capsys.readouterr().out
    with Workspace.open(ws) as store:
        first = store.load_corpus("small").pairs[0]
        assert (first.src, first.tgt) == ("Go.", "Ve.")
        assert store.get_corpus(1).options == {"src_col": 0, "tgt_col": 1}


def test_bad_file_reports_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("Go.\tVe.\nHi.\tHola.\nno tab on this line\n", encoding="utf-8")
    ws = tmp_path / "ws"
    assert cli(ws, "corpus", "import", str(bad), "--format", "tsv", "--src-lang", "es",
               "--tgt-lang", "en") == 2
    err = capsys.readouterr().err
    assert f"{bad}, line 3" in err
    with Workspace.open(ws) as store:
        assert store.list_corpora() == []  # nothing half-imported


def test_user_mistakes_exit_2_with_a_hint(tmp_path, tsv, capsys):
    ws = tmp_path / "ws"
    args = ["corpus", "import", str(tsv), "--src-lang", "es", "--tgt-lang", "en"]
    assert cli(ws, *args, "--docids", str(tsv)) == 2
    assert "--docids applies to --format parallel" in capsys.readouterr().err
    assert cli(ws, *args) == 0
    assert cli(ws, *args) == 2  # the name 'small' is taken
    assert "choose another name, e.g. 'small-2'" in capsys.readouterr().err
    assert cli(ws, "corpus", "stats", "nope") == 2
    assert "no corpus named 'nope' (known: small)" in capsys.readouterr().err
    assert cli(ws, "corpus", "show", "small", "--split", "dev") == 2
    assert "run `corpus split small` first" in capsys.readouterr().err


def _ten_pairs_split(tmp_path):
    """A workspace (its path) with corpus 'ten' of 10 TSV pairs, split 0.6/0.2/0.2, seed 5."""
    src = tmp_path / "ten.tsv"
    src.write_text("".join(f"en {i}\tes {i}\n" for i in range(10)), encoding="utf-8")
    ws = tmp_path / "ws"
    assert cli(ws, "corpus", "import", str(src), "--src-lang", "es", "--tgt-lang", "en",
               "--name", "ten") == 0
    assert cli(ws, "corpus", "split", "ten", "--seed", "5", "--ratios", "0.6,0.2,0.2") == 0
    return ws


def test_split_is_stored_and_show_prints_its_pairs(tmp_path, capsys):
    ws = _ten_pairs_split(tmp_path)
    out = capsys.readouterr().out
    assert table_row(out, "  train")[0] == "6" and table_row(out, "  dev")[0] == "2"
    with Workspace.open(ws) as store:
        split = store.load_split("ten")
    assert split.seed == 5 and split.ratios == [0.6, 0.2, 0.2]
    parts = split.assignment
    assert sorted(parts["train"] + parts["dev"] + parts["test"]) == list(range(10))
    assert len(parts["dev"]) == len(parts["test"]) == 2

    assert cli(ws, "corpus", "show", "ten", "--split", "dev") == 0
    out = capsys.readouterr().out
    shown = [line.split(": ")[1] for line in out.splitlines() if line.startswith("  es: ")]
    assert shown == [f"es {i}" for i in parts["dev"]]
    for i in parts["dev"]:  # line numbers are the file's (1-based)
        assert f"[{i}] line {i + 1}" in out

    assert cli(ws, "corpus", "split", "ten", "--seed", "5", "--ratios", "0.6,0.2,0.2") == 0
    with Workspace.open(ws) as store:
        assert store.load_split("ten").assignment == parts  # same seed, same split
    assert cli(ws, "corpus", "split", "ten", "--ratios", "0.6,0.2") == 2
    assert "three fractions" in capsys.readouterr().err
    for seed in ("99999999999999999999", "-1"):  # no OverflowError traceback
        assert cli(ws, "corpus", "split", "ten", "--seed", seed) == 2
        assert (f"error: --seed must be a whole number from 0 to 4294967295 (as train.seed), "
                f"not {seed}\n") == capsys.readouterr().err
    with Workspace.open(ws) as store:
        assert store.load_split("ten").assignment == parts


def test_parallel_import_with_documents_and_show_window(tmp_path, capsys):
    (tmp_path / "a.fr").write_text("un\ndeux\ntrois\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "a.docids").write_text("s1\t0\ns1\t1\ns2\t0\n", encoding="utf-8")
    ws = tmp_path / "ws"
    assert cli(ws, "corpus", "import", str(tmp_path / "a.fr"), str(tmp_path / "a.en"),
               "--format", "parallel", "--docids", str(tmp_path / "a.docids"),
               "--src-lang", "fr", "--tgt-lang", "en", "--name", "hansards") == 0
    assert "3 pairs (fr -> en), 2 documents" in capsys.readouterr().out
    with Workspace.open(ws) as store:
        assert [p.doc_id for p in store.load_corpus("hansards").pairs] == ["s1", "s1", "s2"]
    assert cli(ws, "corpus", "show", "1", "--start", "1", "--count", "5") == 0
    out = capsys.readouterr().out
    assert "pairs 1..2 of 3" in out
    assert "[1] line 2, document s1\n  fr: deux\n  en: two" in out
    assert "[2] line 3, document s2\n  fr: trois\n  en: three" in out
    assert "un" not in out.split("\n", 1)[1]
    assert cli(ws, "corpus", "show", "hansards", "--start", "3") == 0
    assert "no pairs from 3 (it has 3)" in capsys.readouterr().out


def test_default_workspace_is_per_user(monkeypatch, tmp_path):
    if not sys.platform.startswith("linux"):
        pytest.skip("XDG_DATA_HOME decides the folder on Linux only")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_workspace_dir() == tmp_path / "xdg" / "nmt-workbench" / "workspace"


def test_real_tatoeba_import(tmp_path, shared, capsys):
    path = shared("tatoeba-spa-eng", "spa.txt")
    lines = path.read_text(encoding="utf-8").splitlines()
    ws = tmp_path / "ws"
    assert cli(ws, "corpus", "import", str(path), "--format", "tsv", "--src-lang", "es",
               "--tgt-lang", "en", "--name", "tatoeba") == 0
    assert f"{len(lines)} pairs" in capsys.readouterr().out
    with Workspace.open(ws) as store:
        assert store.get_corpus("tatoeba").n_pairs == len(lines) == 118964
        corpus = store.load_corpus("tatoeba")
    for k in (0, 5000, len(lines) - 1):
        english, spanish = lines[k].split("\t")[:2]
        assert (corpus.pairs[k].src, corpus.pairs[k].tgt, corpus.pairs[k].line) == (
            spanish, english, k + 1)


def test_a_corpus_that_runs_use_keeps_its_split(tmp_path, capsys):
    ws = _ten_pairs_split(tmp_path)
    with Workspace.open(ws) as store:
        parts = store.load_split("ten").assignment
        store.update_run(store.create_run("d1", {}, "ten"), steps=5)  # trained on it
    capsys.readouterr()
    assert cli(ws, "corpus", "split", "ten", "--seed", "7", "--ratios", "0.6,0.2,0.2") == 2
    err = capsys.readouterr().err
    assert "corpus 'ten' is used by runs d1" in err and "new name (e.g. 'ten-2')" in err
    assert err.count("\n") == 1
    with Workspace.open(ws) as store:
        assert store.load_split("ten").assignment == parts  # unchanged
    # the same split again changes nothing and is allowed
    assert cli(ws, "corpus", "split", "ten", "--seed", "5", "--ratios", "0.6,0.2,0.2") == 0


def test_a_run_that_never_trained_leaves_the_split_free(tmp_path):
    ws = _ten_pairs_split(tmp_path)
    with Workspace.open(ws) as store:
        store.create_run("queued", {}, "ten")  # created, 0 steps: it reads the split later
        before = store.load_split("ten").assignment
    assert cli(ws, "corpus", "split", "ten", "--seed", "7", "--ratios", "0.6,0.2,0.2") == 0
    with Workspace.open(ws) as store:
        assert store.load_split("ten").seed == 7 and store.load_split("ten").assignment != before


def test_a_damaged_split_under_trained_runs_is_repaired_by_its_own_seed(tmp_path, capsys):
    ws = _ten_pairs_split(tmp_path)
    with Workspace.open(ws) as store:
        store.update_run(store.create_run("d1", {}, "ten"), steps=5)
        parts = store.load_split("ten").assignment
        split_file = store.get_corpus("ten").path / "split.json"
    split_file.write_text("{garbage", encoding="utf-8")
    capsys.readouterr()
    # another seed is still refused; the recorded seed and ratios remake the same split
    assert cli(ws, "corpus", "split", "ten", "--seed", "7", "--ratios", "0.6,0.2,0.2") == 2
    assert "is used by runs d1" in capsys.readouterr().err
    assert cli(ws, "corpus", "split", "ten", "--seed", "5", "--ratios", "0.6,0.2,0.2") == 0
    with Workspace.open(ws) as store:
        assert store.load_split("ten").assignment == parts


@pytest.mark.parametrize("command", [["corpus", "list"], ["demo", "--quick"]])
def test_a_workspace_that_cannot_be_created_is_one_clear_error(tmp_path, capsys, command):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    ws = blocker / "ws"  # under a file: no folder can be made there (as under /proc)
    argv = ([*command, "--workspace", str(ws)] if command[0] == "demo"
            else ["--workspace", str(ws), *command])
    assert run_cli(argv) == 2
    err = capsys.readouterr().err
    assert f"error: {ws}: cannot create the workspace folder" in err
    assert "choose a folder you can write to" in err and err.count("error:") == 1
    assert blocker.read_text(encoding="utf-8") == "not a folder\n"


def test_a_closed_stdout_ends_quietly_as_unix_tools_do(tmp_path):
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    src = tmp_path / "big.tsv"  # ~1 MB to show: far more than a pipe holds
    src.write_text("".join(f"en {i} {'x' * 80}\tes {i} {'y' * 80}\n" for i in range(5000)),
                   encoding="utf-8")
    ws = tmp_path / "ws"
    assert cli(ws, "corpus", "import", str(src), "--src-lang", "es", "--tgt-lang", "en",
               "--name", "big") == 0
    proc = subprocess.Popen([sys.executable, str(root / "main.py"), "--workspace", str(ws),
                             "corpus", "show", "big", "--count", "5000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root)
    assert proc.stdout.readline().startswith(b"corpus 'big': pairs 0..4999 of 5000")
    proc.stdout.close()  # like `| head -1`
    assert proc.wait(timeout=120) == 141  # 128 + SIGPIPE
    assert proc.stderr.read() == b""  # no BrokenPipeError traceback
    proc.stderr.close()


def test_empty_language_codes_and_xliff_files_are_refused(tmp_path, tsv, capsys):
    ws = tmp_path / "ws"
    for flag in ("--src-lang", "--tgt-lang"):
        langs = {"--src-lang": "es", "--tgt-lang": "en", flag: ""}
        assert cli(ws, "corpus", "import", str(tsv), *[x for kv in langs.items() for x in kv]) == 2
        assert capsys.readouterr().err == (f"error: {flag} '': give a language code without "
                                           f"spaces, e.g. {'es' if flag == '--src-lang' else 'en'}\n")
    xlf = tmp_path / "out.xlf"
    xlf.write_text('<?xml version="1.0"?><xliff version="1.2"></xliff>\n', encoding="utf-8")
    assert cli(ws, "corpus", "import", str(xlf), "--src-lang", "es", "--tgt-lang", "en") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {xlf}: XLIFF is not a corpus import format; import tsv")
    assert "tmx (one *.tmx file)" in err and "tab-separated columns)" in err
    with Workspace.open(ws) as store:
        assert store.list_corpora() == []
