"""Which TSV column is which language: guessed from the text (core.data.langid) when the
user gives no column order, shown, and doubted aloud. The files are
built from the bundled demo corpus, Spanish and English line by line."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from core.cli import run_cli
from core.data.langid import guess_columns, guess_tsv_columns, model_code, sample_tsv_columns
from core.workspace.store import Workspace

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
SPANISH = (DEMO / "demo.es").read_text(encoding="utf-8").splitlines()
ENGLISH = (DEMO / "demo.en").read_text(encoding="utf-8").splitlines()


def write_tsv(path: Path, left: list[str], right: list[str]) -> Path:
    path.write_text("".join(f"{a}\t{b}\n" for a, b in zip(left, right, strict=True)),
                    encoding="utf-8")
    return path


def gibberish(n: int, seed: int = 0) -> list[str]:
    """`n` lines of random lowercase 'words': no language at all."""
    rng = random.Random(seed)
    word = lambda: "".join(rng.choice("abcdefghijklmnopqrstuvwxyz")  # noqa: E731
                           for _ in range(rng.randint(2, 8)))
    return [" ".join(word() for _ in range(rng.randint(3, 10))) for _ in range(n)]


def import_tsv(tmp_path: Path, path: Path, *extra: str) -> int:
    return run_cli(["--workspace", str(tmp_path / "ws"), "corpus", "import", str(path),
                    "--src-lang", "es", "--tgt-lang", "en", "--name", path.stem, *extra])


def first_pair(tmp_path: Path, name: str) -> tuple[str, str, dict]:
    with Workspace.open(tmp_path / "ws") as ws:
        pair = ws.load_corpus(name).pairs[0]
        return pair.src, pair.tgt, ws.get_corpus(name).options


@pytest.mark.parametrize("order", ["es-en", "en-es"])
def test_either_column_order_is_stored_with_spanish_as_source(tmp_path, capsys, order):
    left, right = (SPANISH, ENGLISH) if order == "es-en" else (ENGLISH, SPANISH)
    path = write_tsv(tmp_path / f"{order}.tsv", left, right)
    assert import_tsv(tmp_path, path) == 0
    out = capsys.readouterr().out
    es_col = 0 if order == "es-en" else 1
    assert (f"columns guessed from the text: column {es_col} is Spanish (es) (source), "
            f"column {1 - es_col} is English (en) (target): 199 of 200 sampled lines "
            "agree") in out
    assert "warning" not in out
    assert first_pair(tmp_path, order) == (
        SPANISH[0], ENGLISH[0], {"src_col": es_col, "tgt_col": 1 - es_col})


def test_gibberish_and_one_language_twice_keep_the_default_with_a_warning(tmp_path, capsys):
    noise = gibberish(300)
    cases = {"noise": (noise, noise[::-1], "both columns look like no language (zxx)"),
             "twice": (ENGLISH[1:], ENGLISH[:-1], "both columns look like English (en)")}
    for name, (left, right, reason) in cases.items():
        path = write_tsv(tmp_path / f"{name}.tsv", left, right)
        assert import_tsv(tmp_path, path) == 0
        out = capsys.readouterr().out
        assert (f"warning: could not tell which column is es and which en ({reason}); "
                "kept column 1 as es and column 0 as en: check the pairs, or set --src-col "
                "and --tgt-col") in out
        assert "columns guessed" not in out
        assert first_pair(tmp_path, name) == (right[0], left[0], {"src_col": 1, "tgt_col": 0})


def test_explicit_columns_against_a_sure_guess_are_kept_with_a_warning(tmp_path, capsys):
    path = write_tsv(tmp_path / "esen.tsv", SPANISH, ENGLISH)
    assert import_tsv(tmp_path, path, "--src-col", "1", "--tgt-col", "0") == 0
    out = capsys.readouterr().out
    assert ("warning: column 1 is read as es (source) and column 0 as en (target), but the "
            "text says the opposite: column 0 looks like es (199 of 200 sampled lines "
            "agree); check the columns") in out
    assert first_pair(tmp_path, "esen")[:2] == (ENGLISH[0], SPANISH[0])  # as the user said
    # columns that agree with the guess, or one given column, print nothing about them
    path = write_tsv(tmp_path / "agree.tsv", SPANISH, ENGLISH)
    assert import_tsv(tmp_path, path, "--src-col", "0", "--tgt-col", "1") == 0
    out = capsys.readouterr().out
    assert "warning" not in out and "guessed" not in out


def test_codes_are_mapped_and_doubtful_languages_are_unsure(tmp_path):
    rows = list(zip(ENGLISH, SPANISH, strict=True))[:200]
    assert [model_code(c) for c in ("spa", "ENG", "en-US", "zh_Hans", "deu")] == [
        "es", "en", "en", "zh", "de"]
    three = guess_columns(rows, "spa", "eng")
    assert (three.sure, three.src_col, three.tgt_col, three.agree, three.lines) == (
        True, 1, 0, 199, 200)
    assert three.column_langs == ("en", "es")
    for src, tgt, reason in (("es", "es", "both languages are es"),
                             ("es", "xx", "the language identifier does not know xx")):
        guess = guess_columns(rows, src, tgt, default=(0, 1))
        assert (guess.sure, guess.src_col, guess.tgt_col, guess.reason) == (
            False, 0, 1, reason)
    few = guess_columns(rows[:4], "es", "en")
    assert (few.sure, few.reason) == (False, "only 4 of 4 sampled lines tell the two "
                                      "languages apart")
    empty = write_tsv(tmp_path / "empty.tsv", [" "] * 3, ["x"] * 3)
    assert guess_tsv_columns(empty, "es", "en").reason == "no line has text in both columns"


def test_the_real_tatoeba_file_is_guessed_english_first(shared):
    path = shared("tatoeba-spa-eng", "spa.txt")
    guess = guess_tsv_columns(path, "es", "en")
    assert (guess.sure, guess.src_col, guess.tgt_col) == (True, 1, 0)
    assert (guess.agree, guess.lines, guess.column_langs) == (196, 200, ("en", "es"))


def test_the_sample_reads_a_bounded_start_of_the_file(tmp_path):
    path = tmp_path / "long.tsv"
    # a first line of 2 MB (nothing past the first 1,000,000 characters is read), then
    # pairs that the sample never reaches
    path.write_text("x" * 2_000_000 + "\ty\n" + "hola\thello\n" * 10, encoding="utf-8")
    assert sample_tsv_columns(path) == []
    path.write_text("un gato\r\na cat\tgato\t#1 (Tom)\n" + "perro\tdog\n" * 300,
                    encoding="utf-8")  # CRLF, an attribution column
    rows = sample_tsv_columns(path)
    assert rows[:2] == [("a cat", "gato"), ("perro", "dog")] and len(rows) == 200
