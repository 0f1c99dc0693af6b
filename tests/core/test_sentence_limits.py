"""Over-long sentences: a line over NMT_WB_MAX_LINE_CHARS is an error
naming file and line; a sentence over NMT_WB_MAX_SENTENCE_TOKENS is cut to its first
tokens, translated, and said so; never a silent empty output."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import run_cli
from core.infer.translate import cut_warnings, translate_documents, translate_sentences
from tests.core.toy_lexicon import DE, EN, SRC_VOCAB, TGT_VOCAB

ROOT = Path(__file__).resolve().parents[2]
TOY_MODELS = ROOT / "tests" / "fixtures" / "toy-models"
SENTENCE = "Der Hund bellt . Die Katze schläft . Der Hund"  # 10 tokens


def test_a_sentence_over_the_token_limit_is_cut_and_said_so(monotone, monkeypatch):
    monkeypatch.setenv("NMT_WB_MAX_SENTENCE_TOKENS", "8")
    out = translate_sentences(monotone, SRC_VOCAB, TGT_VOCAB, DE, EN,
                              ["Die Katze.", SENTENCE], beam=2)
    assert out[0].cut_from == 0 and out[0].text == "the cat."
    assert out[1].cut_from == 10 and len(out[1].source_tokens) == 8
    assert out[1].text == "the dog barks. the cat sleeps."  # the first 8 tokens, translated
    assert out[1].attention.shape == (9, 8)  # 8 words + EOS rows, 8 source columns
    assert cut_warnings(out, "in.txt") == [
        "in.txt, line 2: the sentence has 10 tokens, more than the limit of 8 tokens in one "
        "sentence; only its first 8 tokens were translated: split the sentence, or raise the "
        "limit with the environment variable NMT_WB_MAX_SENTENCE_TOKENS=N"]
    docs = translate_documents(monotone, SRC_VOCAB, TGT_VOCAB, DE, EN, [[SENTENCE]], beam=1)
    assert docs[0][0].cut_from == 10 and docs[0][0].text == "the dog barks. the cat sleeps."


def test_the_default_token_limit_is_200(monotone, monkeypatch):
    monkeypatch.delenv("NMT_WB_MAX_SENTENCE_TOKENS", raising=False)
    long = " ".join(["Der Hund bellt ."] * 60)  # 240 tokens
    out = translate_sentences(monotone, SRC_VOCAB, TGT_VOCAB, DE, EN, [long], beam=1)[0]
    assert out.cut_from == 240 and len(out.source_tokens) == 200 and len(out.target_ids) == 200


@pytest.fixture(scope="module")
def toy_ws(tmp_path_factory):
    from core.services.demo import ensure_demo_workspace

    return ensure_demo_workspace(tmp_path_factory.mktemp("lim") / "demo", models_dir=TOY_MODELS)


def test_translate_cli_refuses_a_line_over_the_limit(toy_ws, tmp_path, capsys):
    inp = tmp_path / "in.txt"
    inp.write_text("Hola.\n" + "palabra " * 3000 + "\n", encoding="utf-8")
    assert run_cli(["--workspace", str(toy_ws), "translate", "--run", "demo-rnnsearch",
                    "--beam", "1", "--input", str(inp)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {inp}, line 2: this line has 24,000 characters, more than "
                          "the limit of 20,000") and "NMT_WB_MAX_LINE_CHARS=N" in err


def test_translate_cli_warns_of_a_cut_sentence(toy_ws, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NMT_WB_MAX_SENTENCE_TOKENS", "3")
    inp = tmp_path / "in.txt"
    inp.write_text("Hola.\nEl perro come la comida .\n", encoding="utf-8")
    assert run_cli(["--workspace", str(toy_ws), "translate", "--run", "demo-rnnsearch",
                    "--beam", "1", "--input", str(inp)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.split("\n")
    assert len(lines) == 3 and lines[0] and lines[1]  # both translated, none empty
    assert f"warning: {inp}, line 2: the sentence has 6 tokens" in captured.err
    assert f"{inp}, line 1" not in captured.err


def test_a_50_mb_line_to_translate_is_refused_in_bounded_memory(toy_ws, tmp_path):
    """The issue's case end to end: `translate` read a 50 MB line for 62 s at 10.7 GB
    and wrote an empty line. A wrapper process reports the peak of its one child."""
    inp = tmp_path / "one-line.txt"
    inp.write_bytes(b"word " * (10 * 1024 * 1024))
    wrapper = ("import resource, subprocess, sys\n"
               "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
               "print(done.returncode, peak, done.stdout == '', done.stderr.strip())\n")
    done = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "main.py", "--workspace", str(toy_ws),
         "translate", "--run", "demo-rnnsearch", "--input", str(inp)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith("NMT_WB_")})
    code, peak, no_output, message = done.stdout.strip().split(" ", 3)
    assert (code, no_output) == ("2", "True")
    assert message == (f"error: {inp}, line 1: this line has 52,428,800 characters, more "
                       "than the limit of 20,000 characters in one line, paragraph or "
                       "segment; break it into shorter lines, or raise the limit with the "
                       "environment variable NMT_WB_MAX_LINE_CHARS=N")
    assert float(peak) < 500, peak
