"""The beam's length penalty as a run's own setting (config.length_penalty): chosen on
the dev split by `evaluate --tune-length-penalty` (core.services.length_penalty), used
by every later translation of the run unless a command passes --length-penalty, and
named in what a translation says and records."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from core.cli import run_cli
from core.config import RunConfig
from core.errors import ConfigError
from core.infer.decoding import decoding_settings
from core.services import length_penalty, test_pairs
from core.services.demo import ensure_demo_workspace
from core.workspace.store import Workspace
from tests.core.demo_sessions import sentences, session_of


@pytest.fixture()
def demo_root(tmp_path):
    return ensure_demo_workspace(tmp_path / "demo")


def words(translations) -> int:
    return sum(len(t.text.split()) for t in translations)


def test_a_larger_alpha_writes_longer_translations_and_the_run_default_is_used(demo_root):
    """On 40 demo sentences alpha 2 writes more words than no penalty; a session opened
    on a run whose config stores alpha 2 translates exactly as an explicit alpha 2."""
    src = sentences("es", 40)
    session = session_of(demo_root, "tatoeba-luong")
    assert session.length_penalty == 0.0
    plain = session.translate(src, beam=5)
    longer = session.translate(src, beam=5, length_penalty=2.0)
    assert words(longer) > words(plain)
    with Workspace.open(demo_root, create=False) as ws:
        length_penalty.store(ws, ws.get_run("tatoeba-luong").id, 2.0)
        assert RunConfig.from_dict(ws.get_run("tatoeba-luong").config).length_penalty == 2.0
    tuned = session_of(demo_root, "tatoeba-luong")
    assert tuned.length_penalty == 2.0
    assert [t.text for t in tuned.translate(src, beam=5)] == [t.text for t in longer]
    assert [t.text for t in tuned.translate(src, beam=5, length_penalty=0.0)] == \
        [t.text for t in plain]
    assert decoding_settings(tuned, beam=5)["length_penalty"] == 2.0


def test_tuning_keeps_the_alpha_with_the_best_dev_bleu(demo_root):
    """tune() on the demo's dev split: one BLEU per alpha, the alphas change the output
    (the lengths differ), the choice is the best BLEU, and store() makes it the run's."""
    with Workspace.open(demo_root, create=False) as ws:
        info = ws.get_run("tatoeba-luong")
        pairs, _, _, _ = test_pairs.evaluation_pairs(ws, info, "dev")
    session = session_of(demo_root, "tatoeba-luong")
    choice = length_penalty.tune(session, pairs, (0.0, 1.0, 3.0), beam=5)
    assert set(choice.bleu) == {0.0, 1.0, 3.0} and choice.pairs == len(pairs) == 49
    assert choice.length_ratio[3.0] > choice.length_ratio[0.0]
    assert choice.bleu[choice.best] == max(choice.bleu.values())
    assert len(set(choice.bleu.values())) > 1
    assert session.length_penalty == 0.0  # the session's own is left as it was
    table = choice.to_table("t").to_markdown()
    assert table.count("chosen") == 1 and f"| {choice.best:g} |" in table


def test_ties_go_to_the_smaller_alpha():
    class Same:  # a session whose output does not depend on alpha
        is_context_model = False

        def translate(self, src, beam, ctx=None, length_penalty=0.0):
            return [SimpleNamespace(text=s) for s in src]

    from core.data.corpus import SentencePair
    pairs = [SentencePair("a b c", "a b d", None, 1), SentencePair("x y", "x y", None, 2)]
    choice = length_penalty.tune(Same(), pairs, (1.0, 0.5, 2.0), beam=4)
    assert choice.best == 0.5


