"""Every config field checked with its allowed range before a run exists; data too
small to train on refused, saying why."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from core.cli import run_cli
from core.config import RULES, DataConfig, ModelConfig, RunConfig, TrainConfig, load_config
from core.data.corpus import Corpus, SentencePair
from core.errors import ConfigError, TrainingError
from core.jobs import RecordingContext
from core.services.training import create_run, train_run
from tests.core.tiny_runs import tiny_run_config


def test_every_field_has_a_rule():
    fields = {"name", "description", "alignment_reading", "length_penalty"} | {
        f"{section}.{f.name}" for section, kind in
        (("model", ModelConfig), ("data", DataConfig), ("train", TrainConfig))
        for f in dataclasses.fields(kind)}
    assert set(RULES) == fields
    defaults = RunConfig()
    for key, rule in RULES.items():  # every default has its rule's type ...
        section, _, name = key.rpartition(".")
        assert isinstance(getattr(getattr(defaults, section) if section else defaults, name),
                          rule.kind), key
    assert defaults.validate() is defaults  # ... and lies in its range


BAD = [
    ("model", "hidden_size", "big", "whole number"), ("data", "batch_size", 32.5, "whole number"),
    ("model", "dropout", "0.1", "a number"), ("model", "hidden_size", -5, "in [1, 65,536]"),
    ("data", "batch_size", 0, "in [1,"), ("model", "layers", 0, "in [1,"),
    ("train", "lr", -1, "> 0"), ("data", "dev_sample", -5, "in [0,"),
    ("train", "label_smoothing", 5.0, "in [0, 1)"), ("train", "clip_norm", -1, ">= 0"),
    ("data", "src_vocab_size", -3, "in [8,"), ("data", "max_len", 0, "in [1,"),
    ("model", "input_feeding", "yes", "true or false"), ("train", "threads", -4, "in [0,"),
    ("train", "max_steps", -5, "in [0,"), ("train", "device", "bogus", "auto, cpu, cuda"),
    ("train", "lr", float("nan"), "finite"), ("train", "stage", True, "whole number"),
    ("train", "seed", -1, "in [0,"), ("model", "family", "rnn", "one of"),
    # upper limits (round 2, item 9): 2**63 - 1 was an OverflowError traceback
    ("model", "hidden_size", 2**63 - 1, "in [1, 65,536], not 9223372036854775807"),
    ("model", "layers", 100_000, "in [1, 1,000]"), ("model", "d_model", 10**6, "in [1, 65,536]"),
    ("model", "heads", 5000, "in [1, 1,024]"), ("data", "src_vocab_size", 10**9, "in [8, 10,000,000]"),
    ("data", "batch_size", 10**7, "in [1, 100,000]"),
    ("train", "max_steps", 10**15, "in [0, 1,000,000,000]"),
    ("train", "threads", 100_000, "in [0, 1,024]"), ("train", "max_minutes", 1e300, "in [0, 1e+08]"),
]


@pytest.mark.parametrize(("section", "key", "value", "says"), BAD)
def test_bad_values_name_the_key_and_the_allowed_range(section, key, value, says):
    with pytest.raises(ConfigError) as err:
        RunConfig.from_dict({section: {key: value}}, source="my.toml")
    message = str(err.value)
    assert message.startswith(f"my.toml: {section}.{key} must be") and says in message


def test_heads_must_divide_d_model_and_ints_are_accepted_as_floats():
    with pytest.raises(ConfigError, match=r"model.d_model = 30 must be a multiple of model.heads = 7"):
        RunConfig.from_dict({"model": {"family": "transformer", "d_model": 30, "heads": 7}})
    assert RunConfig.from_dict({"model": {"family": "luong", "d_model": 30, "heads": 7}})
    cfg = RunConfig.from_dict({"train": {"lr": 1, "clip_norm": 0}})
    assert isinstance(cfg.train.lr, float) and cfg.train.lr == 1.0


def test_non_utf8_toml_is_a_config_error(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes('description = "año"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


@pytest.mark.parametrize("args", [
    ["--set", "data.batch_size=abc"], ["--device", "bogus"], ["--max-steps", "-5"],
    ["--set", "model.input_feeding=yes"], ["--set", "train.label_smoothing=5.0"],
    ["--set", "model.hidden_size=9223372036854775807"], ["--set", "model.layers=100000"],
    ["--threads", "100000"]])
def test_cli_refuses_bad_values_before_a_run_exists(workspace, capsys, args):
    rc = run_cli(["--workspace", str(workspace.root), "train", "--preset", "demo",
                  "--corpus", "demo", "--name", "held", *args])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and workspace.list_runs() == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_a_missing_gpu_is_refused_before_the_run_exists(workspace):
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        create_run(workspace, "demo", tiny_run_config(device="cuda"))
    assert workspace.list_runs() == []


def _corpus(n: int, src_words: int = 3) -> Corpus:
    return Corpus([SentencePair(" ".join(["hola"] * src_words), "hello there", None, i + 1)
                   for i in range(n)], "es", "en", name=f"c{n}")


def test_a_corpus_too_small_for_a_dev_set_is_refused(workspace):
    workspace.add_corpus(_corpus(3), name="three")
    with pytest.raises(TrainingError, match=r"'three' is too small to train on: 3 pairs"):
        create_run(workspace, "three", tiny_run_config())
    assert workspace.list_runs() == []
    # 12 pairs in 2 documents: a split without a dev pair, refused from its stored sizes
    workspace.add_corpus(Corpus([SentencePair("hola", "hello", f"d{i // 6}", i + 1)
                                 for i in range(12)], "es", "en"), name="two-docs")
    workspace.save_split("two-docs", 1, (0.8, 0.1, 0.1),
                         {"train": list(range(6)), "dev": [], "test": list(range(6, 12))})
    with pytest.raises(TrainingError, match=r"6 training and 0 dev pairs"):
        create_run(workspace, "two-docs", tiny_run_config())
    assert workspace.list_runs() == []


def test_training_with_no_usable_pair_is_refused(workspace):
    workspace.add_corpus(_corpus(40, src_words=30), name="long")
    config = tiny_run_config()
    config.data.max_len = 5  # every pair is longer: the filter keeps none
    run_id = create_run(workspace, "long", config)
    with pytest.raises(TrainingError, match=r"no usable training pairs: kept 0 of \d+ pairs"):
        train_run(workspace, run_id, RecordingContext())
    info = workspace.get_run(run_id)
    assert info.status == "failed" and "data.max_len" in info.error and info.steps == 0


def test_more_threads_than_the_machine_has_are_refused_before_the_run_exists(workspace,
                                                                             capsys):
    """`train --threads 2000` started 4,000 OS threads, 2 steps in 45 s instead of 5
    (round 2, item 9): a run may use at most the machine's CPU threads."""
    from core import limits

    most = limits.cpu_threads()
    with pytest.raises(ConfigError, match=rf"train.threads \(--threads\) = {most + 1:,} is more "
                                          rf"than the {most} CPU threads this machine has"):
        create_run(workspace, "demo", tiny_run_config(threads=most + 1))
    assert run_cli(["--workspace", str(workspace.root), "train", "--preset", "demo",
                    "--corpus", "demo", "--threads", str(most + 1)]) == 2
    assert "CPU threads this machine has (the limit)" in capsys.readouterr().err
    assert workspace.list_runs() == []
