"""Translate screen with a context-aware model: comparison with a sentence-level
baseline (both outputs, difflib-highlighted differing words, marker, count, filter) and
the gate strip under the heatmap (one cell per source token, the Translation's values,
aligned with the heatmap's columns, hidden for a model without gates)."""
from __future__ import annotations

import html
import re
from dataclasses import replace
from difflib import SequenceMatcher

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from app import workers
from app.panels.translate import TranslatePanel
from app.panels.translate_compare import BASELINE, DIFFERS, MARK, TARGET, Comparison
from app.widgets.diff_view import RICH_ROLE
from core.infer.session import TranslationSession
from tests.app.conftest import shown_panel

DOCUMENT = [
    "Compré una mesa nueva para la cocina.",
    "Es muy bonita.",
    "Es de madera de roble y tiene cuatro sillas a juego.",
    "La trajeron el lunes por la mañana.",
]


def tiny_transformer(name: str, family: str, steps: int = 100):
    from core.config import load_preset

    cfg = load_preset("transformer-cpu")
    cfg.name = name
    m = cfg.model
    m.family, m.d_model, m.ff_size, m.heads, m.enc_layers, m.dec_layers = family, 32, 64, 2, 1, 1
    m.dropout = 0.0
    cfg.data.vocab, cfg.data.batch_tokens, cfg.data.batch_size, cfg.data.dev_sample = "word", 0, 32, 5
    cfg.train.max_steps, cfg.train.valid_every, cfg.train.device = steps, steps, "cpu"
    cfg.train.lr, cfg.train.label_smoothing = 0.003, 0.0
    return cfg


@pytest.fixture(scope="module")
def context_ws(tmp_path_factory):
    """A demo workspace with a tiny context model 'ctx', a sentence-level 'sent' and a
    target-side context model 'ctxt'."""
    from core.jobs import JobContext
    from core.services.training import create_run, train_run
    from tests.app.conftest import make_demo_workspace

    root = tmp_path_factory.mktemp("context") / "ws"
    ws = make_demo_workspace(root)
    for name, family in (("ctx", "context_transformer"), ("sent", "transformer"),
                         ("ctxt", "context_transformer")):
        cfg = tiny_transformer(name, family, steps=30 if name == "ctxt" else 100)
        cfg.model.ctx_side = "target" if name == "ctxt" else "source"
        run_id = create_run(ws, "demo", cfg)
        assert train_run(ws, run_id, JobContext()).status == "finished"
    ws.close()
    return root


@pytest.fixture
def panel(qtbot, context_ws):
    yield from shown_panel(qtbot, TranslatePanel, context_ws, 1500)


def ids(panel) -> dict[str, int]:
    return {r.name: r.id for r in panel.workspace.list_runs()}


def translate(qtbot, panel, errors) -> None:
    job = panel.translate()
    # the state changes before the result reaches the screen: wait for both
    qtbot.waitUntil(lambda: job.done and (job.state != workers.FINISHED
                                          or bool(panel.translations)), timeout=30000)
    assert job.state == workers.FINISHED, errors


def bold_words(rich: str) -> list[str]:
    return [w for span in re.findall(r"<b[^>]*>(.*?)</b>", rich) for w in html.unescape(span).split()]


def difflib_changes(a: list[str], b: list[str]) -> tuple[list[str], list[str]]:
    """The words of a and of b inside difflib's non-equal opcodes."""
    only_a, only_b = [], []
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            only_a += a[i1:i2]
            only_b += b[j1:j2]
    return only_a, only_b