def test_the_commands_tune_store_say_and_override(demo_root, capsys):
    """evaluate --tune-length-penalty prints the table and stores the best alpha;
    translate then says it and records it; --length-penalty overrides it; bad alphas
    are refused with what to give."""
    ws_args = ["--workspace", str(demo_root)]
    assert run_cli([*ws_args, "evaluate", "--run", "tatoeba-luong",
                    "--tune-length-penalty", "0,1,3"]) == 0
    out, err = capsys.readouterr()
    assert "Length penalty of tatoeba-luong on demo:dev (49 sentences" in out
    with Workspace.open(demo_root, create=False) as ws:
        stored = RunConfig.from_dict(ws.get_run("tatoeba-luong").config).length_penalty
    chosen = [line for line in out.splitlines() if "chosen" in line]
    assert len(chosen) == 1 and chosen[0].startswith(f"| {stored:g} |")
    assert f"now translates with length penalty {stored:g}" in err
    src = demo_root / "in.txt"
    src.write_text("Hoy hace mucho calor.\n", encoding="utf-8")
    out_file = demo_root / "out.jsonl"
    assert run_cli([*ws_args, "translate", "--run", "tatoeba-luong", "--input", str(src),
                    "--output", str(out_file), "--length-penalty", "1.5"]) == 0
    err = capsys.readouterr().err
    assert "beam length penalty: alpha 1.5" in err
    record = json.loads(out_file.read_text(encoding="utf-8").splitlines()[0])
    assert record["meta"]["decoding"]["length_penalty"] == 1.5
    assert run_cli([*ws_args, "translate", "--run", "tatoeba-luong", "--input", str(src),
                    "--length-penalty", "-1"]) != 0
    assert "--length-penalty -1: give GNMT's alpha between 0 and 10" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="at least two different"):
        length_penalty.parse_alphas("1,1")
    assert run_cli([*ws_args, "evaluate", "--run", "tatoeba-luong", "--run",
                    "tatoeba-rnnsearch", "--tune-length-penalty"]) != 0
    assert "give one --run" in capsys.readouterr().err


def test_greedy_search_says_and_records_no_length_penalty(demo_root, capsys):
    """A run's alpha changes beam search only: a greedy translation (beam 1) of a run
    whose own alpha is 2 neither says 'beam length penalty' nor records alpha 2 in its
    export's decoding settings (it decodes exactly as with alpha 0); beam 5 does both."""
    ws_args = ["--workspace", str(demo_root)]
    with Workspace.open(demo_root, create=False) as ws:
        length_penalty.store(ws, ws.get_run("tatoeba-luong").id, 2.0)
    src = demo_root / "in.txt"
    src.write_text("Hoy hace mucho calor.\nEl perro duerme en la casa.\n", encoding="utf-8")
    records = {}
    for beam in (1, 5):
        out_file = demo_root / f"out{beam}.jsonl"
        assert run_cli([*ws_args, "translate", "--run", "tatoeba-luong", "--beam", str(beam),
                        "--input", str(src), "--output", str(out_file)]) == 0
        records[beam] = (capsys.readouterr().err, json.loads(
            out_file.read_text(encoding="utf-8").splitlines()[0])["meta"]["decoding"])
    assert "beam length penalty" not in records[1][0]
    assert records[1][1]["beam"] == 1 and records[1][1]["length_penalty"] == 0.0
    assert "beam length penalty: alpha 2" in records[5][0]
    assert records[5][1]["length_penalty"] == 2.0
    session = session_of(demo_root, "tatoeba-luong")
    assert session.length_penalty == 2.0
    assert [t.text for t in session.translate(sentences("es", 10), beam=1)] == \
        [t.text for t in session.translate(sentences("es", 10), beam=1, length_penalty=0.0)]


