"""int8 inference on the CPU (core.models.int8, TranslationSession.use_int8, `--int8`):
a shipped int8 run's own rows and scales are packed as stored, every family's products
and recurrent steps run in int8 inside a session that asks for it, the translations,
log-probabilities and attention stay close to fp32's, fp32 is unchanged when int8 is
off, and the commands say which arithmetic ran."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.cli import run_cli
from core.config import ModelConfig
from core.infer.decoding import decoding_settings
from core.models import int8
from core.models.registry import build_model
from core.services.demo import ensure_demo_workspace
from tests.core.demo_sessions import sentences, session_of

pytestmark = pytest.mark.skipif(not int8.available(), reason="torch has no quantized engine")


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory):
    """The demo workspace with its seven bundled (int8) runs."""
    return ensure_demo_workspace(tmp_path_factory.mktemp("int8") / "demo")


def test_a_bundled_int8_run_is_packed_from_its_own_rows_and_scales(demo_root):
    session = session_of(demo_root, "tatoeba-luong")
    member = session.members[0]
    assert "w_s.weight" in member.compact  # the output layer is stored in int8
    line = session.use_int8(True)
    assert line.startswith(f"int8 ({int8.engine()} engine, ") and "per-row scales" in line
    stored = sum(name in member.compact for name, p in member.model.named_parameters()
                 if p.dim() == 2 and p.numel() >= int8.MIN_INT8 and "embed" not in name)
    assert f"; {stored} as stored in the checkpoint" in line and stored >= 5
    q, scales = member.compact["w_s.weight"]
    with torch.no_grad(), int8.products():  # packed when a product first needs it
        packed = int8.packed_for(member.model.w_s.weight)
    weight, _ = torch.ops.quantized.linear_unpack(packed)
    assert torch.equal(weight.int_repr(), q)  # the stored rows, not requantised ones
    assert torch.allclose(weight.q_per_channel_scales().float(), scales.float())


@pytest.mark.parametrize(("run", "lang", "least_same"), [
    ("tatoeba-luong", "es", 0.8), ("tatoeba-rnnsearch", "es", 0.8),
    ("hansards-subs-transformer", "en", 0.75),
])
def test_int8_translations_stay_close_to_fp32(demo_root, run, lang, least_same):
    """On the demo sentences (beam 5): most translations identical, their log-probs
    within 0.05 a target token (median under 0.1 a sentence) and their attention within
    0.1, yet not equal: the products really ran in int8 (measured on 40 sentences, on
    AVX-512 and AVX2-only kernels alike: luong 37, rnnsearch 35, transformer 33
    identical; at most 0.014, 0.028 and 0.024 a token)."""
    session = session_of(demo_root, run)
    lines = sentences(lang, 40)
    fp32 = session.translate(lines, beam=5)
    session.use_int8(True)
    q8 = session.translate(lines, beam=5)
    same = [(a, b) for a, b in zip(fp32, q8, strict=True) if a.text == b.text]
    assert len(same) >= least_same * len(lines)
    gaps = [abs(a.log_prob - b.log_prob) for a, b in same]
    per_token = [gap / max(1, len(a.target_ids)) for gap, (a, _) in zip(gaps, same, strict=True)]
    assert max(per_token) < 0.05 and np.median(gaps) < 0.1
    assert max(gaps) > 1e-4
    assert max(float(np.abs(a.attention - b.attention).max()) for a, b in same) < 0.1


def test_int8_per_call_or_per_session_and_off_again_gives_fp32_to_the_bit(demo_root):
    session = session_of(demo_root, "tatoeba-rnnsearch")
    lines = sentences("es", 8)
    before = session.translate(lines, beam=3)
    per_call = session.translate(lines, beam=3, int8=True)  # the GUI's way: one call only
    assert session.int8 is False
    session.use_int8(True)
    assert [t.log_prob for t in session.translate(lines, beam=3)] == \
        [t.log_prob for t in per_call]
    assert session.use_int8(False) == "fp32"
    after = session.translate(lines, beam=3)
    assert [t.log_prob for t in after] == [t.log_prob for t in before]


def test_forced_attention_in_int8_is_close_to_fp32(demo_root):
    """align / the Attention screen read the forced pass: its attention and score in
    int8 stay within 0.05 and 0.3 of fp32's."""
    session = session_of(demo_root, "tatoeba-rnnsearch")
    src, tgt = "Compré una mesa nueva para la cocina.", "I bought a new table for the kitchen."
    fp32 = session.force(src, tgt)
    session.use_int8(True)
    q8 = session.force(src, tgt)
    diff = float(np.abs(fp32.attention - q8.attention).max())
    assert 0 < diff < 0.05
    assert 0 < abs(fp32.log_prob - q8.log_prob) < 0.3


