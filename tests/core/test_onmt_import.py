"""`runs import` of OpenNMT-py 3.x checkpoints (core.services.onmt_import): the imported
run scores, translates and attends as OpenNMT-py 3.5.1 itself does on the same
checkpoints and sentences (tests/fixtures/onmt, made by experiments/onmt_fixtures.sh on
Tatoeba es->en: 200 test sentences per kind: 2 LSTM layers with general attention and
input feeding; a bidirectional encoder with mlp attention and input feeding; dot
attention without input feeding), and what the workbench cannot represent or
must not run is refused with the workspace left as it was."""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from core.errors import CheckpointError, ConfigError
from core.infer.scoring import ForcedScorer
from core.infer.translate import translate_sentences
from core.services.model_import import file_record, import_model, provenance
from core.train.artifacts import load_model
from core.workspace.store import Workspace
from tests.core import onmt_logs
from tests.core.onmt_logs import FIXTURES, KINDS

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-4  # OpenNMT-py prints scores with 4 decimals: its own rounding is within 5e-5


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """kind -> the imported run's LoadedModel; one workspace for all kinds."""
    ws = Workspace.open(tmp_path_factory.mktemp("ws"))
    runs = {kind: import_model(ws, FIXTURES / kind / "model.pt", name=kind) for kind in KINDS}
    yield ws, runs, {kind: load_model(ws.run_dir(r), "last") for kind, r in runs.items()}
    ws.close()


def _scorer(loaded) -> ForcedScorer:
    return ForcedScorer(loaded.model, loaded.src_vocab, loaded.tgt_vocab, loaded.src_pre,
                        loaded.tgt_pre)


@pytest.mark.parametrize("kind", KINDS)
def test_gold_scores_match_onmt_translate(imported, kind):
    """Every sentence's log-probability of its reference equals `onmt_translate -tgt`'s
    GOLD SCORE (the vocabularies' specials moved, the rows permuted: the same numbers)."""
    src, ref = onmt_logs.sentences()
    logged = onmt_logs.beam_log(kind)
    scorer = _scorer(imported[2][kind])
    ours = np.array([r.log_prob for r in scorer.score([scorer.item(s, t)
                                                       for s, t in zip(src, ref, strict=True)])])
    theirs = np.array([line.gold_score for line in logged])
    assert len(ours) == 200
    assert np.abs(ours - theirs).max() <= TOL


@pytest.mark.parametrize("kind", KINDS)
def test_beam5_translations_match_onmt_translate(imported, kind):
    """Beam 5 in OpenNMT-py's style (search.beam_search's onmt_style) gives OpenNMT-py's
    translations; where they differ the two hypotheses score the same to 1e-4 (a tie,
    counted: none on these fixtures), and each translation's score (log-prob / (length
    + 1)) equals its PRED SCORE. (The workbench's own beam, which ranks by log-prob and
    keeps k beams alive, gave OpenNMT-py's translation for 70 of lstm-general-feed's 200.)"""
    src, _ = onmt_logs.sentences()
    logged = onmt_logs.beam_log(kind)
    m = imported[2][kind]
    ours = translate_sentences(m.model, m.src_vocab, m.tgt_vocab, m.src_pre, m.tgt_pre, src,
                               beam=5, max_len_ratio=100.0, max_len_abs=99, onmt_style=True)
    for tr, line in zip(ours, logged, strict=True):
        if " ".join(tr.target_tokens) == line.pred:
            # OpenNMT-py ranks finished hypotheses by log-prob / (length + 1), the length
            # counting EOS (its default -length_penalty avg), and reports that score
            assert abs(tr.score - tr.log_prob / (len(tr.target_ids) + 2)) <= 1e-9
    assert onmt_logs.beam_ties(ours, logged, _scorer(m), TOL) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_translations_and_attention_match_attn_debug(imported, kind):
    """Greedy decoding gives OpenNMT-py's greedy translations, and the attention of each
    (forced, one row per output token and `</s>`) is `-attn_debug`'s to 1e-4."""
    src, _ = onmt_logs.sentences()
    greedy = onmt_logs.lines(kind, "greedy.txt")
    matrices = onmt_logs.attention_log(kind)
    m = imported[2][kind]
    ours = translate_sentences(m.model, m.src_vocab, m.tgt_vocab, m.src_pre, m.tgt_pre, src,
                               beam=1, max_len_ratio=100.0, max_len_abs=99)
    assert [" ".join(t.target_tokens) for t in ours] == greedy
    scorer = _scorer(m)
    forced = scorer.score([scorer.item(s, t) for s, t in zip(src, greedy, strict=True)])
    assert len(matrices) == len(forced) == 200
    for result, theirs, tr in zip(forced, matrices, ours, strict=True):
        assert result.attention.shape == theirs.shape
        assert np.abs(result.attention - theirs).max() <= TOL
        assert np.abs(tr.attention - theirs).max() <= TOL  # the search's own rows