def test_comparison_shows_both_outputs_with_the_difflib_differences(qtbot, panel, errors):
    runs = ids(panel)
    panel.models.set_checked([runs["ctx"]])
    panel.set_sentences(DOCUMENT)
    panel.compare.enabled.setChecked(True)
    panel.compare.baseline.setCurrentIndex(panel.compare.baseline.findData(runs["sent"]))
    panel.beam.setValue(2)
    translate(qtbot, panel, errors)

    ws = panel.workspace
    main = TranslationSession.open(ws, [runs["ctx"]]).translate(DOCUMENT, beam=2)
    base = TranslationSession.open(ws, [runs["sent"]]).translate(DOCUMENT, beam=2)
    table = panel.table
    assert table.columnCount() == 4
    assert panel.targets() == [t.text for t in main]
    assert [table.item(r, BASELINE).text() for r in range(4)] == [t.text for t in base]
    differing = 0
    for row in range(4):
        a, b = main[row].text.split(), base[row].text.split()
        want_a, want_b = difflib_changes(a, b)
        assert bold_words(table.item(row, TARGET).data(RICH_ROLE)[1]) == want_a
        assert bold_words(table.item(row, BASELINE).data(RICH_ROLE)[1]) == want_b
        # the rich text shows every word once, in order
        plain = re.sub(r"<[^>]+>", "", table.item(row, TARGET).data(RICH_ROLE)[1])
        assert html.unescape(plain).split() == a
        assert table.item(row, MARK).text() == (DIFFERS if a != b else "")
        differing += a != b
    assert differing >= 1  # 100 steps of two different models: they do not agree everywhere
    assert f"{differing} of 4 differ" in panel.status.text()

    # an edited target is drawn as the edit, compared with the baseline anew (not as the
    # stale highlighted output)
    table.item(0, TARGET).setText("An edit.")
    assert table.item(0, TARGET).data(RICH_ROLE)[0] == "An edit."
    assert html.unescape(re.sub(r"<[^>]+>", "", table.item(0, TARGET).data(RICH_ROLE)[1])) \
        == "An edit."

    # the filter hides the rows whose outputs agree: make rows 1 and 3 agree
    same = [base[0], main[1], base[2], main[3]]
    panel.show_comparison(Comparison(main, same, "ctx", "sent"))
    agree = [main[r].text.split() == same[r].text.split() for r in range(4)]
    assert agree[1] and agree[3]
    assert f"{agree.count(False)} of 4 differ" in panel.status.text()
    panel.compare.only_differing.setChecked(True)
    assert [table.isRowHidden(r) for r in range(4)] == agree
    panel.compare.only_differing.setChecked(False)
    assert not any(table.isRowHidden(r) for r in range(4))


def test_gate_strip_shows_the_translation_gates_aligned_and_hides_without_gates(
        qtbot, panel, errors):
    runs = ids(panel)
    panel.models.set_checked([runs["ctx"]])
    panel.set_sentences(DOCUMENT)
    panel.beam.setValue(1)
    translate(qtbot, panel, errors)
    main = TranslationSession.open(panel.workspace, [runs["ctx"]]).translate(DOCUMENT, beam=1)
    panel.table.setCurrentCell(2, 0)
    strip, heatmap = panel.gate_strip, panel.heatmap
    want = main[2].gates
    n = len(main[2].source_tokens)
    assert want is not None and len(want) == n == 12
    assert strip.visible and strip.plot.scene() is heatmap.graphics.scene()
    assert strip.image.image.shape == (1, n) == (1, heatmap.matrix.shape[1])
    assert np.allclose(strip.image.image[0], want, atol=1e-6)
    assert [label.textItem.toPlainText() for label in strip.labels] == [f"{v:.2f}" for v in want]
    # the cells line up with the heatmap's source columns (same scene x per column edge)
    qtbot.wait(50)
    strip_vb, heat_vb = strip.plot.getViewBox(), heatmap.plot.getViewBox()
    strip_box, heat_box = strip_vb.sceneBoundingRect(), heat_vb.sceneBoundingRect()
    assert abs(strip_box.left() - heat_box.left()) < 1.0  # no overhang on either side
    assert abs(strip_box.right() - heat_box.right()) < 1.0
    assert strip_box.top() > heat_box.bottom()  # under the heatmap
    for x in (0.0, n / 2, float(n)):
        sx = strip_vb.mapViewToScene(QPointF(x, 0.5)).x()
        hx = heat_vb.mapViewToScene(QPointF(x, 0.5)).x()
        assert abs(sx - hx) < 1.0, (x, sx, hx)
    # hovering a cell tells its token and value
    strip._on_mouse_moved(strip_vb.mapViewToScene(QPointF(3.5, 0.5)))
    assert heatmap.readout.text().startswith(
        f"gate \u03bb of source '{main[2].source_tokens[3]}': {want[3]:.2f}")

    shown_height = strip.plot.geometry().height()
    assert shown_height > 20
    # a sentence-level model has no gates: the strip collapses out of the figure
    panel.models.set_checked([runs["sent"]])
    translate(qtbot, panel, errors)
    panel.table.setCurrentCell(1, 0)
    assert panel.translations[1].gates is None
    heatmap.graphics.ci.layout.activate()
    assert not strip.visible and not strip.plot.isVisible() and not strip.colorbar.isVisible()
    assert strip.plot.geometry().height() == 0
    # ... and comes back with the context model's translations
    panel.show_translations([replace(t) for t in main])
    panel.table.setCurrentCell(0, 0)
    panel.show_attention(0)
    assert strip.visible and np.allclose(strip.image.image[0], main[0].gates, atol=1e-6)


