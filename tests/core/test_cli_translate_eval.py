"""The translate / evaluate / align glue: attention AER on a hand-built model whose
forced attention is known, teacher-forced perplexity, and the CLI commands end to end
on a tiny run trained in the test."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from torch import Tensor, nn

from core.cli import run_cli
from core.config import RunConfig
from core.data.corpus import SentencePair
from core.data.preprocess import Preprocessor
from core.data.vocab import Vocab
from core.evaluate.alignment import Alignment
from core.evaluate.attention_aer import aer_table, attention_alignments
from core.evaluate.goldsets import GoldSet
from core.infer.session import TranslationSession
from core.models.base import Seq2Seq, Seq2SeqOutput
from core.services.eval_scores import forced_perplexity, parse_buckets, score_systems
from core.train.artifacts import LoadedModel
from tests.core.conftest import train_tiny_demo_run

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


class DiagonalModel(Seq2Seq):
    """Uniform next-token distribution; target position t attends 0.6 to source
    position min(t, S-1) and spreads 0.4 evenly over the other source positions."""

    family = "luong"

    def __init__(self, vocab: int):
        super().__init__()
        self.vocab = vocab
        self.dummy = nn.Parameter(torch.zeros(1))

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor, **extra) -> Seq2SeqOutput:
        batch, width, steps = src.size(0), src.size(1), tgt_in.size(1)
        attn = torch.zeros(batch, steps, width)  # batch x T x S
        for b in range(batch):
            s = int(src_lens[b])
            for t in range(steps):
                if s == 1:
                    attn[b, t, 0] = 1.0
                    continue
                attn[b, t, :s] = 0.4 / (s - 1)
                attn[b, t, min(t, s - 1)] = 0.6
        log_probs = torch.full((batch, steps, self.vocab), -math.log(self.vocab))
        return Seq2SeqOutput(log_probs + 0 * self.dummy, attn)


def diagonal_session(words: list[str]) -> TranslationSession:
    vocab = Vocab(["<pad>", "<unk>", "<s>", "</s>", *words])
    loaded = LoadedModel(DiagonalModel(len(vocab)), RunConfig(), vocab, vocab,
                         Preprocessor("es"), Preprocessor("en"), Path("none.pt"), 0)
    return TranslationSession.from_loaded([loaded], ["diag"])


def hand_gold() -> GoldSet:
    # '¿Dónde' and '¿b' are ONE gold token each (Moses would split them into two): the
    # glue must not re-tokenise, or sentence 2 gets 3 source positions and other links
    src = [["¿Dónde", "b", "c"], ["a", "¿b"]]
    tgt = [["x", "y"], ["x", "y", "z"]]
    golds = [Alignment({(0, 0)}, {(1, 1), (2, 1)}), Alignment({(0, 0), (0, 2)}, {(1, 1)})]
    return GoldSet("hand", src, tgt, golds, "es", "en")


def test_attention_aer_equals_hand_computed_value():
    session = diagonal_session(["a", "b", "c", "x", "y"])  # 'z', '¿Dónde', '¿b': <unk>
    gold = hand_gold()
    preds = attention_alignments(session, gold, method="argmax")
    # target t -> source min(t, S-1); the EOS row is not a word
    assert [p.sure for p in preds] == [{(0, 0), (1, 1)}, {(0, 0), (1, 1), (1, 2)}]
    # |A| = 5, |S| = 3, |A n S| = 1 + 1, |A n P| = 2 + 2  ->  AER = 1 - 6/8
    row = aer_table({"attn": preds}, gold).rows[0]
    assert row[1] == pytest.approx(25.0)
    assert row[2] == pytest.approx(80.0)          # precision 4/5
    assert row[3] == pytest.approx(200 / 3, abs=0.01)  # recall 2/3
    # threshold 0.3: sentence 1 keeps the 0.6 cells only; sentence 2 (S = 2) has
    # 0.6/0.4 rows, so every cell is linked: |A| = 2 + 6, |A n S| = 1 + 2,
    # |A n P| = 2 + 3  ->  AER = 1 - 8/11
    thr = attention_alignments(session, gold, method="threshold", threshold=0.3)
    assert len(thr[1].links) == 6
    assert aer_table({"t": thr}, gold).rows[0][1] == pytest.approx(100 * 3 / 11, abs=0.01)


def test_forced_perplexity_of_a_uniform_model_is_the_vocabulary_size():
    session = diagonal_session(["hola", "mundo", "hello", "world", "."])
    pairs = [SentencePair("hola mundo", "hello world ."), SentencePair("hola", "hello")]
    assert forced_perplexity(session, pairs) == pytest.approx(9.0, rel=1e-5)


def test_score_systems_with_perfect_hypotheses_scores_100_per_bucket():
    session = diagonal_session(["a"])
    pairs = [SentencePair("uno dos tres", "one two three four"),
             SentencePair(" ".join(["palabra"] * 7), "seven words are here in this line"),
             SentencePair("solo", "only this one here")]
    buckets = parse_buckets("2,5")
    assert buckets == [(0, 2), (2, 5), (5, None)]
    systems, _ = score_systems({"ref": session}, {"ref": [1]}, pairs, "es", "en", beam=1,
                               buckets=buckets, hyps_given={"ref": [p.tgt for p in pairs]})
    m = systems[0].metrics
    assert m["bleu"] == pytest.approx(100.0) and m["ter"] == pytest.approx(0.0)
    assert m["bucket_sizes"] == {"0-1": 1, "2-4": 1, "5+": 1}
    assert m["bleu_by_length"] == {"0-1": 100.0, "2-4": 100.0, "5+": 100.0}


# ------------------------------------------------------------------ CLI end to end


@pytest.fixture(scope="module")
def tiny_ws(tmp_path_factory):
    """A workspace with the demo corpus and a tiny run trained for a few steps."""
    return train_tiny_demo_run(tmp_path_factory.mktemp("cli") / "ws", steps=3, dev_sample=4)


def test_translate_cli_text_and_json(tiny_ws, tmp_path, capsys):
    inp = tmp_path / "in.txt"
    inp.write_text("¿Dónde está la estación?\n\nHola.\n", encoding="utf-8")
    assert run_cli(["--workspace", str(tiny_ws), "translate", "--run", "tiny", "--beam", "1",
                    "--input", str(inp)]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert len(lines) == 4 and lines[-1] == ""  # three lines, each ended by a newline
    assert lines[1] == ""  # the empty input line stays an empty output line
    assert run_cli(["--workspace", str(tiny_ws), "translate", "--run", "tiny", "--beam", "2",
                    "--json", "--input", str(inp)]) == 0
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(records) == 3
    first = records[0]
    assert first["source_tokens"] == ["¿", "Dónde", "está", "la", "estación", "?"]
    att = first["attention"]
    assert len(att) == len(first["target_tokens"]) >= 1
    assert all(len(row) == 6 for row in att)
    assert all(sum(row) == pytest.approx(1.0, abs=1e-4) for row in att)
    assert records[1]["target_tokens"] == [] and records[1]["translation"] == ""


def test_translate_cli_output_file_is_recorded(tiny_ws, tmp_path):
    from core.formats.export import read_translations
    from core.workspace.store import Workspace

    inp = tmp_path / "in.txt"
    inp.write_text("Hola.\nAdiós.\n", encoding="utf-8")
    out = tmp_path / "out.tmx"
    assert run_cli(["--workspace", str(tiny_ws), "translate", "--run", "tiny", "--beam", "1",
                    "--input", str(inp), "--output", str(out)]) == 0
    assert [r.source for r in read_translations(out)] == ["Hola.", "Adiós."]
    with Workspace.open(tiny_ws) as ws:
        assert any(t.path == out.resolve() for t in ws.translations())


def test_evaluate_cli_stores_bleu_by_length(tiny_ws, tmp_path, capsys):
    from core.workspace.store import Workspace

    report = tmp_path / "report.json"
    assert run_cli(["--workspace", str(tiny_ws), "evaluate", "--run", "tiny", "--test", "test",
                    "--beam", "1", "--buckets", "10,20", "--report", str(report)]) == 0
    with Workspace.open(tiny_ws) as ws:
        evals = ws.evaluations(ws.run_id("tiny"))
        n_test = len(ws.load_split("demo").assignment["test"])
    assert len(evals) == 1 and evals[0].test_name == "demo:test"
    m = evals[0].metrics
    assert list(m["bleu_by_length"]) == ["0-9", "10-19", "20+"]
    assert sum(m["bucket_sizes"].values()) == n_test == m["sentences"]
    for label, value in m["bleu_by_length"].items():
        assert (value is None) == (m["bucket_sizes"][label] == 0)
        assert value is None or 0.0 <= value <= 100.0
    assert m["perplexity"] > 1.0 and 0.0 <= m["bleu"] <= 100.0
    assert json.loads(report.read_text())["rows"][0]["system"] == "tiny"
    assert "BLEU by source length" in capsys.readouterr().out


def test_evaluate_cli_max_sentences_scores_a_prefix(tiny_ws):
    from core.workspace.store import Workspace

    assert run_cli(["--workspace", str(tiny_ws), "evaluate", "--run", "tiny", "--test", "test",
                    "--beam", "1", "--max-sentences", "7"]) == 0
    with Workspace.open(tiny_ws) as ws:
        latest = ws.evaluations(ws.run_id("tiny"))[-1]
    assert latest.test_name == "demo:test[:7]" and latest.metrics["sentences"] == 7


def test_align_cli_imports_gold_and_writes_one_link_per_target_word(tiny_ws, tmp_path, capsys):
    from core.evaluate.goldsets import list_gold_sets
    from core.workspace.store import Workspace

    out = tmp_path / "al"
    assert run_cli(["--workspace", str(tiny_ws), "align", "--run", "tiny",
                    "--gold-src", str(DEMO / "gold.es"), "--gold-tgt", str(DEMO / "gold.en"),
                    "--gold-links", str(DEMO / "gold.links"), "--gold-set", "g",
                    "--out-dir", str(out)]) == 0
    # a Luong run's default reading is one step earlier (experiments/RESULTS.md D)
    assert "| tiny attention (previous) |" in capsys.readouterr().out
    with Workspace.open(tiny_ws) as ws:
        assert list_gold_sets(ws) == ["g"]
    lines = (out / "tiny_attention_previous.pharaoh").read_text(encoding="utf-8").splitlines()
    en = (DEMO / "gold.en").read_text(encoding="utf-8").splitlines()
    es = (DEMO / "gold.es").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 56
    for line, e, s in zip(lines, en, es, strict=True):
        links = [tuple(map(int, x.split("-"))) for x in line.split()]
        assert sorted(t for _, t in links) == list(range(len(e.split())))  # argmax: one each
        assert all(0 <= i < len(s.split()) for i, _ in links)


def test_translate_cli_document_keeps_paragraphs(tiny_ws, tmp_path, capsys):
    doc = tmp_path / "carta.txt"
    doc.write_text("Hola. Compré una mesa.\n\nEs muy bonita.\n", encoding="utf-8")
    assert run_cli(["--workspace", str(tiny_ws), "translate", "--run", "tiny", "--beam", "1",
                    "--document", "--input", str(doc), "--json"]) == 0
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["source"] for r in records] == ["Hola.", "Compré una mesa.", "Es muy bonita."]


def test_evaluate_cli_contrastive_matches_forced_scores(tiny_ws, tmp_path, capsys):
    from core.infer.session import TranslationSession
    from core.workspace.store import Workspace

    examples = [{"src": "Compré una mesa.", "dst": "I bought a table.",
                 "contrastive": "I bought a tables.", "phenomenon": "it"},
                {"src": "Es muy bonita.", "dst": "It is very pretty.",
                 "contrastive": "She is very pretty.", "phenomenon": "it"},
                {"src": "Mi hermana llamó.", "dst": "My sister called.",
                 "contrastive": "My sister calls.", "phenomenon": "she"}]
    path = tmp_path / "set.json"
    path.write_text(json.dumps(examples), encoding="utf-8")
    assert run_cli(["--workspace", str(tiny_ws), "evaluate", "--run", "tiny",
                    "--contrastive", str(path)]) == 0
    with Workspace.open(tiny_ws) as ws:
        m = [e for e in ws.evaluations() if e.test_name == "contrastive:set.json"][0].metrics
        session = TranslationSession.open(ws, ["tiny"])
    right = [session.force(e["src"], e["dst"]).log_prob
             > session.force(e["src"], e["contrastive"]).log_prob for e in examples]
    assert m["examples"] == 3
    assert m["contrastive_accuracy"] == pytest.approx(100 * sum(right) / 3)
    assert m["by_pronoun"]["she"] == pytest.approx(100.0 * right[2])


def test_evaluate_cli_doc_level_scores_the_test_documents(tiny_ws, capsys):
    from core.workspace.store import Workspace

    assert run_cli(["--workspace", str(tiny_ws), "evaluate", "--run", "tiny", "--doc-level",
                    "--beam", "1"]) == 0
    with Workspace.open(tiny_ws) as ws:
        corpus = ws.load_corpus("demo")
        test = ws.load_split("demo").assignment["test"]
        m = [e for e in ws.evaluations() if e.test_name == "demo:test:documents"][0].metrics
    assert m["documents"] == len({corpus.pairs[i].doc_id for i in test})
    assert 0.0 <= m["doc_bleu"] <= 100.0 and m["delta_bleu"] == 0.0
    assert m["decoding"]["beam"] == 1 and m["decoding"]["runs"] == ["tiny"]
    assert "training strategy" in capsys.readouterr().out


def test_the_attention_screens_test_split_keeps_a_corpus_name_with_brackets(tmp_path):
    """run_test_pairs names the split 'corpus:test' without evaluate's '[:N]' cut, also
    for a corpus whose own name holds '[:' (it was cut there)."""
    from core.services import test_pairs
    from core.services.demo import ensure_demo_workspace
    from core.workspace.store import Workspace

    root = ensure_demo_workspace(tmp_path / "demo")
    with Workspace.open(root) as ws:
        run = ws.get_run("tatoeba-luong")
        ws.rename_corpus(run.corpus_id, "demo[:2026]")
        pairs, langs, name = test_pairs.run_test_pairs(ws, run.id, 5)
        assert name == "demo[:2026]:test" and len(pairs) == 5 and langs == ("es", "en")
        assert test_pairs.run_test_pairs(ws, run.id, 0)[2] == "demo[:2026]:test"