def test_an_opennmt_import_is_refused_an_alpha_its_beam_would_ignore(tmp_path, capsys):
    """An OpenNMT-py import searches as onmt_translate does (per-word scores, whatever
    alpha): translate --length-penalty 3 and --tune-length-penalty are refused naming
    why, rather than writing the same translations under a record of alpha 3; its
    decoding settings record the alpha its search applies (0), whatever the session holds."""
    from core.services.model_import import import_model
    from tests.core.onmt_logs import FIXTURES

    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        import_model(ws, FIXTURES / "lstm-dot-std" / "model.pt", name="onmt")
        imported = ws.get_run("onmt").config
    src, ref = tmp_path / "src.es", tmp_path / "ref.en"
    src.write_text("Hoy hace calor.\nEl perro duerme.\n", encoding="utf-8")
    ref.write_text("It is hot today.\nThe dog sleeps.\n", encoding="utf-8")
    base = ["--workspace", str(root)]
    capsys.readouterr()
    assert run_cli([*base, "translate", "--run", "onmt", "--checkpoint", "last", "--input",
                    str(src), "--length-penalty", "3"]) == 2
    err = capsys.readouterr().err
    assert "--length-penalty 3: run 'onmt' was imported from OpenNMT-py" in err
    assert "leave --length-penalty out" in err
    assert run_cli([*base, "evaluate", "--run", "onmt", "--checkpoint", "last", "--src",
                    str(src), "--ref", str(ref), "--tune-length-penalty", "0,1"]) == 2
    assert "run 'onmt' was imported from OpenNMT-py" in capsys.readouterr().err
    with Workspace.open(root, create=False) as ws:
        assert ws.get_run("onmt").config == imported  # nothing stored
        from core.services.translation import open_session
        session = open_session(ws, ["onmt"], "last")
    assert session.onmt_style
    session.length_penalty = 1.0
    assert decoding_settings(session, beam=5)["length_penalty"] == 0.0
    assert run_cli([*base, "translate", "--run", "onmt", "--checkpoint", "last", "--input",
                    str(src), "--length-penalty", "0"]) == 0


def test_a_run_without_dev_pairs_is_told_to_tune_on_pairs_of_its_own(demo_root, tmp_path, capsys):
    """The demo's English-French runs sit on a test-only corpus: --tune-length-penalty
    says to give held-out --src/--ref pairs (not the test set), not to 'evaluate on test
    files', and stores nothing; with --src and --ref it tunes on them."""
    base = ["--workspace", str(demo_root), "evaluate", "--run", "hansards-subs-transformer"]
    with Workspace.open(demo_root, create=False) as ws:
        before = ws.get_run("hansards-subs-transformer").config
    capsys.readouterr()
    assert run_cli([*base, "--tune-length-penalty"]) == 2
    err = capsys.readouterr().err
    assert "corpus 'demo-en-fr' has no dev pairs" in err
    assert "tune on held-out pairs of your own (--src FILE --ref FILE; not the test set" in err
    with Workspace.open(demo_root, create=False) as ws:
        assert ws.get_run("hansards-subs-transformer").config == before
    src, ref = tmp_path / "dev.en", tmp_path / "dev.fr"
    src.write_text("We will vote against this bill.\nThe minister answered.\n", encoding="utf-8")
    ref.write_text("Nous voterons contre ce projet de loi.\nLe ministre a répondu.\n",
                   encoding="utf-8")
    assert run_cli([*base, "--tune-length-penalty", "0,3", "--src", str(src),
                    "--ref", str(ref)]) == 0
    assert "Length penalty of hansards-subs-transformer on dev.en (2 sentences" in \
        capsys.readouterr().out


def test_a_cached_session_follows_the_runs_stored_alpha(demo_root):
    """The screens' SessionCache: a run tuned after its session was loaded (in another
    process, say) translates with its new alpha, the same loaded session."""
    from core.services.translation import SessionCache

    cache = SessionCache()
    with Workspace.open(demo_root, create=False) as ws:
        run_id = ws.get_run("tatoeba-luong").id
        first = cache.get(ws, [run_id])
        assert first.length_penalty == 0.0
        length_penalty.store(ws, run_id, 1.5)
        again = cache.get(ws, [run_id])
        assert again is first and again.length_penalty == 1.5