def test_attention_screen_shows_a_gate_strip_for_the_context_model_only(qtbot, context_ws):
    """Side by side on the Attention screen: the context model's heatmap gets the strip
    with the forced-decoding gates, the sentence-level one none."""
    from app.panels.attention import AttentionPanel
    from core.services.attention_view import PairInput, pair_view
    from core.workspace.store import Workspace

    ws = Workspace.open(context_ws)
    jobs = workers.JobManager()
    attention = AttentionPanel(jobs)
    qtbot.addWidget(attention)
    attention.set_workspace(ws)
    runs = {r.name: r.id for r in ws.list_runs()}
    pair = PairInput("Es muy bonita.", "It is very pretty.")
    views = [pair_view(TranslationSession.open(ws, [runs[name]]), runs[name], name, pair, forced=True)
             for name in ("ctx", "sent")]
    forced = TranslationSession.open(ws, [runs["ctx"]]).force(pair.source, pair.target)
    attention.show_views(views)
    ctx_strip, sent_strip = attention.gate_strips[0], attention.gate_strips[1]
    assert ctx_strip.visible and not sent_strip.visible
    assert len(ctx_strip.values) == len(forced.source_tokens) == 4
    assert np.allclose(ctx_strip.values, forced.gates, atol=1e-6)
    assert views[1].gates is None
    jobs.shutdown()
    ws.close()


def test_own_translations_as_context_checkbox_reaches_the_job(qtbot, panel, errors):
    """The checkbox is offered for context models only and reaches translate_job (and the
    comparison's main translation): the output is the session's target-context output."""
    runs = ids(panel)
    panel.models.set_checked([runs["sent"]])
    assert not panel.target_context.isEnabled()
    panel.models.set_checked([runs["ctx"]])
    assert panel.target_context.isEnabled()
    panel.set_sentences(DOCUMENT)
    panel.beam.setValue(1)
    session = TranslationSession.open(panel.workspace, [runs["ctx"]])
    assert session.target_context_note() is not None  # separate vocabularies: mapped
    own = [t.text for t in session.translate(DOCUMENT, beam=1, target_context=True)]
    source_side = [t.text for t in session.translate(DOCUMENT, beam=1)]

    panel.target_context.setChecked(True)
    job = panel.translate()
    assert job._kwargs["target_context"] is True
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert job.state == workers.FINISHED, errors
    assert panel.targets() == own

    panel.compare.enabled.setChecked(True)
    panel.compare.baseline.setCurrentIndex(panel.compare.baseline.findData(runs["sent"]))
    job = panel.translate()
    assert job._kwargs["target_context"] is True
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert job.state == workers.FINISHED, errors
    assert [t.text for t in job.result.main] == own

    panel.compare.enabled.setChecked(False)
    panel.target_context.setChecked(False)
    translate(qtbot, panel, errors)
    assert panel.job._kwargs["target_context"] is False
    assert panel.targets() == source_side


def test_a_context_baseline_shows_its_gates_in_a_second_strip(qtbot, panel, errors):
    runs = ids(panel)
    ws = panel.workspace
    main = TranslationSession.open(ws, [runs["ctx"]]).translate(DOCUMENT, beam=1)
    sent = TranslationSession.open(ws, [runs["sent"]]).translate(DOCUMENT, beam=1)
    panel.set_sentences(DOCUMENT)
    # a baseline that is a context model too (e.g. source- vs target-side context)
    other = [replace(t, gates=np.linspace(0.1, 0.9, len(t.source_tokens)).astype(np.float32))
             for t in main]
    panel.show_comparison(Comparison(main, other, "ctx", "ctx-tgt"))
    panel.table.selectRow(2)
    panel.show_attention(2)
    assert panel.gate_strip.visible and panel.baseline_gate_strip.visible
    assert np.allclose(panel.gate_strip.values, main[2].gates)
    assert np.allclose(panel.baseline_gate_strip.values, other[2].gates)
    assert "second strip: the baseline ctx-tgt's gates" in panel.note.text()
    # a baseline that tokenised the source otherwise cannot share the columns
    shifted = [replace(t, source_tokens=t.source_tokens[1:]) for t in other]
    panel.show_comparison(Comparison(main, shifted, "ctx", "bpe-run"))
    panel.show_attention(2)
    assert not panel.baseline_gate_strip.visible and panel.gate_strip.visible
    assert "tokenises the source otherwise" in panel.note.text()
    # a sentence-level baseline has no gates: one strip
    panel.show_comparison(Comparison(main, sent, "ctx", "sent"))
    panel.show_attention(2)
    assert panel.gate_strip.visible and not panel.baseline_gate_strip.visible
    assert errors == []


