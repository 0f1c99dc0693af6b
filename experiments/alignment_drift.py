"""Attention AER of a run at each of its kept checkpoints, for every reading of the
attention (core.evaluate.readings), with the numbers that explain a drift: the share of
target words whose argmax lands on the final source token (the sink), and the mean
signed offset of the argmax from the gold source word (words with one sure link).

    python experiments/alignment_drift.py --workspace WS --run RUN \\
        --gold-src F --gold-tgt F --gold-links F [--format talp] [--swap] [--out FILE.md]

Every best-*.pt in the run's folder is scored (train with a large train.keep_best to
keep one per improving validation), then last.pt.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.evaluate.aer import corpus_aer  # noqa: E402
from core.evaluate.attention_aer import reading_alignments  # noqa: E402
from core.evaluate.goldsets import GoldSet, read_gold_links, read_token_lines  # noqa: E402
from core.evaluate.readings import ATTENTION_READINGS, READINGS  # noqa: E402
from core.infer.session import TranslationSession  # noqa: E402
from core.train import artifacts  # noqa: E402
from core.train import checkpoint as ckpt  # noqa: E402
from core.workspace.store import Workspace  # noqa: E402


def variants(head: bool) -> list[tuple[str, bool]]:
    """(reading, no_sink) pairs scored: every reading, the alignment head's for a run
    with one (model.alignment_head)."""
    return [(r, s) for s in (False, True) for r in (READINGS if head else ATTENTION_READINGS)]


def label(reading: str, no_sink: bool) -> str:
    return reading + (" no-sink" if no_sink else "")


def diagnostics(preds, gold: GoldSet) -> tuple[float, float]:
    """(% of target words linked to the final source token, mean signed offset of the
    link from the gold source word over target words with exactly one sure link)."""
    to_last = total = 0
    offsets = []
    for pred, g, src in zip(preds, gold.alignments, gold.src_tokens, strict=True):
        last = len(src) - 1
        sure_of: dict[int, list[int]] = {}
        for s, t in g.sure:
            sure_of.setdefault(t, []).append(s)
        for s, t in pred.sure:
            total += 1
            to_last += s == last
            if len(sure_of.get(t, [])) == 1:
                offsets.append(s - sure_of[t][0])
    return 100 * to_last / max(total, 1), sum(offsets) / max(len(offsets), 1)


def add_gold_arguments(ap: argparse.ArgumentParser) -> None:
    """--workspace, --run and the gold files (shared with reading_anchors_check.py)."""
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--gold-src", required=True)
    ap.add_argument("--gold-tgt", required=True)
    ap.add_argument("--gold-links", required=True)
    ap.add_argument("--format", default="pharaoh", choices=("pharaoh", "talp"))
    ap.add_argument("--one-based", action="store_true")
    ap.add_argument("--swap", action="store_true")
    ap.add_argument("--name", default="gold")


def gold_from_args(args: argparse.Namespace) -> GoldSet:
    """The gold set the add_gold_arguments options name."""
    src, tgt = read_token_lines(args.gold_src), read_token_lines(args.gold_tgt)
    links = read_gold_links(args.gold_links, args.format, args.one_based, args.swap, src, tgt)
    return GoldSet(args.name, src, tgt, links, "", "")


def kept_checkpoints(run_dir: Path):
    """(checkpoint path, loaded model) for every best-*.pt of the run, then last.pt when
    it is at a step no best file showed."""
    seen: set[int] = set()
    for path in sorted(run_dir.glob("best-*.pt")) + [run_dir / ckpt.LAST]:
        if not path.exists():
            continue
        loaded = artifacts.load_model(run_dir, path.name)
        if loaded.step not in seen:
            seen.add(loaded.step)
            yield path, loaded


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_gold_arguments(ap)
    ap.add_argument("--out")
    args = ap.parse_args()
    gold = gold_from_args(args)
    with Workspace.open(args.workspace, create=False) as ws:
        info = ws.get_run(args.run)
        run_dir = ws.run_dir(info.id)
    VARIANTS = variants(bool(info.config["model"].get("alignment_head")))
    head = ["step", "dev ppl"] + [f"AER {label(*v)}" for v in VARIANTS] + \
        ["% to last (predict)", "offset (predict)", "% to last (shift)", "offset (shift)"]
    lines = [f"AER % of {args.run}'s attention on {args.name} ({len(gold)} sentences, "
             "argmax, forced decoding) per checkpoint", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    print("\n".join(lines), flush=True)
    for path, loaded in kept_checkpoints(run_dir):
        state = ckpt.load_checkpoint(path)
        ppl = next((e[0] for e in state.get("best") or [] if e[2] == path.name), None)
        session = TranslationSession.from_loaded([loaded], [args.run])
        found = reading_alignments(session, gold, VARIANTS)
        row = [str(loaded.step), "–" if ppl is None else f"{ppl:.2f}"]
        row += [f"{100 * corpus_aer(found[v], gold.alignments).aer:.1f}" for v in VARIANTS]
        for reading in ("predict", "shift"):
            last, offset = diagnostics(found[(reading, False)], gold)
            row += [f"{last:.1f}", f"{offset:+.2f}"]
        line = "| " + " | ".join(row) + " |"
        lines.append(line)
        print(line, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
