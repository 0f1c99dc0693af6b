"""`translate --amp`: beam search in bf16 autocast where the CPU has native bf16 (the
output layer's matmul in bf16), fp32 with a note elsewhere; scores stay fp32."""
import torch

from core.cli import run_cli
from core.train.device import amp_active
from tests.core.conftest import train_tiny_demo_run
from tests.core.output_dtypes import record_output_layer_dtypes


def _tiny_run(root):
    train_tiny_demo_run(root, steps=4, dev_sample=2)


def test_amp_decodes_the_output_layer_in_bf16_where_the_cpu_has_it(tmp_path, capsys,
                                                                   monkeypatch):
    root = tmp_path / "ws"
    _tiny_run(root)
    seen = record_output_layer_dtypes(monkeypatch)
    src = tmp_path / "in.es"
    src.write_text("Compré una mesa nueva .\nEs muy bonita .\n", encoding="utf-8")
    outputs = {}
    for flag in ([], ["--amp"]):
        seen.clear()
        out = tmp_path / f"out{len(flag)}.en"
        assert run_cli(["--workspace", str(root), "translate", "--run", "tiny", "--beam", "3",
                        "--input", str(src), "--output", str(out), *flag]) == 0
        outputs[bool(flag)] = (set(seen), out.read_text(encoding="utf-8").splitlines())
    err = capsys.readouterr().err
    fp32_dtypes, fp32_lines = outputs[False]
    amp_dtypes, amp_lines = outputs[True]
    assert fp32_dtypes == {torch.float32}
    if amp_active(torch.device("cpu"), True):
        assert amp_dtypes == {torch.bfloat16}
        assert "no native bf16" not in err
        # the line names the arithmetic that ran (it said fp32 under --amp once)
        assert err.count("decoding: fp32") == err.count("decoding: bf16 autocast") == 1
    else:  # an AVX2-only CPU: said, and decoded in fp32
        assert amp_dtypes == {torch.float32} and amp_lines == fp32_lines
        assert "--amp: cpu has no native bf16" in err
    assert len(amp_lines) == len(fp32_lines) == 2

    # a CPU without native bf16 (as every AVX2-only machine): said, and fp32
    import core.train.device as device

    monkeypatch.setattr(device, "cpu_supports_bf16", lambda: False)
    seen.clear()
    out = tmp_path / "out-nobf16.en"
    assert run_cli(["--workspace", str(root), "translate", "--run", "tiny", "--beam", "3",
                    "--input", str(src), "--output", str(out), "--amp"]) == 0
    assert set(seen) == {torch.float32}
    assert out.read_text(encoding="utf-8").splitlines() == fp32_lines
    err = capsys.readouterr().err
    assert "--amp: cpu has no native bf16" in err and "decoding: fp32" in err