def test_the_target_side_model_compared_with_the_source_side_one(qtbot, panel, errors):
    """The comparison view with the target-context model: both outputs, both gates."""
    runs = ids(panel)
    panel.models.set_checked([runs["ctxt"]])
    panel.set_sentences(DOCUMENT)
    panel.compare.enabled.setChecked(True)
    panel.compare.baseline.setCurrentIndex(panel.compare.baseline.findData(runs["ctx"]))
    panel.beam.setValue(1)
    translate(qtbot, panel, errors)
    ws = panel.workspace
    main = TranslationSession.open(ws, [runs["ctxt"]]).translate(DOCUMENT, beam=1)
    assert panel.targets() == [t.text for t in main]
    panel.table.selectRow(1)
    panel.show_attention(1)
    assert panel.gate_strip.visible and panel.baseline_gate_strip.visible
    assert np.allclose(panel.gate_strip.values, main[1].gates)
    assert len(panel.baseline_gate_strip.values) == len(main[1].source_tokens)


def test_a_target_side_run_always_uses_its_own_translations(qtbot, panel):
    runs = ids(panel)
    box = panel.target_context
    panel.models.set_checked([runs["ctx"]])
    assert box.isEnabled() and not box.isChecked()
    panel.models.set_checked([runs["ctxt"]])  # reads the previous target sentence
    assert box.isChecked() and not box.isEnabled()
    panel.models.set_checked([runs["ctx"]])  # the user's own choice comes back
    assert box.isEnabled() and not box.isChecked()


def test_bf16_decoding_is_offered_where_the_cpu_has_it_and_reaches_the_job(
        qtbot, context_ws, errors, monkeypatch):
    """The 'bf16' checkbox is enabled only on a CPU with native bf16 (its tooltip says why
    not elsewhere); checked, the translation job decodes the output layer in bf16 there."""
    import torch

    from app.panels import translate_arithmetic as translate_panel
    from core.train.device import amp_active, cpu_bf16_status
    from tests.core.output_dtypes import record_output_layer_dtypes

    native, why = cpu_bf16_status()
    plain = next(shown_panel(qtbot, TranslatePanel, context_ws, 1500))
    assert plain.bf16.isEnabled() == native and not plain.bf16.isChecked()
    assert native or why in plain.bf16.toolTip()
    plain.jobs.shutdown()
    plain.workspace.close()

    # offered (as on a bf16 CPU): the choice reaches translate_job and the decoder
    monkeypatch.setattr(translate_panel, "cpu_bf16_status", lambda: (True, "AVX512-BF16"))
    seen = record_output_layer_dtypes(monkeypatch)
    panel = next(shown_panel(qtbot, TranslatePanel, context_ws, 1500))
    assert panel.bf16.isEnabled()
    panel.models.set_checked([ids(panel)["sent"]])
    panel.set_sentences(DOCUMENT)
    panel.beam.setValue(2)
    for checked in (False, True):
        seen.clear()
        panel.bf16.setChecked(checked)
        translate(qtbot, panel, errors)
        assert panel.job._kwargs["amp"] is checked
        assert len(panel.targets()) == len(DOCUMENT)
        bf16_here = checked and amp_active(torch.device("cpu"), True)
        assert set(seen) == {torch.bfloat16 if bf16_here else torch.float32}
    panel.jobs.shutdown()
    panel.workspace.close()


def test_the_shortlist_box_reaches_the_job_and_decodes_over_the_runs_shortlist(
        qtbot, panel, errors):
    """Checked, the translation job loads (and on first use builds) the run's shortlist
    and decodes over it: the lexicon lands in the run's folder and every output word is
    a candidate of the sentences' batch."""
    from core.services.shortlist_store import lexicon_path, load_shortlist
    from core.train.artifacts import load_text_side
    from core.workspace.store import Workspace

    run = ids(panel)["sent"]
    panel.models.set_checked([run])
    panel.set_sentences(DOCUMENT)
    panel.beam.setValue(2)
    panel.shortlist.setChecked(True)
    translate(qtbot, panel, errors)
    assert panel.job._kwargs["shortlist"] is True
    assert errors == []
    with Workspace.open(panel.workspace.root, create=False) as ws:
        assert lexicon_path(ws, run).is_file()
        sl = load_shortlist(ws, run)
        src_vocab, tgt_vocab, _, _ = load_text_side(ws.run_dir(run))
    produced = {i for t in panel.translations for i in t.target_ids}
    src = [i for t in panel.translations for i in src_vocab.encode(t.source_tokens)]
    import torch

    allowed = set(sl.candidates(torch.tensor([src])).tolist())
    assert produced and produced <= allowed
    assert len(allowed) < len(tgt_vocab)


