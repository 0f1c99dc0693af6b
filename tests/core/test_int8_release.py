"""translate --int8 without the fp32 copies (core.models.int8_release.release,
TranslationSession.drop_fp32): the model keeps only the int8 form of every matrix its
searches compute in int8, translates exactly as before the copies were dropped, fails
loudly on an fp32 read of a dropped weight, and any fp32 work afterwards (int8 off,
forced scoring) runs on the checkpoint loaded again: fp32's output to the bit. Also:
`translate` builds no attention lists for outputs that do not hold them."""
from __future__ import annotations

import pytest
import torch

from core.cli import run_cli
from core.config import ModelConfig
from core.infer.beam import beam_search
from core.models import int8, int8_release
from core.models.registry import build_model
from core.services import translation
from core.services.demo import ensure_demo_workspace
from core.workspace.store import Workspace
from tests.core.demo_sessions import sentences, session_of

pytestmark = pytest.mark.skipif(not int8.available(), reason="torch has no quantized engine")


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory):
    """The demo workspace with its bundled (int8) runs."""
    return ensure_demo_workspace(tmp_path_factory.mktemp("int8-release") / "demo")


def fp32_bytes_of_packed(model: torch.nn.Module) -> int:
    """Bytes still held by Parameters that int8 products use packed."""
    return sum(p.untyped_storage().nbytes() for p in model.parameters()
               if p in int8._packed)


def summary(translations) -> list[tuple]:
    return [(t.text, t.log_prob, t.attention.tobytes()) for t in translations]


@pytest.mark.parametrize(("run", "lang"), [
    ("tatoeba-luong", "es"),  # input feeding: concatenated cell weights (matmul.kept)
    ("tatoeba-rnnsearch", "es"),  # GRU cell
    ("hansards-subs-transformer", "en"),
    ("hansards-subs-context-target", "en"),  # a context model (documents)
])
def test_dropping_the_fp32_copies_keeps_every_int8_translation(demo_root, run, lang):
    session = session_of(demo_root, run)
    model = session.members[0].model
    total = sum(p.untyped_storage().nbytes() for p in model.parameters())
    lines = sentences(lang, 12)
    session.use_int8(True)
    before = summary(session.translate(lines, beam=5))
    assert fp32_bytes_of_packed(model) > 0  # until now fp32 and int8 side by side
    freed = session.drop_fp32()
    assert session.members[0].model is model  # converted in place: no second model
    count, _ = int8_release.released(model)
    assert count > 0 and freed > 0
    assert fp32_bytes_of_packed(model) == 0
    left = sum(p.untyped_storage().nbytes() for p in model.parameters())
    assert left < 0.75 * total  # what stays: embeddings, an encoder's fused LSTM, biases
    assert f"their fp32 copies dropped, {freed / 2**20:.1f} MiB" in session.path_text()
    assert summary(session.translate(lines, beam=5)) == before


def test_a_dropped_weight_cannot_be_read_in_fp32(demo_root):
    session = session_of(demo_root, "tatoeba-luong")
    session.use_int8(True)
    session.drop_fp32()
    w_s = session.members[0].model.w_s
    with pytest.raises(RuntimeError):
        torch.nn.functional.linear(torch.ones(1, w_s.in_features), w_s.weight)


def test_fp32_work_after_dropping_reloads_the_checkpoint(demo_root):
    """int8 off again (the session's setting or one call's), and forced scoring, give
    exactly what a session that never dropped anything gives."""
    lines = sentences("es", 8)
    fresh = session_of(demo_root, "tatoeba-luong")
    fp32 = summary(fresh.translate(lines, beam=5))
    src, tgt = "Compré una mesa nueva.", "I bought a new table."
    forced_fp32 = fresh.force(src, tgt)
    fresh.use_int8(True)
    forced_int8 = fresh.force(src, tgt)

    session = session_of(demo_root, "tatoeba-luong")
    session.use_int8(True)
    assert session.drop_fp32() > 0
    assert summary(session.translate(lines, beam=5, int8=False)) == fp32  # one call
    session.use_int8(True)
    assert session.drop_fp32() > 0
    forced = session.force(src, tgt)  # forced passes read the cell weights in fp32
    assert (forced.log_prob, forced.attention.tobytes()) == \
        (forced_int8.log_prob, forced_int8.attention.tobytes())
    assert session.drop_fp32() > 0
    assert session.use_int8(False) == "fp32"
    assert summary(session.translate(lines, beam=5)) == fp32
    forced = session.force(src, tgt)
    assert (forced.log_prob, forced.attention.tobytes()) == \
        (forced_fp32.log_prob, forced_fp32.attention.tobytes())