def toy_model(family: str, **model) -> torch.nn.Module:
    torch.manual_seed(0)
    config = ModelConfig(family=family, emb_size=64, hidden_size=64, layers=2, dropout=0.0,
                         **model)
    return build_model(config, 300, 300).eval()


@pytest.mark.parametrize(("family", "extra"), [
    ("rnnencdec", {"attention": "none", "cell": "lstm"}),
    ("rnnencdec", {"attention": "none", "cell": "gru"}),
    ("luong", {"input_feeding": False}),
])
def test_every_recurrent_step_runs_in_int8(family, extra):
    """nn.LSTM / nn.GRU decoders (int8.rnn_step): one step's log-probs and new state in
    int8 within 0.05 of fp32's, and not equal to them."""
    model = toy_model(family, **extra)
    int8.prepare(model)
    src = torch.randint(4, 300, (3, 7))
    lens = torch.tensor([7, 5, 3])
    y = torch.tensor([2, 2, 2])
    with torch.no_grad():
        enc = model.encode(src, lens)
        state = model.init_state(enc)
        logp, _, new, _ = model.step(y, state, enc)
        with int8.products():
            logp8, _, new8, _ = model.step(y, state, enc)
    for a, b in ((logp, logp8), (new["h"], new8["h"])):
        gap = float((a - b).abs().max())
        assert 0 < gap < 0.05


def test_the_settings_record_and_the_commands_name_int8(demo_root, tmp_path, capsys):
    session = session_of(demo_root, "tatoeba-luong")
    assert decoding_settings(session, beam=5)["precision"] == "fp32"
    session.use_int8(True)
    assert decoding_settings(session, beam=5)["precision"] == "int8"
    (tmp_path / "in.txt").write_text("Es muy bonita.\n", encoding="utf-8")
    base = ["--workspace", str(demo_root), "translate", "--run", "tatoeba-luong",
            "--input", str(tmp_path / "in.txt")]
    assert run_cli([*base, "--int8"]) == 0
    err = capsys.readouterr().err
    assert f"decoding: int8 ({int8.engine()} engine" in err
    assert run_cli(base) == 0
    assert "decoding: fp32" in capsys.readouterr().err
    assert run_cli([*base, "--int8", "--amp"]) == 2
    assert "--int8 and --amp choose different arithmetic" in capsys.readouterr().err


def test_a_bias_is_added_inside_the_int8_product():
    """int8.linear with a bias: the bias packed with the weight once (with_bias), the
    result the unbiased product plus the bias within float rounding; another weight
    with the same bias gets its own packed form, and a 2-D addend is added after."""
    torch.manual_seed(3)
    w1, w2, bias = torch.randn(300, 64), torch.randn(300, 64), torch.randn(300)
    x = torch.randn(10, 64)
    p1, p2 = (int8.pack(*int8.per_row(w)) for w in (w1, w2))
    plain = int8.linear(x, p1)
    fused = int8.linear(x, p1, bias)
    assert float((fused - (plain + bias)).abs().max()) < 1e-4
    assert float(plain.abs().max()) > 1  # the bias moved real numbers
    assert int8.with_bias(p1, bias) is int8.with_bias(p1, bias)  # packed once
    other = int8.linear(x, p2, bias)
    assert float((other - (int8.linear(x, p2) + bias)).abs().max()) < 1e-4
    rows = torch.randn(10, 300)
    assert torch.equal(int8.linear(x, p1, rows), plain + rows)


