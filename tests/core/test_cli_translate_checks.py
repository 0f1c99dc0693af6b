"""`translate`, `evaluate`, `bench` and `demo` refuse bad options and unwritable outputs
with one line (exit status 2) before any work, and their messages give advice the
command can follow."""
from __future__ import annotations

import pytest

from core.cli import run_cli
from core.errors import ConfigError
from core.train.device import pick_device


def error_line(capsys) -> str:
    """The one 'error: ...' line the CLI printed on stderr."""
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error: ")]
    assert len(lines) == 1
    return lines[0]


# ------------------------------------------------------------------ --device


@pytest.mark.parametrize("command", [
    ["translate", "--run", "tiny"], ["evaluate", "--run", "tiny"], ["align", "--run", "tiny"],
    ["bench", "translate"], ["bench", "train"],
])
@pytest.mark.parametrize("device", ["bogus", "cuda:x"])
def test_a_bad_device_is_one_line_before_any_work(command, device, tmp_path, capsys):
    # the workspace does not exist: the device is checked before it is opened
    argv = ["--workspace", str(tmp_path / "none"), *command, "--device", device]
    assert run_cli(argv) == 2
    line = error_line(capsys)
    assert f"--device must be auto, cpu, cuda or cuda:N, not {device!r}" in line
    assert not (tmp_path / "none").exists()


def test_pick_device_names_the_setting_it_checks():
    with pytest.raises(ConfigError, match="device must be auto, cpu, cuda or cuda:N, not 'gpu'"):
        pick_device("gpu")
    assert pick_device("cpu").type == "cpu"


# ------------------------------------------------------------------ numbers out of range


@pytest.mark.parametrize("command", [["evaluate", "--run", "tiny"], ["demo", "--quick"]])
@pytest.mark.parametrize("beam", ["0", "-2"])
def test_evaluate_and_demo_refuse_a_beam_below_one_before_any_work(command, beam, tmp_path,
                                                                     capsys):
    ws = tmp_path / "ws"
    argv = ["--workspace", str(ws), *command, "--beam", beam]
    if command[0] == "demo":
        argv = [*command, "--workspace", str(ws), "--beam", beam]
    assert run_cli(argv) == 2
    assert f"--beam must be 1 or more (1 = greedy) and at most 100 (the limit), not {beam}" \
        in error_line(capsys)
    assert not ws.exists()  # no half-built demo workspace


@pytest.mark.parametrize("command", [
    ["translate", "--run", "tiny"], ["evaluate", "--run", "tiny"], ["bench", "translate"]])
@pytest.mark.parametrize("beam", ["101", "100000", "1000000000"])
def test_a_beam_over_the_limit_is_one_line_before_any_work(command, beam, tmp_path, capsys):
    """--beam 100000 took 3.8 GB for one word, 10^9 a traceback (round 2, item 9)."""
    argv = ["--workspace", str(tmp_path / "none"), *command, "--beam", beam, "--device", "cpu"]
    assert run_cli(argv) == 2
    assert f"--beam must be 1 or more (1 = greedy) and at most 100 (the limit), not {beam}" \
        in error_line(capsys)
    assert not (tmp_path / "none").exists()


def test_translate_refuses_more_n_best_than_the_beam_limit(tmp_path, capsys):
    argv = ["--workspace", str(tmp_path / "none"), "translate", "--run", "tiny",
            "--n-best", "500"]
    assert run_cli(argv) == 2
    assert "--beam must be 1 or more (1 = greedy) and at most 100 (the limit), not 500" \
        in error_line(capsys)


def test_the_session_refuses_a_beam_over_the_limit(tiny_ws):
    """The GUI's path (TranslationSession) keeps the same limit as --beam."""
    from core.infer.session import TranslationSession
    from core.workspace.store import Workspace

    with Workspace.open(tiny_ws) as ws:
        session = TranslationSession.open(ws, ["tiny"])
        with pytest.raises(ConfigError, match="the beam size must be 1 or more .* at most 100 "
                                              r"\(the limit\), not 101"):
            session.translate(["hola"], beam=101)


