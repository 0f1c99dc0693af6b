"""Context-aware translation and contrastive evaluation through the CLI, on tiny runs
trained in the test: `translate --target-context` (the model's own translations as
context, mapped to source ids when the vocabularies differ), `evaluate --contrastive`
with '_eos'-joined JSON sets and with several systems in one command."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from core.cli import run_cli
from core.config import ModelConfig, RunConfig
from core.data.preprocess import Preprocessor
from core.data.vocab import Vocab
from core.errors import ConfigError
from core.infer.session import TranslationSession
from core.infer.target_context import TargetIdsAsSource, target_to_source_table
from core.infer.translate import source_tokens
from core.models.context_transformer import ContextTransformer
from core.models.registry import build_model
from core.train.artifacts import LoadedModel
from tests.core.tiny_runs import DOCUMENT, SENTENCES, tiny_transformer_config


@pytest.fixture(scope="module")
def ctx_ws(tmp_path_factory):
    """The demo corpus, a context model with a joint vocabulary ('ctxj') and a
    sentence-level transformer ('sent')."""
    from core.jobs import JobContext
    from core.services.demo import import_demo_corpus
    from core.services.training import create_run, train_run
    from core.workspace.store import Workspace

    root = tmp_path_factory.mktemp("ctxcli") / "ws"
    with Workspace.open(root) as ws:
        corpus_id = import_demo_corpus(ws)
        for name, family, steps in (("ctxj", "context_transformer", 40),
                                    ("sent", "transformer", 10)):
            config = tiny_transformer_config(name, family, steps, joint=True)
            run_id = create_run(ws, corpus_id, config)
            assert train_run(ws, run_id, JobContext()).status == "finished"
    return root


@pytest.fixture
def recorded_ctx(monkeypatch):
    """Every `ctx` a ContextTransformer encodes, as lists of ids per batch row."""
    seen: list[list[int]] = []
    encode = ContextTransformer.encode

    def recording(self, src, src_lens, ctx=None, ctx_lens=None):
        for row, n in zip(ctx.tolist(), ctx_lens.tolist(), strict=True):
            seen.append(row[:n])
        return encode(self, src, src_lens, ctx=ctx, ctx_lens=ctx_lens)

    monkeypatch.setattr(ContextTransformer, "encode", recording)
    return seen


def _translate(ws_root: Path, doc: Path, *extra: str) -> int:
    return run_cli(["--workspace", str(ws_root), "translate", "--run", "ctxj", "--beam", "1",
                    "--input", str(doc), "--json", *extra])


def test_translate_cli_target_context_equals_the_library_call(ctx_ws, tmp_path, capsys,
                                                              recorded_ctx):
    from core.infer.translate import translate_documents
    from core.workspace.store import Workspace

    doc = tmp_path / "doc.txt"
    doc.write_text(DOCUMENT, encoding="utf-8")
    assert _translate(ctx_ws, doc, "--target-context") == 0
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    target_ctx = list(recorded_ctx)
    recorded_ctx.clear()
    assert _translate(ctx_ws, doc) == 0
    source_records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    source_ctx = list(recorded_ctx)
    recorded_ctx.clear()

    with Workspace.open(ctx_ws) as ws:
        session = TranslationSession.open(ws, ["ctxj"])
    assert session.shares_vocabulary and session.target_context_note() is None
    assert session.target_context_models() == session.models  # joint: nothing to map
    direct = translate_documents(session.models, *session.text_side(), [SENTENCES], beam=1,
                                 ctx_sentences=session.context_sentences,
                                 target_context=True)[0]
    assert [r["translation"] for r in records] == [t.text for t in direct]
    assert [r["target_tokens"] for r in records] == [t.target_tokens for t in direct]
    recorded_ctx.clear()

    # the context passed: <doc>, then the previous translation's (target = source) ids
    src_vocab, _, src_pre, _ = session.text_side()
    start = src_vocab.encode(["<doc>"])
    assert len(target_ctx) == len(source_ctx) == 3
    assert target_ctx[0] == source_ctx[0] == start
    for i in (1, 2):
        assert target_ctx[i] == (direct[i - 1].target_ids or start)
        assert source_ctx[i] == src_vocab.encode(source_tokens(SENTENCES[i - 1], src_pre, src_vocab))
    assert all(t.target_ids for t in direct[:2])  # real translations, not <doc>
    assert target_ctx[1:] != source_ctx[1:]
    assert [r["source"] for r in source_records] == SENTENCES


def test_translate_cli_target_context_needs_a_context_model(ctx_ws, tmp_path, capsys):
    doc = tmp_path / "doc.txt"
    doc.write_text(DOCUMENT, encoding="utf-8")
    assert run_cli(["--workspace", str(ctx_ws), "translate", "--run", "sent", "--beam", "1",
                    "--input", str(doc), "--target-context"]) == 2
    err = capsys.readouterr().err
    assert "target-side context works with context models" in err and "'sent'" in err


def _separate_vocab_session(seed: int = 3) -> tuple[TranslationSession, Vocab, Vocab]:
    src = Vocab(["<pad>", "<unk>", "<s>", "</s>", "<doc>", "la", "mesa", "es", "bonita", ".",
                 "casa", "table"])
    tgt = Vocab(["<pad>", "<unk>", "<s>", "</s>", "<doc>", "the", "table", "is", "pretty", ".",
                 "la"])
    torch.manual_seed(seed)
    cfg = RunConfig()
    cfg.model = ModelConfig(family="context_transformer", d_model=16, ff_size=32, heads=2,
                            enc_layers=1, dec_layers=1, dropout=0.0)
    model = build_model(cfg.model, len(src), len(tgt)).eval()
    loaded = LoadedModel(model, cfg, src, tgt, Preprocessor("es"), Preprocessor("en"),
                         Path("none.pt"), 0)
    return TranslationSession.from_loaded([loaded], ["sep"]), src, tgt


def test_target_context_with_separate_vocabularies_maps_tokens_by_string(recorded_ctx):
    session, src, tgt = _separate_vocab_session()
    assert not session.shares_vocabulary
    assert "8 of 11 target tokens" in session.target_context_note()  # + table . la
    table = target_to_source_table(src, tgt)
    assert table.tolist() == [0, 1, 2, 3, 4, 1, 11, 1, 1, 9, 5]
    (wrapped,) = session.target_context_models()
    assert isinstance(wrapped, TargetIdsAsSource) and wrapped.model is session.models[0]

    doc = ["la mesa .", "es bonita .", "la casa ."]
    out = session.translate_documents([doc], beam=1, target_context=True)[0]
    assert len(recorded_ctx) == 3
    for i in (1, 2):
        prev = out[i - 1].target_ids
        assert prev, "the untrained model gave an empty translation: pick another seed"
        assert recorded_ctx[i] == src.encode(tgt.decode(prev))  # by string, unknown -> <unk>
    assert any(recorded_ctx[i] != out[i - 1].target_ids for i in (1, 2))
    with pytest.raises(ConfigError, match="needs a context-aware run"):
        TranslationSession.from_loaded(
            [LoadedModel(build_model(ModelConfig(family="transformer", d_model=16, ff_size=32,
                                                 heads=2, enc_layers=1, dec_layers=1),
                                     len(src), len(tgt)), RunConfig(), src, tgt,
                         Preprocessor("es"), Preprocessor("en"), Path("x.pt"), 0)],
            ["plain"]).translate(doc, beam=1, target_context=True)


# ------------------------------------------------------------------ contrastive


VOITA = [
    {"src": "Compré una mesa. _eos Es muy bonita.", "dst": "I bought a table. _eos It is very pretty.",
     "dst_alternatives": ["I bought a table. _eos She is very pretty."], "type": "it"},
    {"src": "Mi hermana llamó. _eos Ella está en casa. _eos Está cansada.",
     "dst": "My sister called. _eos She is at home. _eos She is tired.",
     "dst_alternatives": ["My sister called. _eos She is at home. _eos He is tired.",
                          "My sister called. _eos She is at home. _eos It is tired."],
     "type": "she"},
    {"src": "Hola.", "dst": "Hello.", "dst_alternatives": ["Hi."], "type": "none"},
]


def _stored(ws_root: Path, run: str, test_name: str) -> dict:
    from core.workspace.store import Workspace

    with Workspace.open(ws_root) as ws:
        return [e for e in ws.evaluations(ws.run_id(run)) if e.test_name == test_name][-1].metrics


def test_evaluate_cli_contrastive_detects_eos_joined_context(ctx_ws, tmp_path, capsys,
                                                             monkeypatch):
    import core.evaluate.contrastive as contrastive
    from core.workspace.store import Workspace

    path = tmp_path / "deixis_test.json"
    path.write_text(json.dumps(VOITA, ensure_ascii=False), encoding="utf-8")
    seen = []
    real = contrastive.contrastive_accuracy
    monkeypatch.setattr(contrastive, "contrastive_accuracy",
                        lambda fn, ex, **kw: seen.append(ex) or real(fn, ex, **kw))
    assert run_cli(["--workspace", str(ctx_ws), "evaluate", "--run", "ctxj",
                    "--contrastive", str(path)]) == 0
    err = capsys.readouterr().err
    assert "joined with '_eos'" in err and "3 examples, 2 with source context" in err
    (examples,) = seen
    assert [len(e.context_src) for e in examples] == [1, 2, 0]
    assert [e.source for e in examples] == ["Es muy bonita.", "Está cansada.", "Hola."]
    assert examples[1].alternatives == ("He is tired.", "It is tired.")

    # the same accuracy as the library call with the separator
    with Workspace.open(ctx_ws) as ws:
        session = TranslationSession.open(ws, ["ctxj"])
    f = session.first
    fn = contrastive.make_score_fn(session.models[0], f.src_vocab, f.tgt_vocab, f.src_pre,
                                   f.tgt_pre, k_context=session.context_sentences)
    want = real(fn, contrastive.read_json_set(path, separator=" _eos "))
    m = _stored(ctx_ws, "ctxj", "contrastive:deixis_test.json")
    assert m["examples"] == 3
    assert m["contrastive_accuracy"] == pytest.approx(100 * want.accuracy)
    assert m["by_pronoun"] == pytest.approx({k: 100 * g.accuracy
                                             for k, g in want.by_phenomenon.items()})

    # an explicit empty separator splits nothing: one long source sentence, no context
    seen.clear()
    assert run_cli(["--workspace", str(ctx_ws), "evaluate", "--run", "ctxj",
                    "--contrastive", str(path), "--separator", ""]) == 0
    assert "joined with" not in capsys.readouterr().err
    assert [len(e.context_src) for e in seen[0]] == [0, 0, 0]
    assert seen[0][0].source == VOITA[0]["src"]


def test_evaluate_cli_contrastive_scores_each_run_as_its_own_system(ctx_ws, tmp_path,
                                                                   monkeypatch):
    import core.evaluate.contrastive as contrastive

    margins = []  # per scored system: the example margins (correct - best contrastive)
    real = contrastive.contrastive_accuracy

    def spy(fn, ex, **kw):
        report = real(fn, ex, **kw)
        margins.append(report.margins)
        return report

    monkeypatch.setattr(contrastive, "contrastive_accuracy", spy)
    path = tmp_path / "pron.json"
    path.write_text(json.dumps(VOITA, ensure_ascii=False), encoding="utf-8")
    single = {}
    for run in ("sent", "ctxj"):
        report = tmp_path / f"{run}.json"
        assert run_cli(["--workspace", str(ctx_ws), "evaluate", "--run", run,
                        "--contrastive", str(path), "--report", str(report)]) == 0
        single[run] = (_stored(ctx_ws, run, "contrastive:pron.json"),
                       json.loads(report.read_text())["rows"])
    both = tmp_path / "both.json"
    assert run_cli(["--workspace", str(ctx_ws), "evaluate", "--run", "sent", "--run", "ctxj",
                    "--contrastive", str(path), "--report", str(both)]) == 0
    rows = json.loads(both.read_text())["rows"]
    alone_sent, alone_ctx, both_sent, both_ctx = margins
    assert alone_sent != pytest.approx(alone_ctx)  # two different systems ...
    assert both_sent == pytest.approx(alone_sent) and both_ctx == pytest.approx(alone_ctx)
    assert [r["system"] for r in rows] == ["sent", "ctxj"]
    for row, run in zip(rows, ("sent", "ctxj"), strict=True):
        metrics, (alone,) = single[run]
        assert row == alone
        assert row["accuracy %"] == pytest.approx(round(metrics["contrastive_accuracy"], 2))
        for k in ("it", "she", "none"):
            assert row[f"{k} %"] == pytest.approx(round(metrics["by_pronoun"][k], 2))
        assert _stored(ctx_ws, run, "contrastive:pron.json") == metrics  # stored per run


def test_evaluate_cli_reads_a_discevalmt_set_and_reports_each_type(ctx_ws, capsys):
    """`evaluate --contrastive` on a DiscEvalMT-layout file (our own sentences): every
    variant scored, accuracy stored per type."""
    path = Path(__file__).resolve().parents[1] / "fixtures" / "contrastive" / "discevalmt-style.json"
    assert run_cli(["--workspace", str(ctx_ws), "evaluate", "--run", "ctxj",
                    "--contrastive", str(path)]) == 0
    captured = capsys.readouterr()
    assert "DiscEvalMT layout" in captured.err and "5 examples, 5 with source context" in captured.err
    rows = {ln.split(" | ")[0][2:]: ln for ln in captured.out.splitlines() if ln.startswith("| ")}
    assert {"discevalmt-style", "disambig", "all"} <= rows.keys()
    m = _stored(ctx_ws, "ctxj", "contrastive:discevalmt-style.json")
    assert m["examples"] == 5 and set(m["by_pronoun"]) == {"discevalmt-style", "disambig"}


def test_evaluate_cli_gates_reports_where_the_gate_opens(ctx_ws, tmp_path, capsys):
    """`evaluate --contrastive --gates WORD ...`: the mean gate of each gated model at the
    watched source words and at the others, stored per run; the forced pass's gates equal
    the gates the same sentence gets when translated with the same context."""
    path = tmp_path / "pron.json"
    path.write_text(json.dumps(VOITA, ensure_ascii=False), encoding="utf-8")
    assert run_cli(["--workspace", str(ctx_ws), "evaluate", "--run", "sent", "--run", "ctxj",
                    "--contrastive", str(path), "--gates", "es", "hola"]) == 0
    captured = capsys.readouterr()
    assert "sent: no gates" in captured.err
    assert "Mean gate per source word on pron.json (ctxj)" in captured.out
    assert "(sent)" not in captured.out.split("Mean gate")[-1]
    m = _stored(ctx_ws, "ctxj", "gates:pron.json")
    from core.workspace.store import Workspace

    with Workspace.open(ctx_ws) as ws:
        session = TranslationSession.open(ws, ["ctxj"])
        first, hello = session.translate_documents(
            [["Compré una mesa.", "Es muy bonita."], ["Hola."]], beam=1)
    es = first[1].gates[[t.lower() for t in first[1].source_tokens].index("es")]
    assert m["mean_gate 'es'"] == pytest.approx(float(es), abs=1e-5)
    assert m["mean_gate 'hola'"] == pytest.approx(float(hello[0].gates[0]), abs=1e-5)
    # the watched words' mean is the mean of the two watched tokens, each in (0, 1)
    assert 0 < m["mean_gate 'es'"] < 1 and 0 < m["mean_gate 'hola'"] < 1
    assert m["mean_gate watched words"] == pytest.approx(
        (m["mean_gate 'es'"] + m["mean_gate 'hola'"]) / 2)
    assert 0 < m["mean_gate other words"] < 1 and 0 < m["mean_gate punctuation"] < 1
    # only with a contrastive set
    assert run_cli(["--workspace", str(ctx_ws), "evaluate", "--run", "ctxj", "--gates"]) == 2
    assert "give --contrastive" in capsys.readouterr().err
