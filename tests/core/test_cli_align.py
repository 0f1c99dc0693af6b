"""`align`'s user errors: each a one-line message with exit status 2 naming the option or
file at fault and what to do, given before a model is loaded or anything aligned."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import run_cli
from tests.core.conftest import train_tiny_demo_run

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
GOLD = ["--gold-src", str(DEMO / "gold.es"), "--gold-tgt", str(DEMO / "gold.en"),
        "--gold-links", str(DEMO / "gold.links")]


@pytest.fixture(scope="module")
def tiny_ws(tmp_path_factory):
    """A workspace with the demo corpus (es->en) and a tiny run trained for a few steps."""
    return train_tiny_demo_run(tmp_path_factory.mktemp("align") / "ws", steps=3, dev_sample=4)


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if align loads a model, reads attention or runs eflomal."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("the error must come before any expensive work")

    for name in ("attention_systems", "symmetrized_systems", "eflomal_systems"):
        monkeypatch.setattr(f"core.services.alignment_runs.{name}", refuse)
    return refuse


def align(ws, *args: str) -> int:
    return run_cli(["--workspace", str(ws), "align", "--run", "tiny", *args])


def one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""  # no table: nothing was aligned
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    return lines[0]


def test_reverse_run_must_translate_the_other_way(tiny_ws, capsys, monkeypatch, no_work):
    monkeypatch.setattr("core.services.translation.open_session", no_work)
    assert align(tiny_ws, "--reverse-run", "tiny", *GOLD) == 2
    err = one_line_error(capsys)
    assert "--reverse-run 'tiny' translates es->en" in err
    assert "--run 'tiny' translates es->en" in err
    assert "must translate en->es" in err and "--src-lang en --tgt-lang es" in err


def test_baseline_files_must_be_line_parallel(tiny_ws, tmp_path, capsys, no_work):
    src, tgt = tmp_path / "b.es", tmp_path / "b.en"
    src.write_text("Hola .\nAdiós .\nSí .\n", encoding="utf-8")
    tgt.write_text("Hello .\nBye .\n", encoding="utf-8")
    assert align(tiny_ws, *GOLD, "--baseline", "eflomal", "--baseline-src", str(src),
                 "--baseline-tgt", str(tgt)) == 2
    err = one_line_error(capsys)
    assert "not line-parallel" in err
    assert f"{src} has 3 lines, {tgt} has 2" in err and "diverge at line 3" in err


@pytest.mark.parametrize("store", [False, True])
def test_an_empty_gold_set_is_refused(tiny_ws, tmp_path, capsys, monkeypatch, no_work, store):
    from core.evaluate.goldsets import list_gold_sets
    from core.workspace.store import Workspace

    monkeypatch.setattr("core.services.translation.open_session", no_work)
    files = {}
    for side in ("es", "en", "links"):
        files[side] = tmp_path / f"empty.{side}"
        files[side].write_text("", encoding="utf-8")
    args = ["--gold-src", str(files["es"]), "--gold-tgt", str(files["en"]),
            "--gold-links", str(files["links"])]
    assert align(tiny_ws, *args, *(["--gold-set", "empty"] if store else [])) == 2
    err = one_line_error(capsys)
    assert f"{files['es']}: holds no sentences, nor does {files['en']}" in err
    assert "at least one sentence pair" in err
    with Workspace.open(tiny_ws) as ws:
        assert "empty" not in list_gold_sets(ws)


def test_an_unknown_symmetrisation_is_a_usage_error(tiny_ws, capsys, no_work):
    with pytest.raises(SystemExit) as exit_:
        align(tiny_ws, *GOLD, "--baseline", "eflomal", "--symmetrize", "bogus")
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--symmetrize: invalid choice: 'bogus'" in err
    assert "'intersection'" in err and "'grow-diag-final-and'" in err


@pytest.mark.parametrize("value", ["2", "-1", "0", "nan"])
def test_threshold_must_be_a_weight(tiny_ws, capsys, monkeypatch, no_work, value):
    monkeypatch.setattr("core.services.translation.open_session", no_work)
    assert align(tiny_ws, *GOLD, "--method", "threshold", "--threshold", value) == 2
    err = one_line_error(capsys)
    assert f"--threshold {float(value):g}" in err and "above 0 and at most 1" in err


def test_a_threshold_in_range_aligns(tiny_ws, capsys):
    assert align(tiny_ws, *GOLD, "--method", "threshold", "--threshold", "0.5") == 0
    assert "| tiny attention (previous) |" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["file", "under-file", "proc"])
def test_out_dir_is_checked_before_aligning(tiny_ws, tmp_path, capsys, monkeypatch, no_work,
                                            where):
    monkeypatch.setattr("core.services.translation.open_session", no_work)
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    out = {"file": afile, "under-file": afile / "al", "proc": Path("/proc/x")}[where]
    if where == "proc" and not Path("/proc/self").exists():
        pytest.skip("no /proc here")
    assert align(tiny_ws, *GOLD, "--out-dir", str(out)) == 2
    err = one_line_error(capsys)
    assert f"error: {out}: " in err and "--out-dir" in err
    expected = {"file": "is a file, not a folder", "under-file": "cannot be created",
                "proc": "cannot be written"}[where]
    assert expected in err


def test_zero_based_links_read_as_one_based_name_the_option(tiny_ws, capsys, monkeypatch,
                                                             no_work):
    monkeypatch.setattr("core.services.translation.open_session", no_work)
    assert align(tiny_ws, *GOLD, "--one-based") == 2
    err = one_line_error(capsys)
    assert "has index 0 but the file was read as 1-based" in err
    assert "leave out --one-based" in err and "one_based=" not in err
    assert align(tiny_ws, *GOLD, "--format", "talp") == 2
    err = one_line_error(capsys)
    assert "give --format pharaoh instead of --format talp" in err and "one_based=" not in err


def test_one_based_links_read_as_zero_based_name_the_option(tiny_ws, tmp_path, capsys,
                                                             monkeypatch, no_work):
    monkeypatch.setattr("core.services.translation.open_session", no_work)
    lines = (DEMO / "gold.links").read_text(encoding="utf-8").splitlines()
    shifted = tmp_path / "gold1.links"  # the demo links made 1-based
    shifted.write_text("".join(
        " ".join(f"{int(a) + 1}{sep}{int(b) + 1}" for a, sep, b in
                 (link.replace("?", " ? ").replace("-", " - ").split() for link in ln.split()))
        + "\n" for ln in lines), encoding="utf-8")
    assert align(tiny_ws, *GOLD[:4], "--gold-links", str(shifted)) == 2
    err = one_line_error(capsys)
    assert "look 1-based" in err and "give --one-based" in err and "one_based=" not in err


def test_an_existing_gold_set_name_says_how_to_use_it(tiny_ws, tmp_path, capsys, monkeypatch,
                                                      no_work):
    from core.evaluate.goldsets import import_gold_set
    from core.workspace.store import Workspace

    monkeypatch.setattr("core.services.translation.open_session", no_work)
    with Workspace.open(tiny_ws) as ws:
        import_gold_set(ws, "kept", DEMO / "gold.es", DEMO / "gold.en", DEMO / "gold.links")
    assert align(tiny_ws, *GOLD, "--gold-set", "kept") == 2
    err = one_line_error(capsys)
    assert "a gold set named 'kept' already exists" in err
    assert "give --gold-set kept without --gold-src/--gold-tgt/--gold-links" in err
    assert "another --gold-set name" in err and "replace" not in err


@pytest.mark.parametrize("which", ["--gold-src", "--gold-links", "--baseline-src"])
def test_invalid_utf8_says_convert_not_lenient(tiny_ws, tmp_path, capsys, monkeypatch, which):
    from core.data.textio import decode_text
    from core.errors import CorpusError

    bad = tmp_path / "bad.txt"
    good = {"--gold-src": DEMO / "gold.es", "--gold-links": DEMO / "gold.links"}
    if which == "--baseline-src":
        bad.write_bytes(b"Hola .\nAdi\xf3s .\n")
        args = [*GOLD, "--baseline", "eflomal", "--baseline-src", str(bad),
                "--baseline-tgt", str(DEMO / "gold.en")]
    else:
        text = good[which].read_bytes().split(b"\n")
        text[1] = text[1] + (b" \xf3" if which == "--gold-src" else b"\xf3")
        bad.write_bytes(b"\n".join(text))
        args = [a if a != str(good[which]) else str(bad) for a in GOLD]
    assert align(tiny_ws, *args) == 2
    err = capsys.readouterr().err
    assert f"error: {bad}, line 2: invalid UTF-8 byte 0xf3" in err
    assert "convert the file to UTF-8" in err and "lenient" not in err
    # commands that have a lenient mode still offer it
    with pytest.raises(CorpusError, match="read it in lenient mode"):
        decode_text(b"Adi\xf3s", "x.txt")


def test_an_eflomal_baseline_on_too_few_pairs_says_so(tiny_ws, tmp_path, capsys, monkeypatch):
    """eflomal on a handful of pairs is printed with a note naming how many and what to do
    (the demo's corpora hold a few hundred pairs or none, the runs learned from far more)."""
    seen = []

    def fake_eflomal(gold, train_src, train_tgt, heuristic):
        seen.append(len(train_src))
        return {f"eflomal {heuristic}": [a for a in gold.alignments]}

    monkeypatch.setattr("core.services.alignment_runs.eflomal_systems", fake_eflomal)
    src, tgt = tmp_path / "b.es", tmp_path / "b.en"
    src.write_text("Hola .\nAdiós .\nSí .\n", encoding="utf-8")
    tgt.write_text("Hello .\nBye .\nYes .\n", encoding="utf-8")
    assert align(tiny_ws, *GOLD, "--baseline", "eflomal", "--baseline-src", str(src),
                 "--baseline-tgt", str(tgt)) == 0
    err = capsys.readouterr().err
    assert seen == [3]
    assert ("note: eflomal trained on 3 pairs + the gold's: too few for a fair baseline "
            "(under 1,000); align a corpus of the pair with `align --baseline-corpus`") in err