def test_more_threads_than_the_machine_has_are_refused(tmp_path, capsys):
    """--threads 2000 started 4,000 OS threads (a step 20 times slower), --threads
    100000 an ImportError (round 2, item 9): at most the machine's CPU threads."""
    from core import limits
    from core.train.device import check_threads

    most = limits.cpu_threads()
    check_threads(most)
    with pytest.raises(ConfigError, match=rf"train.threads \(--threads\) = 2,000 is more than "
                                          rf"the {most} CPU threads this machine has \(the limit\)"):
        pick_device("cpu", 2000)
    for command in (["bench", "train"], ["bench", "translate"]):
        assert run_cli(["--workspace", str(tmp_path / "none"), *command, "--device", "cpu",
                        "--threads", "100000"]) == 2
        assert f"--threads = 100,000 is more than the {most} CPU threads" in error_line(capsys)


def test_a_device_this_machine_lacks_is_one_line(tmp_path, capsys):
    """--device mps on a machine without Apple's GPU was a RuntimeError traceback."""
    import torch

    if torch.backends.mps.is_available():
        pytest.skip("this machine has an MPS device")
    assert run_cli(["--workspace", str(tmp_path / "none"), "translate", "--run", "tiny",
                    "--device", "mps"]) == 2
    assert "--device 'mps': this machine has no Apple GPU (MPS)" in error_line(capsys)


@pytest.mark.parametrize("options, message", [
    (["train", "--steps", "0"], "--steps must be 1 or more, not 0"),
    (["train", "--steps", "-1"], "--steps must be 1 or more, not -1"),
    (["train", "--warmup", "-1"], "--warmup must be 0 or more, not -1"),
    (["train", "--threads", "0"], "--threads must be 1 or more, not 0"),
    (["train", "--batch-size", "0"], "--batch-size must be 1 or more, not 0"),
    (["train", "--batch-tokens", "-5"], "--batch-tokens must be 1 or more, not -5"),
    (["train", "--profile", "-1"], "--profile must be 0 or more, not -1"),
    (["translate", "--threads", "0"], "--threads must be 1 or more, not 0"),
])
def test_bench_refuses_values_out_of_range_before_any_work(options, message, capsys,
                                                            monkeypatch):
    import core.tooling.bench as bench
    import core.tooling.bench_translate as bench_translate

    def no_work(*a, **k):
        raise AssertionError("the bench ran")

    monkeypatch.setattr(bench, "run_train_bench", no_work)
    monkeypatch.setattr(bench_translate, "run_translate_bench", no_work)
    assert run_cli(["bench", *options, "--device", "cpu"]) == 2
    assert message in error_line(capsys)
    assert capsys.readouterr().out == ""


def test_bench_train_passes_no_batch_option_as_the_presets(monkeypatch):
    import core.tooling.bench as bench

    seen = {}

    def record(*a, **k):
        seen.update(k)
        return [{"variant": "x"}]

    monkeypatch.setattr(bench, "run_train_bench", record)
    assert run_cli(["bench", "train", "--device", "cpu", "--steps", "1"]) == 0
    assert seen["batch_size"] == 0 and seen["batch_tokens"] == 0
    assert run_cli(["bench", "train", "--device", "cpu", "--batch-tokens", "900"]) == 0
    assert seen["batch_size"] == 0 and seen["batch_tokens"] == 900


# ------------------------------------------------------------------ outputs, checked first


@pytest.fixture(scope="module")
def tiny_ws(tmp_path_factory):
    """A workspace with the demo corpus and a tiny run 'tiny' trained for 3 steps."""
    from tests.core.conftest import train_tiny_demo_run

    return train_tiny_demo_run(tmp_path_factory.mktemp("checks") / "ws", steps=3, dev_sample=4)


@pytest.mark.parametrize("suffix", [".tmx", ".xlf", ".tsv"])
def test_n_best_into_a_one_translation_format_is_refused_first(suffix, tmp_path, capsys):
    out = tmp_path / f"out{suffix}"
    assert run_cli(["--workspace", str(tmp_path / "none"), "translate", "--run", "tiny",
                    "--n-best", "2", "--output", str(out)]) == 2
    line = error_line(capsys)
    assert f"--output {out}: a {suffix} file holds one translation per segment" in line
    assert ".jsonl" in line and "drop --n-best" in line
    assert not out.exists()


