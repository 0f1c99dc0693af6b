"""Every user path that could autocast a recurrent model, run as a user would on a CPU
without native bf16. tests/core/test_amp.py runs this file in a subprocess with
ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2, which makes any CPU behave like an
AVX2-only one: there oneDNN refuses bf16 LSTM training ("could not create a primitive
descriptor for the LSTM forward propagation primitive"), so a path that entered bf16
autocast would fail here for real.

Usage: python tests/core/no_bf16_paths.py WORKDIR; prints one JSON object (last line).
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.cli import run_cli  # noqa: E402
from core.train.device import cpu_bf16_status  # noqa: E402

DEMO = ROOT / "resources" / "demo"


def cli(*argv: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = run_cli(list(argv))
    return {"rc": rc, "out": out.getvalue(), "err": err.getvalue()}


def main(work: Path) -> dict:
    ws = str(work / "ws")
    result: dict = {"bf16": cpu_bf16_status()}
    result["import"] = cli("--workspace", ws, "corpus", "import", str(DEMO / "demo.es"),
                           str(DEMO / "demo.en"), "--format", "parallel", "--src-lang", "es",
                           "--tgt-lang", "en", "--name", "demo")
    result["train"] = cli("--workspace", ws, "train", "--preset", "demo", "--corpus", "demo",
                          "--name", "amp", "--device", "cpu", "--threads", "1",
                          "--max-steps", "6", "--valid-every", "3", "--quiet",
                          "--set", "train.amp=true", "--set", "data.dev_sample=4")
    source = work / "in.es"
    source.write_text("¿Dónde está la estación?\nHola.\n", encoding="utf-8")
    result["translate"] = cli("--workspace", ws, "translate", "--run", "amp", "--beam", "2",
                              "--input", str(source))
    result["align"] = cli("--workspace", ws, "align", "--run", "amp",
                          "--gold-src", str(DEMO / "gold.es"), "--gold-tgt", str(DEMO / "gold.en"),
                          "--gold-links", str(DEMO / "gold.links"), "--gold-set", "g")
    result["evaluate"] = cli("--workspace", ws, "evaluate", "--run", "amp", "--test", "test",
                             "--beam", "1", "--max-sentences", "5")
    bench = work / "bench"
    bench.mkdir()
    for side in ("es", "en"):  # the bench's data layout: whitespace-tokenised lines
        lines = (DEMO / f"demo.{side}").read_text(encoding="utf-8").splitlines()
        (bench / f"train.tok.{side}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result["bench"] = cli("bench", "train", "--variant", "luong-global-general", "--steps", "2",
                          "--warmup", "1", "--threads", "1", "--amp", "--data", str(bench))
    return result


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