def test_the_run_is_listed_with_its_config_vocabularies_and_provenance(imported):
    ws, runs, models = imported
    run = ws.get_run(runs["lstm-brnn-mlp"])
    assert (run.name, run.family, run.status) == ("lstm-brnn-mlp", "luong", "finished")
    model = models["lstm-brnn-mlp"].config.model
    assert (model.bidirectional, model.score, model.input_feeding, model.layers,
            model.hidden_size, model.emb_size) == (True, "mlp", True, 2, 32, 16)
    std = models["lstm-dot-std"].config.model
    assert (std.bidirectional, std.score, std.input_feeding, std.layers) == \
        (False, "dot", False, 1)
    data = models["lstm-general-feed"].config.data
    assert (data.vocab, data.pretokenized) == ("word", True)
    with torch.serialization.safe_globals([argparse.Namespace]):
        onmt_tgt = torch.load(FIXTURES / "lstm-general-feed" / "model.pt", weights_only=True,
                              map_location="cpu")["vocab"]["tgt"]
    assert onmt_tgt[:4] == ["<unk>", "<blank>", "<s>", "</s>"]
    # OpenNMT-py's order kept, its specials at the workbench's ids
    assert models["lstm-general-feed"].tgt_vocab.itos == ["<pad>", "<unk>", "<s>", "</s>",
                                                          *onmt_tgt[4:]]
    record = provenance(ws, run.id)
    path = FIXTURES / "lstm-brnn-mlp" / "model.pt"
    assert record["kind"] == "opennmt-py" and record["source"] == str(path)
    assert record["files"] == [file_record(path)]


def _altered(tmp_path: Path, name: str, **options) -> Path:
    """The lstm-general-feed fixture with some of its OpenNMT-py options changed."""
    with torch.serialization.safe_globals([argparse.Namespace]):
        raw = torch.load(FIXTURES / "lstm-general-feed" / "model.pt", weights_only=True,
                         map_location="cpu")
    for key, value in options.items():
        setattr(raw["opt"], key, value)
    path = tmp_path / f"{name}.pt"
    torch.save(raw, path)
    return path


@pytest.mark.parametrize("options, named", [
    (dict(rnn_type="GRU"), "rnn_type 'GRU'"),
    (dict(global_attention="none"), "global_attention 'none'"),
    (dict(generator_function="sparsemax"), "generator_function 'sparsemax'"),
    (dict(encoder_type="transformer"), "encoder_type 'transformer' / decoder_type 'rnn'"),
    (dict(bridge=True), "bridge"),
    (dict(copy_attn=True), "copy_attn"),
    (dict(coverage_attn=True), "coverage_attn"),
    (dict(transforms=["sentencepiece"], _all_transform={"sentencepiece"}),
     "transforms ['sentencepiece']"),
    (dict(enc_layers=1), "enc_layers 1 != dec_layers 2"),
])
def test_what_cannot_be_represented_is_refused_naming_the_option(tmp_path, options, named):
    path = _altered(tmp_path, "altered", **options)
    with Workspace.open(tmp_path / "ws") as ws:
        with pytest.raises(ConfigError, match=f"altered.pt: .*{re.escape(named[:20])}") as info:
            import_model(ws, path)
        assert named in str(info.value) and "not imported" in str(info.value)
        assert ws.list_runs() == []