def test_n_best_to_jsonl_is_one_record_per_hypothesis(tiny_ws, tmp_path, capsys):
    from core.formats.export import read_translations

    inp, out = tmp_path / "in.txt", tmp_path / "nbest.jsonl"
    inp.write_text("Hola.\nAdiós.\n", encoding="utf-8")
    assert run_cli(["--workspace", str(tiny_ws), "translate", "--run", "tiny", "--beam", "3",
                    "--n-best", "2", "--input", str(inp), "--output", str(out)]) == 0
    assert f"wrote 4 translations (up to 2 per sentence, 2 sentences) to {out}" in \
        capsys.readouterr().err
    records = read_translations(out)
    assert [(r.source, r.id, r.meta["rank"]) for r in records] == [
        ("Hola.", "1", 1), ("Hola.", "1", 2), ("Adiós.", "2", 1), ("Adiós.", "2", 2)]
    assert records[0].score >= records[1].score and records[2].score >= records[3].score


def test_n_best_to_a_text_file_says_where_it_wrote(tiny_ws, tmp_path, capsys):
    inp, out = tmp_path / "in.txt", tmp_path / "nbest.txt"
    inp.write_text("Hola.\n", encoding="utf-8")
    assert run_cli(["--workspace", str(tiny_ws), "translate", "--run", "tiny", "--n-best", "3",
                    "--input", str(inp), "--output", str(out)]) == 0
    assert f"wrote 3 translations (up to 3 per sentence, 1 sentences) to {out}" in \
        capsys.readouterr().err
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(x.startswith("0 ||| ") for x in lines)


def unwritable(tmp_path, kind: str, name: str):
    """(path, words of its error): a folder, or a file name under a file."""
    if kind == "folder":
        return tmp_path, "is a folder"
    (tmp_path / "afile").write_text("x")
    return tmp_path / "afile" / name, "a part of its folder path is a file"


@pytest.mark.parametrize("kind", ["folder", "under a file"])
def test_translate_checks_output_before_any_work(kind, tmp_path, capsys):
    path, words = unwritable(tmp_path, kind, "out.txt")
    assert run_cli(["--workspace", str(tmp_path / "none"), "translate", "--run", "tiny",
                    "--output", str(path)]) == 2
    line = error_line(capsys)
    assert f"{path}: " in line and words in line


@pytest.mark.parametrize("kind", ["folder", "under a file", "pdf"])
def test_evaluate_checks_report_before_any_work(kind, tmp_path, capsys):
    if kind == "pdf":
        path, words = tmp_path / "rep.pdf", "unknown report format '.pdf': use .md, .csv"
    else:
        path, words = unwritable(tmp_path, kind, "rep.md")
    assert run_cli(["--workspace", str(tmp_path / "none"), "evaluate", "--run", "tiny",
                    "--report", str(path)]) == 2
    line = error_line(capsys)
    assert f"{path}: " in line and words in line


@pytest.mark.parametrize("command", [["bench", "translate", "--device", "cpu"],
                                     ["translate", "--run", "tiny"],
                                     ["evaluate", "--run", "tiny"]])
@pytest.mark.parametrize("spec", ["0,0", "201,5", "5,-1"])
def test_a_shortlist_out_of_range_is_refused_before_any_work(command, spec, tmp_path, capsys,
                                                             monkeypatch):
    import core.tooling.bench_translate as bench_translate

    monkeypatch.setattr(bench_translate, "run_translate_bench", None)  # never reached
    argv = ["--workspace", str(tmp_path / "none"), *command, "--shortlist", spec]
    assert run_cli(argv) == 2
    assert f"shortlist {spec!r}: need 1 <= PER_WORD <= 200 and FREQUENT >= 0" in \
        error_line(capsys)


# ------------------------------------------------------------------ input files, advice


CONVERT = "convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > NEW) and try again"


def latin1_file(tmp_path, name: str = "bad.es"):
    path = tmp_path / name
    path.write_bytes(b"hola\tbuenos\n" + "ni\u00f1o\tboy\n".encode("latin-1"))
    return path


def test_a_bad_dictionary_names_the_file_and_line(tmp_path, capsys):
    bad = latin1_file(tmp_path)
    base = ["--workspace", str(tmp_path / "none"), "translate", "--run", "tiny", "--unk-replace",
            "--dictionary"]
    assert run_cli([*base, str(bad)]) == 2
    line = error_line(capsys)
    assert line.startswith(f"error: {bad}, line 2: invalid UTF-8 byte 0xf1")
    assert line.endswith(CONVERT) and "lenient" not in line
    assert run_cli([*base, str(tmp_path)]) == 2
    assert error_line(capsys) == f"error: {tmp_path}: is a folder, not a file; give a file in it"
    assert run_cli([*base, str(tmp_path / "missing.tsv")]) == 2
    assert error_line(capsys) == f"error: {tmp_path / 'missing.tsv'}: no such file; check the path"