def test_a_reload_keeps_the_run_s_remembered_reading(demo_root):
    """The checkpoint a reload reads is checked against the run's stored config as the
    first load was, so the reading `align --remember` stored (which the checkpoint does
    not hold) is still the run's after fp32 work made the session load it again."""
    from core.services.alignment_runs import forget_reading, store_reading

    with Workspace.open(demo_root, create=False) as ws:
        run_id = ws.get_run("tatoeba-rnnsearch").id
        store_reading(ws, run_id, "shift")
    try:
        session = session_of(demo_root, "tatoeba-rnnsearch")
        assert session.members[0].config.alignment_reading == "shift"
        session.use_int8(True)
        assert session.drop_fp32() > 0
        assert session.use_int8(False) == "fp32"
        session.force("Compré una mesa nueva.", "I bought a new table.")  # reloads
        assert session.members[0].config.alignment_reading == "shift"
    finally:
        with Workspace.open(demo_root, create=False) as ws:
            assert forget_reading(ws, run_id) == "shift"


def test_nothing_is_dropped_without_int8_or_with_a_shortlist(demo_root):
    """The GUI's shared sessions ask int8 per call and never drop; a shortlist reads the
    output layer's rows in fp32."""
    session = session_of(demo_root, "tatoeba-rnnsearch")
    session.translate(sentences("es", 2), beam=2, int8=True)  # the GUI's way
    assert session.drop_fp32() == 0
    assert int8_release.released(session.members[0].model) == (0, 0)
    session.use_int8(True)
    session.shortlist = object()  # any shortlist: drop_fp32 does not look inside
    assert session.drop_fp32() == 0


@pytest.mark.parametrize(("family", "extra"), [
    ("rnnencdec", {"attention": "none", "cell": "lstm"}),
    ("rnnencdec", {"attention": "none", "cell": "gru"}),
    ("luong", {"input_feeding": False}),
    ("luong", {"input_feeding": True}),
])
def test_every_family_searches_the_same_after_release(family, extra):
    torch.manual_seed(0)
    config = ModelConfig(family=family, emb_size=64, hidden_size=64, layers=2, dropout=0.0,
                         **extra)
    model = build_model(config, 300, 300).eval()
    int8.prepare(model)
    src = torch.randint(4, 300, (3, 7))
    lens = torch.tensor([7, 5, 3])

    def search():
        with int8.products():
            return [(h[0].tokens, h[0].log_prob) for h in beam_search(model, src, lens, beam=3)]

    before = search()
    count, freed = int8_release.release(model)
    assert count >= 3 and freed > 0
    assert fp32_bytes_of_packed(model) == 0
    assert search() == before
    assert int8_release.release(model) == (0, 0)  # once


def test_translate_keeps_attention_only_for_json_lines(demo_root, tmp_path, monkeypatch):
    asked: list[bool] = []
    to_record = translation.to_record

    def spy(*args, **kwargs):
        asked.append(kwargs.get("attention", True))
        return to_record(*args, **kwargs)

    monkeypatch.setattr(translation, "to_record", spy)
    (tmp_path / "in.txt").write_text("Es muy bonita.\nHola.\n", encoding="utf-8")
    base = ["--workspace", str(demo_root), "translate", "--run", "tatoeba-luong",
            "--input", str(tmp_path / "in.txt"), "--output"]
    assert run_cli([*base, str(tmp_path / "out.txt")]) == 0
    assert asked == [False, False]
    asked.clear()
    assert run_cli([*base, str(tmp_path / "out.jsonl")]) == 0
    assert asked == [True, True]
    assert '"attention": [[' in (tmp_path / "out.jsonl").read_text(encoding="utf-8")


def test_a_record_without_attention_keeps_the_rest(demo_root):
    tr = session_of(demo_root, "tatoeba-luong").translate(["Hola."], beam=2)[0]
    full, bare = translation.to_record(tr, 0), translation.to_record(tr, 0, attention=False)
    assert bare.attention is None and len(full.attention) == len(tr.target_tokens)
    assert (bare.translation, bare.score, bare.target_tokens) == \
        (full.translation, full.score, full.target_tokens)


def test_the_translate_command_drops_and_says_so(demo_root, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("Es muy bonita.\n", encoding="utf-8")
    base = ["--workspace", str(demo_root), "translate", "--run", "tatoeba-luong",
            "--input", str(tmp_path / "in.txt")]
    assert run_cli([*base, "--int8"]) == 0
    out = capsys.readouterr()
    assert "their fp32 copies dropped" in out.err
    session = session_of(demo_root, "tatoeba-luong")
    session.use_int8(True)
    assert out.out == session.translate(["Es muy bonita."], beam=5)[0].text + "\n"
