"""`runs import PATH` and File -> Import model...: an outside model made a run of the
workspace, one service for both fronts.

The kind is told from the files: a folder with a Marian config.json (the Hugging Face
layout of OPUS-MT models, core.services.marian_import), or a file saved by torch.save (an
OpenNMT-py 3.x checkpoint, core.services.onmt_import, read without running any of its
pickled code). Everything is read and checked
before the workspace changes; the run is then written (vocabularies, preprocessing
settings, the weights as the run's `last.pt`, a provenance record `imported.json`: the
kind, where it came from, each file's size and SHA-256) and marked finished last. A
failure while writing deletes the half-made run: the workspace is as it was.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from core.atomic import write_text_atomic
from core.errors import ConfigError, WorkbenchError
from core.jobs import JobContext
from core.services.corpora import check_language_codes
from core.train import artifacts
from core.train.checkpoint import LAST, save_checkpoint
from core.workspace.store import Workspace

PROVENANCE = artifacts.IMPORTED
#: the kinds `runs import` tells apart, as its help names them
KINDS = ("Marian / OPUS-MT models in the Hugging Face layout (a folder: config.json, "
         "model.safetensors or pytorch_model.bin, source.spm, target.spm, vocab.json)",
         "OpenNMT-py 3.x checkpoints (a .pt file) of RNN encoder-decoders: LSTM, rnn or "
         "brnn encoder, global dot, general or mlp attention, with or without input "
         "feeding, over space-separated tokens")
#: said of the kinds not read yet, in the help and in the refusal
NOT_YET = ("OpenNMT-py Transformers, GRU cells and tokenising transforms are refused, "
           "naming the option.")


def file_record(path: Path) -> dict[str, object]:
    """A file's name, size and SHA-256 (read in 1 MB blocks)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(2**20), b""):
            digest.update(block)
    return {"file": path.name, "bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def read_outside_model(path: Path, name: str):
    """What `path` holds, read and checked: (kind, a marian_import.MarianImport or an
    onmt_import.OnmtImport); ConfigError
    naming the kinds the workbench reads when it is none of them."""
    from core.services import marian_import, onmt_import  # only an import needs them

    if marian_import.is_marian_folder(path):
        return "marian", marian_import.read_marian(path, name)
    if not path.exists():
        raise ConfigError(f"{path}: no such file or folder")
    if onmt_import.is_onmt_checkpoint(path):
        return "opennmt-py", onmt_import.read_onmt(path, name)
    raise ConfigError(f"{path}: not a model the workbench can import; it reads "
                      + "; ".join(KINDS))


def import_model(ws: Workspace, path: str | Path, name: str | None = None,
                 languages: tuple[str, str] | None = None) -> int:
    """Import the outside model at `path` as a finished run named `name` (default: the
    file or folder's name); returns the run's id. `languages` (source, target codes)
    say what the model translates where its files do not (an OpenNMT-py checkpoint
    names none; an OPUS-MT folder's name may): gold sets and corpora of that pair are
    then scored with it; without them the model's own, else "xx". ConfigError /
    CheckpointError naming the file when it cannot be read; the workspace is then
    unchanged."""
    path = Path(path).expanduser().absolute()
    name = name or path.stem
    if languages is not None:
        check_language_codes(*languages, labels=("--src-lang", "--tgt-lang"))
    kind, loaded = read_outside_model(path, name)
    if languages is not None:
        loaded.src_pre = loaded.src_pre.with_language(languages[0])
        loaded.tgt_pre = loaded.tgt_pre.with_language(languages[1])
    run_id = ws.create_run(name, loaded.config.to_dict(), None)
    try:
        folder = ws.run_dir(run_id)
        artifacts.save_artifacts(folder, loaded.src_vocab, loaded.tgt_vocab,
                                 loaded.src_pre, loaded.tgt_pre)
        save_checkpoint(folder / LAST, {
            "model": loaded.model.state_dict(), "config": loaded.config.to_dict(),
            "position": {"epoch": 0, "batch": 0, "step": 0},
            "vocab_sizes": [len(loaded.src_vocab), len(loaded.tgt_vocab)]})
        write_text_atomic(folder / PROVENANCE, json.dumps({
            "kind": kind, "source": str(path), "imported": time.time(),
            "files": [file_record(f) for f in loaded.files]}, indent=2))
        ws.add_checkpoint(run_id, 0, folder / LAST, "last")
        ws.update_run(run_id, status="finished", steps=0, device="cpu")
    except BaseException:
        ws.delete_run(run_id)
        raise
    return run_id


def provenance(ws: Workspace, run_ref: int | str) -> dict | None:
    """The provenance record of an imported run, or None for a run trained here."""
    path = ws.run_dir(ws.run_id(run_ref)) / PROVENANCE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise WorkbenchError(f"{path}: damaged provenance record ({exc})") from None


def import_model_job(ws: Workspace, path: str, name: str,
                     languages: tuple[str, str] | None, ctx: JobContext) -> int:
    """File -> Import model's job: import_model, its progress reported; -> the run's id."""
    ctx.progress(0, 1, f"importing {Path(path).name}")
    run_id = import_model(ws, path, name, languages)
    ctx.progress(1, 1, "imported")
    return run_id