class Payload:
    """A pickled object whose loading would run a command (a crafted checkpoint)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (subprocess.call, (["touch", str(self.marker)],))


def test_a_crafted_pickle_runs_nothing_and_changes_nothing(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "model_step_100.pt"
    torch.save({"model": {}, "generator": {}, "vocab": Payload(marker), "opt": {}}, path)
    with Workspace.open(tmp_path / "ws") as ws:
        with pytest.raises(CheckpointError, match=r"model_step_100.pt: asks to load \S*call, "
                                                  "which an imported file may not"):
            import_model(ws, path)
        assert ws.list_runs() == [] and not marker.exists()


def test_damaged_or_inconsistent_checkpoints_are_refused(tmp_path):
    good = FIXTURES / "lstm-general-feed" / "model.pt"
    cut = tmp_path / "cut.pt"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with Workspace.open(tmp_path / "ws") as ws:
        with pytest.raises(CheckpointError, match="cut.pt: not a readable PyTorch checkpoint"):
            import_model(ws, cut)
        wider = _altered(tmp_path, "wider", enc_hid_size=128, dec_hid_size=128)
        with pytest.raises(CheckpointError, match="wider.pt: a weight for .* is"):
            import_model(ws, wider)
        with torch.serialization.safe_globals([argparse.Namespace]):
            raw = torch.load(good, weights_only=True, map_location="cpu")
        raw["model"]["decoder.extra.weight"] = torch.zeros(2)
        raw["vocab"]["tgt"] = raw["vocab"]["tgt"] + ["."]
        torch.save(raw, tmp_path / "twice.pt")
        with pytest.raises(CheckpointError, match=r"twice.pt: vocab\['tgt'\] repeats a token"):
            import_model(ws, tmp_path / "twice.pt")
        odd = _altered(tmp_path, "odd", transforms=5)
        with pytest.raises(CheckpointError, match="odd.pt: its options are not OpenNMT-py's"):
            import_model(ws, odd)
        del raw["vocab"]["tgt"][-1]
        torch.save(raw, tmp_path / "extra.pt")
        with pytest.raises(CheckpointError, match=r"extra.pt: weights \['decoder.extra.weight'\]"):
            import_model(ws, tmp_path / "extra.pt")
        assert ws.list_runs() == []


def test_cli_runs_import_names_both_kinds_and_imports_a_checkpoint(tmp_path):
    help_text = subprocess.run([sys.executable, "main.py", "runs", "import", "--help"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "Marian / OPUS-MT" in help_text and "OpenNMT-py 3.x checkpoints" in help_text
    path = tmp_path / "model_step_600.pt"
    shutil.copy(FIXTURES / "lstm-general-feed" / "model.pt", path)
    done = subprocess.run([sys.executable, "main.py", "--workspace", str(tmp_path / "ws"),
                           "runs", "import", str(path)], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "as run 1 'model_step_600' (luong)" in done.stdout


def test_translate_evaluate_and_ensembles_on_imported_runs(imported, tmp_path, capsys):
    """`translate` and `evaluate` on an imported run decode as onmt_translate does (the
    session searches in OpenNMT-py's style for OpenNMT-py runs); two imported runs sharing
    vocabularies ensemble, their search score equal to their forced score."""
    from core.cli import run_cli
    from core.infer.session import TranslationSession

    ws, runs, _ = imported
    src, ref = onmt_logs.sentences()
    logged = onmt_logs.beam_log("lstm-general-feed")
    (tmp_path / "src.es").write_text("\n".join(src[:40]) + "\n", encoding="utf-8")
    (tmp_path / "ref.en").write_text("\n".join(ref[:40]) + "\n", encoding="utf-8")
    root = str(ws.root)
    assert run_cli(["--workspace", root, "translate", "--run", "lstm-general-feed",
                    "--checkpoint", "last", "--input", str(tmp_path / "src.es"),
                    "--output", str(tmp_path / "out.en")]) == 0
    out = (tmp_path / "out.en").read_text(encoding="utf-8").splitlines()
    # the output is detokenised on spaces: OpenNMT-py's tokens joined as they are
    assert out == [line.pred for line in logged[:40]]
    capsys.readouterr()
    assert run_cli(["--workspace", root, "evaluate", "--run", "lstm-general-feed",
                    "--checkpoint", "last", "--src", str(tmp_path / "src.es"),
                    "--ref", str(tmp_path / "ref.en")]) == 0
    assert "lstm-general-feed" in capsys.readouterr().out
    from core.services.n_best import n_best_lists

    single = TranslationSession.open(ws, ["lstm-general-feed"], "last")
    best = n_best_lists(single, src[:20], beam=5, n_best=2)
    assert [b[0][0] for b in best] == [line.pred for line in logged[:20]]
    assert all(abs(b[0][1] - line.pred_score) <= TOL for b, line in zip(best, logged, strict=False))
    session = TranslationSession.open(ws, ["lstm-general-feed", "lstm-dot-std"], "last")
    assert session.onmt_style
    scorer = ForcedScorer.for_session(session)
    for tr in session.translate(src[:10], beam=5):
        forced = scorer.score([scorer.item(tr.source, tr.text)])[0]
        assert abs(forced.log_prob - tr.log_prob) <= 1e-4


def test_align_reads_the_imported_attention_at_every_reading_beside_eflomal(imported, tmp_path,
                                                                            capsys):
    """`align` on an imported run: every reading of its attention and the eflomal
    baseline get an AER on the demo's Spanish-English gold set; the 'predict' links are
    the argmax of the forced attention, the attention matched against -attn_debug."""
    from core.cli import run_cli

    ws, runs, models = imported
    demo = ROOT / "resources" / "demo"
    gold = ["--gold-src", str(demo / "gold.es"), "--gold-tgt", str(demo / "gold.en"),
            "--gold-links", str(demo / "gold.links")]
    assert run_cli(["--workspace", str(ws.root), "align", "--run", "lstm-brnn-mlp",
                    "--checkpoint", "last", *gold, "--reading", "all", "--baseline",
                    "eflomal", "--baseline-src", str(demo / "demo.es"), "--baseline-tgt",
                    str(demo / "demo.en"), "--out-dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    rows = [ln.split(" | ")[0][2:] for ln in printed.splitlines() if ln.startswith("| ")]
    assert {"lstm-brnn-mlp attention", "lstm-brnn-mlp attention (shift)",
            "lstm-brnn-mlp attention (sum)", "lstm-brnn-mlp attention (previous)"} <= set(rows)
    assert any(r.startswith("eflomal") for r in rows)
    m = models["lstm-brnn-mlp"]
    scorer = _scorer(m)
    src = (demo / "gold.es").read_text(encoding="utf-8").splitlines()
    tgt = (demo / "gold.en").read_text(encoding="utf-8").splitlines()
    forced = scorer.score([scorer.item(s, t) for s, t in zip(src, tgt, strict=True)])
    expected = [" ".join(f"{int(r.attention[j].argmax())}-{j}"
                         for j in range(r.attention.shape[0] - 1)) for r in forced]
    written = sorted(tmp_path.glob("*.pharaoh"))
    predict = [p for p in written if "attention" in p.name and "shift" not in p.name
               and "sum" not in p.name and "previous" not in p.name]
    assert predict, [p.name for p in written]
    links = predict[0].read_text(encoding="utf-8").splitlines()
    assert [sorted(x.split()) for x in links] == [sorted(x.split()) for x in expected]


def test_an_alignment_head_trains_over_an_imported_run_on_a_named_corpus(tmp_path, capsys):
    """`train --alignment-head RUN --corpus NAME` over an imported run (which has no corpus
    of its own): the head run keeps the imported weights bit for bit, reads the corpus
    with the imported vocabularies, and `align --reading head` reads it."""
    from core.cli import run_cli
    from core.services.demo import import_demo_corpus

    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        corpus = ws.get_corpus(import_demo_corpus(ws)).name
        import_model(ws, FIXTURES / "lstm-general-feed" / "model.pt", name="onmt")
    args = ["--workspace", str(root), "train", "--alignment-head", "onmt", "--max-steps", "12",
            "--threads", "1", "--quiet"]
    assert run_cli(args) != 0
    assert "has no corpus to train the head on (an imported run): name one with --corpus" \
        in capsys.readouterr().err
    assert run_cli([*args, "--corpus", corpus]) == 0
    assert "run onmt-head (id 2): finished after 12 steps" in capsys.readouterr().out
    with Workspace.open(root) as ws:
        base = load_model(ws.run_dir(ws.run_id("onmt")), "last")
        head = load_model(ws.run_dir(ws.run_id("onmt-head")), "best")
        assert head.tgt_vocab.itos == base.tgt_vocab.itos
        weights = head.model.state_dict()
        assert sorted(k for k in weights if k.startswith("align_head.")) == [
            "align_head.key.bias", "align_head.key.weight", "align_head.null",
            "align_head.query.bias", "align_head.query.weight"]
        assert all(torch.equal(weights[k], v) for k, v in base.model.state_dict().items())
    demo = ROOT / "resources" / "demo"
    assert run_cli(["--workspace", str(root), "align", "--run", "onmt-head", "--gold-src",
                    str(demo / "gold.es"), "--gold-tgt", str(demo / "gold.en"), "--gold-links",
                    str(demo / "gold.links"), "--reading", "head"]) == 0
    assert "| onmt-head alignment head" in capsys.readouterr().out


def test_the_languages_given_at_import_let_gold_sets_of_the_pair_score_the_run(tmp_path,
                                                                             capsys):
    """An OpenNMT-py checkpoint names no languages: imported without --src-lang/--tgt-lang
    its run is xx -> xx (said at import) and a stored es -> en gold set refuses it; with
    them the same gold set scores it; half of the pair or a bad code is refused."""
    from core.cli import run_cli
    from core.services.alignment_runs import run_languages

    demo = ROOT / "resources" / "demo"
    model = FIXTURES / "lstm-general-feed" / "model.pt"
    base = ["--workspace", str(tmp_path / "ws")]
    assert run_cli([*base, "runs", "import", str(model), "--name", "plain"]) == 0
    assert "xx -> xx" in capsys.readouterr().out
    assert run_cli([*base, "runs", "import", str(model), "--name", "es-en", "--src-lang",
                    "es", "--tgt-lang", "en"]) == 0
    assert "es -> en" in capsys.readouterr().out
    ws = Workspace.open(tmp_path / "ws")
    assert [run_languages(ws, r) for r in ws.list_runs()] == [("xx", "xx"), ("es", "en")]
    ws.close()
    gold = ["--gold-src", str(demo / "gold.es"), "--gold-tgt", str(demo / "gold.en"),
            "--gold-links", str(demo / "gold.links")]
    assert run_cli([*base, "align", "--run", "es-en", "--gold-set", "g", *gold,
                    "--baseline", "none", "--out-dir", str(tmp_path)]) == 0
    assert "| es-en attention" in capsys.readouterr().out
    assert run_cli([*base, "align", "--run", "es-en", "--gold-set", "g", "--baseline",
                    "none", "--out-dir", str(tmp_path)]) == 0
    assert run_cli([*base, "align", "--run", "plain", "--gold-set", "g", "--baseline",
                    "none", "--out-dir", str(tmp_path)]) != 0
    assert "xx -> xx run; gold set g is es -> en" in capsys.readouterr().err
    assert run_cli([*base, "runs", "import", str(model), "--src-lang", "es"]) != 0
    assert run_cli([*base, "runs", "import", str(model), "--src-lang", "e s",
                    "--tgt-lang", "en"]) != 0
    assert "--src-lang 'e s'" in capsys.readouterr().err


def test_documents_exports_and_contrastive_sets_on_an_imported_run(imported, tmp_path,
                                                                    capsys):
    """An imported OpenNMT-py run translates a document paragraph by paragraph (its blank
    lines kept), refuses --target-context (it has no context) in one line, writes every
    record format (TMX, XLIFF, JSON lines) that reads back to its plain translations, and
    scores a contrastive set: the reference preferred to its words reversed."""
    from core.cli import run_cli
    from core.formats.tmx_records import read_tmx
    from core.formats.xliff import read_xliff

    ws, _, _ = imported
    import_model(ws, FIXTURES / "lstm-general-feed" / "model.pt", name="feed-es-en",
                 languages=("es", "en"))
    root, run = str(ws.root), ["--run", "feed-es-en", "--checkpoint", "last"]
    src, ref = onmt_logs.sentences()
    plain = tmp_path / "src.es"
    plain.write_text("\n".join(src[:6]) + "\n", encoding="utf-8")
    assert run_cli(["--workspace", root, "translate", *run, "--input", str(plain),
                    "--output", str(tmp_path / "out.en")]) == 0
    lines = (tmp_path / "out.en").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and all(lines)
    # a document of two paragraphs and a blank line: the same sentences, the same layout
    doc = tmp_path / "doc.txt"
    doc.write_text(f"{src[0]} {src[1]}\n\n{src[2]}\n", encoding="utf-8")
    assert run_cli(["--workspace", root, "translate", *run, "--document", "--input",
                    str(doc), "--output", str(tmp_path / "doc_en.txt")]) == 0
    assert (tmp_path / "doc_en.txt").read_text(encoding="utf-8") == \
        f"{lines[0]} {lines[1]}\n\n{lines[2]}\n"
    capsys.readouterr()
    assert run_cli(["--workspace", root, "translate", *run, "--document", "--input",
                    str(doc), "--target-context"]) == 2
    assert "context" in capsys.readouterr().err
    for suffix, read in ((".tmx", read_tmx), (".xlf", read_xliff)):
        out = tmp_path / f"out{suffix}"
        assert run_cli(["--workspace", root, "translate", *run, "--input", str(plain),
                        "--output", str(out)]) == 0
        assert [r.translation for r in read(out)] == lines
    out = tmp_path / "out.jsonl"
    assert run_cli(["--workspace", root, "translate", *run, "--input", str(plain),
                    "--output", str(out)]) == 0
    records = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["translation"] for r in records] == lines
    # contrastive: each reference against its words in reverse order
    # (each block's previous sentence is the one before it in the test set)
    blocks = [(src[i - 1], src[i], ref[i - 1], ref[i]) for i in range(1, len(src))
              if len(ref[i].split()) >= 5][:10]
    contrastive = {str(n): {"src": [ps, s], "trg": [{"correct": [pr, r], "incorrect": [
        pr, " ".join(reversed(r.split()))]}]} for n, (ps, s, pr, r) in enumerate(blocks, 1)}
    path = tmp_path / "reversed.json"
    path.write_text(json.dumps(contrastive, ensure_ascii=False), encoding="utf-8")
    capsys.readouterr()
    assert run_cli(["--workspace", root, "evaluate", *run, "--contrastive", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "| feed-es-en | 10 | 10 | 0 | 100.00 |" in printed, printed