def test_the_shortlist_box_is_off_for_a_run_trained_outside_the_workspace(qtbot, panel):
    """A bundled run (the demo's) has no training split here: the box is unchecked and
    disabled, and its tooltip says why."""
    from core.services.demo import BUNDLED_MARK

    run = ids(panel)["sent"]
    mark = panel.workspace.run_dir(run) / BUNDLED_MARK
    panel.models.set_checked([run])
    panel.shortlist.setChecked(True)
    assert panel.shortlist.isEnabled()
    mark.write_text("test\n", encoding="utf-8")
    try:
        panel.models.set_checked([ids(panel)["ctx"]])
        panel.models.set_checked([run])
        assert not panel.shortlist.isEnabled() and not panel.shortlist.isChecked()
        assert "installed from a bundle" in panel.shortlist.toolTip()
    finally:
        mark.unlink()
    panel.models.set_checked([ids(panel)["ctx"]])
    assert panel.shortlist.isEnabled()


def test_the_int8_box_reaches_the_job_and_the_status_names_the_arithmetic(
        qtbot, panel, errors):
    """Checked, the run decodes with int8 products (its output layer, 32 x vocabulary,
    is packed): the job gets int8=True, the status line says 'in int8', the translation's
    settings record precision 'int8', log-probs move a little; unchecked, fp32 again,
    to the bit. int8 and bf16 exclude each other."""
    assert panel.int8.isEnabled() and not panel.int8.isChecked()
    panel.models.set_checked([ids(panel)["sent"]])
    panel.set_sentences(DOCUMENT)
    panel.beam.setValue(2)
    scores = {}
    for checked in (False, True, False):
        panel.int8.setChecked(checked)
        translate(qtbot, panel, errors)
        assert panel.job._kwargs["int8"] is checked
        precision = "int8" if checked else "fp32"
        assert panel.decoding["precision"] == precision
        assert f"sentences translated in {precision}" in panel.status.text()
        scores.setdefault(checked, []).append([t.log_prob for t in panel.translations])
    assert scores[False][0] == scores[False][1]
    # the job's choice alone: the session the screens share stays fp32 (the Attention
    # and Evaluation screens never turn int8 without being asked)
    assert panel.sessions.get(panel.workspace, [ids(panel)["sent"]]).int8 is False
    gaps = [abs(a - b) for a, b in zip(scores[False][0], scores[True][0], strict=True)]
    assert 0 < max(gaps) < 0.5
    panel.bf16.setEnabled(True)
    panel.int8.setChecked(True)
    panel.bf16.setChecked(True)
    assert not panel.int8.isChecked()


def test_the_job_logs_the_lines_the_translate_command_prints(context_ws, tmp_path, capsys):
    """One core function says what a translation will do (translation_jobs.decoding_lines):
    the Translate screen's job logs the same 'decoding: ...' and 'note: ...' lines that
    `translate --target-context` prints, for a context model with separate vocabularies."""
    from core.cli import run_cli
    from core.jobs import JobContext
    from core.services.translation import SessionCache
    from core.services.translation_jobs import translate_job
    from core.workspace.store import Workspace

    src = tmp_path / "doc.es"
    src.write_text("\n".join(DOCUMENT[:2]) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert run_cli(["--workspace", str(context_ws), "translate", "--run", "ctx", "--beam", "1",
                    "--target-context", "--input", str(src)]) == 0
    printed = [line for line in capsys.readouterr().err.splitlines()
               if line.startswith(("decoding: ", "note: "))]
    logged = []
    ctx = JobContext([lambda e: logged.append(e.data["message"]) if e.kind == "log" else None])
    with Workspace.open(context_ws) as ws:
        translate_job(ws, SessionCache(), [ws.run_id("ctx")], DOCUMENT[:2], 1, False, ctx,
                      target_context=True)
    assert printed == ["decoding: fp32", printed[1]]
    assert printed[1].startswith("note: 'ctx' has separate source and target vocabularies")
    assert [m for m in logged if m.startswith(("decoding: ", "note: "))] == printed