@pytest.fixture
def fresh_wide_engine():
    """wide_engine() decided again in the test, and again after it (it is cached)."""
    int8.wide_engine.cache_clear()
    yield
    int8.wide_engine.cache_clear()


@pytest.mark.parametrize(("capability", "isa", "flags", "expected"), [
    ("AVX512", None, "fpu avx2 avx512f avx512_vnni avx512_bf16", "onednn"),
    ("AVX512", "AVX512_CORE_AMX", "fpu avx2 avx512f avx512_vnni", "onednn"),
    ("AVX512", None, "fpu avx2 avx512f avx512bw", None),  # AVX-512 without VNNI
    ("AVX2", None, "fpu avx2 avx512f avx512_vnni", None),  # ATEN_CPU_CAPABILITY=avx2
    ("AVX512", "AVX2", "fpu avx2 avx512f avx512_vnni", None),  # ONEDNN_MAX_CPU_ISA=AVX2
])
def test_output_layers_go_to_onednn_only_where_its_vnni_kernels_run(
        monkeypatch, tmp_path, fresh_wide_engine, capability, isa, flags, expected):
    if "onednn" not in torch.backends.quantized.supported_engines:
        pytest.skip("this torch has no oneDNN quantized engine")
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    monkeypatch.setattr(int8, "CPUINFO", cpuinfo)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    if isa is None:
        monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    else:
        monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", isa)
    assert int8.wide_engine() == expected
    assert int8.engine_for(int8.WIDE_ROWS) == (expected or int8.engine())
    assert int8.engine_for(int8.WIDE_ROWS - 1) == int8.engine()  # a recurrent cell's 4 x H


def test_a_weight_packed_on_onednn_computes_fbgemms_products(monkeypatch):
    """The output layer's engine changes the float rounding of the dequantisation, not
    the int8 products: the same rows give the same products to 1e-4 (with and without
    the bias packed in), and packing leaves the process's engine as it was."""
    if "onednn" not in torch.backends.quantized.supported_engines:
        pytest.skip("this torch has no oneDNN quantized engine")
    torch.manual_seed(4)
    w, bias, x = torch.randn(3000, 64), torch.randn(3000), torch.randn(12, 64)
    monkeypatch.setattr(int8, "wide_engine", lambda: None)
    on_x86 = int8.pack(*int8.per_row(w))
    monkeypatch.setattr(int8, "wide_engine", lambda: "onednn")
    on_onednn = int8.pack(*int8.per_row(w))
    assert torch.backends.quantized.engine == int8.engine()
    for b in (None, bias):
        a, o = int8.linear(x, on_x86, b), int8.linear(x, on_onednn, b)
        assert float(a.abs().max()) > 10  # real numbers compared
        assert float((a - o).abs().max()) < 1e-4
    assert torch.backends.quantized.engine == int8.engine()


@pytest.mark.parametrize("wide", ["onednn", None])
def test_the_decoding_line_counts_every_matrix_packed_on_the_wide_engine(monkeypatch, wide):
    """A Transformer of the default feed-forward width (2,048 rows) has those matrices
    packed on oneDNN beside its output layer: the line counts all three and does not
    call them output layers; where oneDNN's VNNI kernels do not run (wide None: an
    AVX2-only CPU) the line is as before."""
    monkeypatch.setattr(int8, "wide_engine", lambda: wide)
    config = ModelConfig(family="transformer", d_model=64, ff_size=2048, heads=4,
                         enc_layers=1, dec_layers=1)
    model = build_model(config, 50, 3000).eval()
    int8.prepare(model)
    line = int8.status_text([model])
    rows = sorted(p.size(0) for p in model.parameters() if p in int8._sources)
    assert rows.count(2048) == 2 and rows[-1] == 3000  # two feed-forward, the output layer
    if wide is None:
        assert "rows or more" not in line and "onednn" not in line
    else:
        assert "; 3 of 2,048 rows or more (output layers, and other matrices as wide) " \
            "on the onednn engine" in line
