"""What a run leaves in its folder besides checkpoints, and loading it all back.

    runs/<id>/src.vocab, tgt.vocab   vocabularies (core.data.vocab; sentencepiece models beside)
    runs/<id>/preprocess.json        the two Preprocessors' settings
    runs/<id>/last.pt, best-*.pt     checkpoints (core.train.checkpoint); step-*.pt kept by
                                     train.keep_every, averages (core.train.averaging)
    runs/<id>/imported.json          an imported run's provenance (core.services.model_import)
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch

from core.atomic import write_text_atomic
from core.config import RunConfig
from core.data import marian_vocab  # noqa: F401 (load_vocab reads its kind: SAVED_KINDS)
from core.data.preprocess import Preprocessor
from core.data.vocab import AnyVocab, load_vocab
from core.errors import CheckpointError
from core.models.base import Seq2Seq
from core.safepath import inside
from core.train import checkpoint as ckpt
from core.train.compact import SCALES_KEY, expand_state

SRC_VOCAB, TGT_VOCAB, PREPROCESS = "src.vocab", "tgt.vocab", "preprocess.json"
IMPORTED = "imported.json"


def imported_kind(run_dir: Path) -> str | None:
    """The kind of outside model the run in `run_dir` was imported from ('marian',
    'opennmt-py'), or None for a run trained here (or an unreadable record)."""
    try:
        kind = json.loads((Path(run_dir) / IMPORTED).read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None


def save_artifacts(run_dir: Path, src_vocab: AnyVocab, tgt_vocab: AnyVocab,
                   src_pre: Preprocessor, tgt_pre: Preprocessor) -> None:
    """Write the run's vocabularies (src.vocab, tgt.vocab) and preprocessor settings into
    `run_dir`, atomically."""
    src_vocab.save(run_dir / SRC_VOCAB)
    tgt_vocab.save(run_dir / TGT_VOCAB)
    write_text_atomic(run_dir / PREPROCESS, json.dumps(
        {"src": src_pre.to_dict(), "tgt": tgt_pre.to_dict()}, indent=2))


def load_text_side(run_dir: Path) -> tuple[AnyVocab, AnyVocab, Preprocessor, Preprocessor] | None:
    """(source vocabulary, target vocabulary, source preprocessor, target preprocessor)
    saved in `run_dir`, or None when the run has none yet."""
    if not (run_dir / SRC_VOCAB).exists():
        return None
    for name in (SRC_VOCAB, TGT_VOCAB, PREPROCESS):  # none may be a link out of the run
        inside(run_dir, name, "the run's file", CheckpointError, bare=True)
    path = run_dir / PREPROCESS
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        pres = Preprocessor.from_dict(raw["src"]), Preprocessor.from_dict(raw["tgt"])
    except FileNotFoundError:
        raise CheckpointError(f"{path}: the run's preprocessing settings are missing; the run "
                              "is damaged: train it again") from None
    except (ValueError, TypeError, KeyError) as exc:  # not JSON, not UTF-8, wrong shape
        raise CheckpointError(
            f"{path}: the run's preprocessing settings are damaged ({type(exc).__name__}: "
            f"{exc}); the run is damaged: train it again (or restore the file)") from None
    return (load_vocab(run_dir / SRC_VOCAB), load_vocab(run_dir / TGT_VOCAB), *pres)


@dataclass
class LoadedModel:
    """A trained model with everything needed to translate raw text."""

    model: Seq2Seq
    config: RunConfig
    src_vocab: AnyVocab
    tgt_vocab: AnyVocab
    src_pre: Preprocessor
    tgt_pre: Preprocessor
    checkpoint: Path
    step: int
    #: a shipped int8 checkpoint's own weights (core.train.compact): {state-dict name:
    #: (q rows x cols int8, scales rows float16)}, for int8 inference
    #: (core.models.int8.prepare); empty for other checkpoints
    compact: dict = field(default_factory=dict)
    #: the run's stored config it was checked against (load_model's `run_config`), so
    #: that a reload checks and reads it the same way (its remembered alignment reading)
    run_config: dict | None = None


def pick_checkpoint(run_dir: Path, which: str = "best") -> Path:
    """'best' (lowest dev perplexity, else last), 'last', or a file name in the run (its
    '.pt' may be left out, as `runs`' listings and the GUI name checkpoints without it).
    CheckpointError when it is not there: saying the run's folder is gone (or empty, as
    Workspace.run_dir makes it again), or listing
    the checkpoints the run has, or that it has none yet."""
    if which == "best":
        best = sorted(run_dir.glob("best-*.pt"))  # best-<step:08d>.pt: by step
        if best:
            # The newest best file carries the current best-k ranking (an older one only
            # knows the ranking at its own step, before later improvements).
            entries = ckpt.best_entries(ckpt.load_checkpoint(best[-1], mapped=True).get("best"),
                                        run_dir, best[-1])
            ranked = [run_dir / name for _, _, name in sorted(entries) if (run_dir / name).exists()]
            return ranked[0] if ranked else best[-1]
        which = "last"
    path = inside(run_dir, ckpt.LAST if which == "last" else which, "checkpoint", CheckpointError,
                  bare=True)
    if not path.exists() and path.suffix != ".pt" and path.with_name(path.name + ".pt").exists():
        path = path.with_name(path.name + ".pt")
    if not path.exists():
        if not run_dir.is_dir() or not any(run_dir.iterdir()):
            raise CheckpointError(f"{run_dir}: the run's folder is missing or empty: train "
                                  "the run first or, if it was trained, put back its files "
                                  "(deleted or moved?)")
        saved = sorted(p.name for p in run_dir.glob("*.pt"))
        if saved:
            raise CheckpointError(f"{run_dir}: no checkpoint {path.name!r}; the run has "
                                  f"{', '.join(saved)}: pick one of them, or 'best'")
        raise CheckpointError(
            f"{run_dir}: no checkpoint {path.name!r}; the run has not saved one yet "
            "(train it first)")
    return path


def load_model(run_dir: str | Path, which: str = "best", device: str | torch.device = "cpu",
               run_config: dict | None = None) -> LoadedModel:
    """The run's model from checkpoint `which`, checked against the run: the keys it
    needs, its vocabulary sizes against the run's vocabularies and, given `run_config`
    (the run's stored config), its config (CheckpointError naming what differs)."""
    # imported when called: tests patch the name where it is defined
    from core.models.registry import build_model

    run_dir = Path(run_dir)
    path = pick_checkpoint(run_dir, which)
    text = load_text_side(run_dir)
    if text is None:
        raise CheckpointError(f"{run_dir}: the vocabularies ({SRC_VOCAB}, {TGT_VOCAB}) are missing")
    src_vocab, tgt_vocab, src_pre, tgt_pre = text
    state = ckpt.check_checkpoint(ckpt.load_checkpoint(path, map_location=device, mapped=True),
                                  path,
                                  ckpt.NEEDED_TO_LOAD, run_config, (len(src_vocab), len(tgt_vocab)))
    config = RunConfig.from_dict(state["config"], source=str(path))
    for chosen in ("alignment_reading", "length_penalty"):  # measured after training
        if run_config and chosen in run_config:
            setattr(config, chosen, run_config[chosen])
    model = build_model(config.model, len(src_vocab), len(tgt_vocab))
    try:  # compact (int8 / fp16) shipped weights are expanded to float32 first
        model.load_state_dict(expand_state(state["model"], state.get(SCALES_KEY)))
    except RuntimeError as exc:
        raise CheckpointError(f"{path}: does not fit the model its config describes ({exc})") from None
    ckpt.check_finite_weights(model.state_dict(), path)
    model.to(device).eval()
    scales = state.get(SCALES_KEY) or {}
    # copies: the file stays mapped while a tensor of it lives (load_checkpoint)
    compact = {name: (state["model"][name].clone(), s.clone()) for name, s in scales.items()
               if name in state["model"]}
    return LoadedModel(model, config, src_vocab, tgt_vocab, src_pre, tgt_pre, path,
                       int(state["position"]["step"]), compact, run_config)