@pytest.mark.parametrize("command", ["translate", "translate --document", "evaluate"])
def test_invalid_utf8_input_advises_converting_not_a_lenient_mode(command, tiny_ws, tmp_path,
                                                                  capsys):
    bad = latin1_file(tmp_path, "bad.txt")
    argv = ["--workspace", str(tiny_ws), *command.split(), "--run", "tiny"]
    if command == "evaluate":
        argv += ["--src", str(bad), "--ref", str(bad)]
    else:
        argv += ["--input", str(bad)]
    assert run_cli(argv) == 2
    line = error_line(capsys)
    assert line == f"error: {bad}, line 2: invalid UTF-8 byte 0xf1 at byte offset 14 " \
        f"(byte 2 of the line); {CONVERT}"


def test_corpus_import_keeps_its_lenient_advice(tmp_path):
    from core.data.textio import read_lines
    from core.errors import CorpusError

    bad = latin1_file(tmp_path)
    with pytest.raises(CorpusError, match="convert the file to UTF-8 or read it in lenient "
                       "mode to replace bad bytes with U[+]FFFD"):
        read_lines(bad)


# ------------------------------------------------------------------ --checkpoint


def test_a_missing_checkpoint_lists_those_the_run_has(tiny_ws, tmp_path, capsys):
    inp = tmp_path / "in.txt"
    inp.write_text("Hola.\n", encoding="utf-8")
    for command in ("translate", "evaluate"):
        argv = ["--workspace", str(tiny_ws), command, "--run", "tiny",
                "--checkpoint", "best-00000015"]
        assert run_cli(argv + (["--input", str(inp)] if command == "translate" else [])) == 2
        line = error_line(capsys)
        assert "no checkpoint 'best-00000015'; the run has best-00000003.pt, last.pt: pick " \
               "one of them, or 'best'" in line
        assert "not saved one yet" not in line


def test_a_run_whose_folder_is_gone_says_so(tmp_path):
    from core.errors import CheckpointError
    from core.train.artifacts import pick_checkpoint

    for run_dir in (tmp_path / "gone", tmp_path):  # missing, or made again empty
        with pytest.raises(CheckpointError, match="the run's folder is missing or empty: "
                           "train the run first or, if it was trained, put back its files"):
            pick_checkpoint(run_dir, "best")
    (tmp_path / "src.vocab").write_text("x")  # created, not trained yet
    with pytest.raises(CheckpointError, match="no checkpoint 'last.pt'; the run has not "
                       "saved one yet [(]train it first[)]"):
        pick_checkpoint(tmp_path, "last")


def test_a_cuda_index_past_the_machines_gpus_is_refused(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert pick_device("cuda:0", option="--device") == torch.device("cuda:0")
    with pytest.raises(ConfigError, match=r"--device 'cuda:3': this machine has 1 CUDA GPU"):
        pick_device("cuda:3", option="--device")


def test_output_checks_leave_no_folders_behind(tmp_path):
    from core.atomic import check_writable
    from core.services.eval_scores import check_report

    check_writable(tmp_path / "a" / "b" / "out.txt")
    assert not (tmp_path / "a").exists()
    with pytest.raises(ConfigError):
        check_report(tmp_path / "r" / "x.pdf")  # an unknown report format
    assert not (tmp_path / "r").exists()
    (tmp_path / "kept").mkdir()
    check_writable(tmp_path / "kept" / "new" / "out.txt")
    assert (tmp_path / "kept").is_dir() and not (tmp_path / "kept" / "new").exists()


def test_a_checkpoint_named_without_its_suffix_is_found(tmp_path):
    from core.errors import CheckpointError
    from core.train.artifacts import pick_checkpoint

    (tmp_path / "best-00000003.pt").write_bytes(b"")
    (tmp_path / "last.pt").write_bytes(b"")
    assert pick_checkpoint(tmp_path, "best-00000003") == tmp_path / "best-00000003.pt"
    assert pick_checkpoint(tmp_path, "best-00000003.pt") == tmp_path / "best-00000003.pt"
    with pytest.raises(CheckpointError, match="the run has best-00000003.pt, last.pt"):
        pick_checkpoint(tmp_path, "best-00000009")
