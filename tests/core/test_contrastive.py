"""Contrastive evaluation: the pronoun-set and JSON readers, accuracy counting, and the
forced-decoding scorer of a real (tiny, random) context-aware Transformer."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch

from core.config import ModelConfig
from core.data.preprocess import Preprocessor
from core.data.vocab import Vocab
from core.errors import CorpusError
from core.evaluate.contrastive import (
    ContrastiveExample,
    contrastive_accuracy,
    make_score_fn,
    read_json_set,
    read_pronoun_pairs,
    read_pronoun_set,
)
from core.jobs import JobCancelled, RecordingContext
from core.models.base import BOS, EOS
from core.models.registry import build_model

SET = "contrastive-pronoun-en-fr"

# ------------------------------------------------------------------ the real set


def _independent_pronoun_counts(trg_lines: list[str]) -> Counter:
    """Count the correct pronoun of each pair with plain string operations: turn
    apostrophes, hyphens and punctuation inside the differing words into spaces and
    take the word that is il/elle/ils/elles on both lines but differs."""
    counts: Counter = Counter()
    for i in range(0, len(trg_lines), 2):
        for a, b in zip(trg_lines[i].split(), trg_lines[i + 1].split(), strict=True):
            if a == b:
                continue
            for mark in "'-.,!?;:\"…":
                a, b = a.replace(mark, " "), b.replace(mark, " ")
            for x, y in zip(a.lower().split(), b.lower().split(), strict=False):
                if x != y and x in ("il", "elle", "ils", "elles") and y in ("il", "elle", "ils", "elles"):
                    counts[x] += 1
    return counts


def test_reader_on_the_released_pronoun_set(shared):
    folder = shared(SET)
    examples = read_pronoun_set(folder, k=1)
    trg = (folder / "OpenSubs.current.trg").read_text(encoding="utf-8").split("\n")[:-1]
    src = (folder / "OpenSubs.current.src").read_text(encoding="utf-8").split("\n")[:-1]
    ctx = (folder / "OpenSubs.c1.context.src").read_text(encoding="utf-8").split("\n")[:-1]
    ctx_t = (folder / "OpenSubs.c1.context.trg").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(examples) == 14_000 == len(trg) // 2
    by_reader = Counter(e.phenomenon for e in examples)
    assert by_reader == _independent_pronoun_counts(trg)
    # the README's table (pronoun x antecedent distance) sums to 3,500 per pronoun
    assert by_reader == {"il": 3500, "elle": 3500, "ils": 3500, "elles": 3500}
    first = examples[0]
    assert first.source == src[0] == src[1]
    assert first.correct == trg[0] and first.contrastive == trg[1]
    assert " elle passait " in first.correct and " il passait " in first.contrastive
    assert first.phenomenon == "elle" and first.line == 1
    assert first.context_src == [ctx[0]] and first.context_tgt == [ctx_t[0]]
    assert examples[-1].line == 27_999 and examples[-1].correct == trg[-2]
    # pairs whose context line is empty (a document start) have no context sentence
    assert sum(not e.context_src for e in examples) == sum(ctx[i] == "" for i in range(0, len(ctx), 2))


def test_reader_takes_k_context_lines_per_current_line(shared):
    folder = shared(SET)
    c3 = (folder / "OpenSubs.c3.context.src").read_text(encoding="utf-8").split("\n")[:9]
    examples = read_pronoun_set(folder, k=3)
    assert len(examples) == 14_000
    assert examples[0].context_src == c3[:3]  # oldest first, the K lines of line 1
    assert examples[1].line == 3 and examples[1].context_src == c3[6:9]  # lines of line 3


# --------------------------------------------------------------- malformed files


def _write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


SRC = ["It is red.", "It is red.", "They sleep.", "They sleep.", "If they can.", "If they can."]
TGT = ["Elle est rouge.", "Il est rouge.", "Ils dorment.", "Elles dorment.",
       "S'ils peuvent.", "S'elles peuvent."]


def _pair_files(tmp_path: Path, src=SRC, tgt=TGT) -> tuple[Path, Path]:
    return _write(tmp_path, "t.current.src", src), _write(tmp_path, "t.current.trg", tgt)


def test_small_pair_set_and_its_contexts(tmp_path):
    s, t = _pair_files(tmp_path)
    ctx_joined = _write(tmp_path, "c.src", ["The car.", "The car.", "", "", "Cats. Dogs.", "Cats. Dogs."])
    examples = read_pronoun_pairs(s, t, ctx_joined, None, k=2)
    assert [e.phenomenon for e in examples] == ["elle", "ils", "ils"]
    assert [e.line for e in examples] == [1, 3, 5]
    assert [e.context_src for e in examples] == [["The car."], [], ["Cats. Dogs."]]
    per_line = _write(tmp_path, "c2.src", ["A.", "B.", "A.", "B.", "", "", "", "", "C.", "", "C.", ""])
    examples = read_pronoun_pairs(s, t, per_line, None, k=2)
    assert [e.context_src for e in examples] == [["A.", "B."], [], ["C."]]


def test_agreeing_words_may_change_but_no_more(tmp_path):
    s, t = _pair_files(tmp_path, ["It is small.", "It is small."], ["Elle est petite.", "Il est petit."])
    assert read_pronoun_pairs(s, t)[0].phenomenon == "elle"
    with pytest.raises(CorpusError) as err:
        read_pronoun_pairs(s, t, max_agreement_edits=0)
    assert err.value.path == str(t) and err.value.line == 2 and "more than a pronoun" in err.value.reason


@pytest.mark.parametrize("tgt, line, words", [
    (TGT[:2] + ["Ils dorment.", "Ils dorment bien."], 4, "words"),  # length differs
    (TGT[:2] + ["Ils dorment.", "Ils mangent."], 4, "no il/elle/ils/elles swap"),
    (TGT[:2] + ["Ils dorment.", "Ils dorment."], 4, "same as the correct"),
    (TGT[:4] + ["Il a dit qu'il viendra.", "Elle a dit qu'elle viendra."], 6, "2 pronoun swaps"),
    (TGT[:4] + ["S'ils peuvent.", "S'elles veulent."], 6, "more than a pronoun"),
])
def test_pair_that_differs_in_more_than_a_pronoun(tmp_path, tgt, line, words):
    s, t = _pair_files(tmp_path, SRC[: len(tgt)], tgt)
    with pytest.raises(CorpusError) as err:
        read_pronoun_pairs(s, t, max_agreement_edits=0)
    assert err.value.path == str(t) and err.value.line == line and words in err.value.reason


def test_odd_and_mismatched_line_counts(tmp_path):
    s, t = _pair_files(tmp_path, SRC[:5], TGT[:5])
    with pytest.raises(CorpusError) as err:
        read_pronoun_pairs(s, t)
    assert err.value.line == 5 and "odd number" in err.value.reason
    s, t = _pair_files(tmp_path, SRC, TGT[:4])
    with pytest.raises(CorpusError) as err:
        read_pronoun_pairs(s, t)
    assert err.value.path == str(t) and err.value.line == 5
    s, t = _pair_files(tmp_path, SRC[:1] + ["It was red."] + SRC[2:], TGT)
    with pytest.raises(CorpusError) as err:
        read_pronoun_pairs(s, t)
    assert err.value.path == str(s) and err.value.line == 2 and "different sources" in err.value.reason


def test_context_files_that_do_not_fit(tmp_path):
    s, t = _pair_files(tmp_path)
    short = _write(tmp_path, "c.src", ["A."] * 5)  # 6 current lines, k=1
    with pytest.raises(CorpusError) as err:
        read_pronoun_pairs(s, t, short, None, k=1)
    assert err.value.path == str(short) and err.value.line == 6 and "5 lines for 6" in err.value.reason
    odd = _write(tmp_path, "c3.trg", ["A."] * 8)  # k=2 wants 12 (or 6 joined)
    with pytest.raises(CorpusError) as err:
        read_pronoun_pairs(s, t, None, odd, k=2)
    assert err.value.path == str(odd) and err.value.line == 9
    split = _write(tmp_path, "c4.src", ["A.", "A.", "B.", "C.", "D.", "D."])  # pair 2 disagrees
    with pytest.raises(CorpusError) as err:
        read_pronoun_pairs(s, t, split, None, k=1)
    assert err.value.path == str(split) and err.value.line == 4 and "differs" in err.value.reason


# ------------------------------------------------------------------------ JSON


def test_json_list_reader_with_field_aliases(tmp_path):
    records = [
        {"src": "It is here.", "dst": "Elle est là.", "dst_contrastive": "Il est là.",
         "src_context": ["I see the car."], "type": "elle"},
        {"source": ["I lost my keys.", "They are gone."], "tgt": ["J'ai perdu mes clés.", "Elles ont disparu."],
         "contrastive": ["Ils ont disparu.", "Il a disparu."], "extra": 1},
    ]
    path = tmp_path / "deixis_test.json"
    text = json.dumps(records, indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    starts = [n for n, line in enumerate(text.split("\n"), start=1) if line == "  {"]
    a, b = read_json_set(path)
    assert (a.source, a.correct, a.contrastive, a.context_src, a.phenomenon) == (
        "It is here.", "Elle est là.", "Il est là.", ["I see the car."], "elle")
    assert [a.line, b.line] == starts == [2, 11]  # where each record starts
    assert (b.source, b.context_src, b.context_tgt) == ("They are gone.", ["I lost my keys."], ["J'ai perdu mes clés."])
    assert b.alternatives == ("Ils ont disparu.", "Il a disparu.") and b.phenomenon == "deixis_test"


def test_json_lines_with_separator(tmp_path):
    path = tmp_path / "ellipsis.jsonl"
    path.write_text(json.dumps({"src": "A b. _eos It c.", "dst": "X y. _eos Elle z.",
                                "dst_alternatives": ["X y. _eos Il z."], "phenomenon": "ellipsis"})
                    + "\n\n", encoding="utf-8")
    (ex,) = read_json_set(path, separator="_eos")
    assert (ex.source, ex.context_src, ex.correct, ex.contrastive, ex.context_tgt) == (
        "It c.", ["A b."], "Elle z.", "Il z.", ["X y."])


@pytest.mark.parametrize("text, line, words", [
    ('[{"src": "a", "dst": "b", "contrastive": "c"},\n {"src": "a", "dst": "b"}]', 2,
     "record 2 has no contrastive field"),
    ('[{"src": "a", "dst": "b", "tgt": "b", "contrastive": "c"}]', 1, "correct twice (dst, tgt)"),
    ('{"src": "a", "dst": "b", "contrastive": "c"}\n\n{"src": "a", "dst": "b", contrastive: 1}\n', 3,
     "invalid JSON"),
    ('[{"src": "a", "dst": "b", "contrastive": "c"}, 7]', 1, "record 2 is a int"),
    ('[{"src": "a", "dst": "b", "contrastive": "b"}]', 1, "equals the correct"),
    ('[{"src": "a", "dst": "b", "contrastive": 5}]', 1, "must be a string or a list"),
    ('[{"dst": "b", "contrastive": "c"}]', 1, "no source field: give one of src, source"),
])
def test_json_reader_errors_name_record_line_and_field(tmp_path, text, line, words):
    path = tmp_path / "set.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        read_json_set(path)
    assert err.value.path == str(path) and err.value.line == line and words in err.value.reason


# -------------------------------------------------------------------- accuracy


def _examples() -> tuple[list[ContrastiveExample], dict]:
    """Seven examples and a lookup table of scores keyed by (source, context, target)."""
    spec = [  # phenomenon, correct score, contrastive scores
        ("il", -1.0, [-2.0]),  # right
        ("il", -3.0, [-3.0]),  # tie: wrong
        ("elle", -5.0, [-4.0]),  # wrong
        ("elle", -0.5, [-0.7]),  # right
        ("ils", -2.0, [-1.0]),  # wrong
        ("elles", -1.0, [-9.0, -0.5]),  # the second alternative wins: wrong
        ("elles", -1.0, [-2.0, -3.0]),  # right
    ]
    examples, table = [], {}
    for i, (phen, good, bad) in enumerate(spec):
        ctx = [f"c{i}"]
        ex = ContrastiveExample(f"s{i}", ctx, [f"t{i}"], f"good{i}", f"bad{i}a", phen, i,
                                tuple(f"bad{i}{chr(98 + j)}" for j in range(len(bad) - 1)))
        examples.append(ex)
        for target, score in zip((ex.correct, *ex.alternatives), (good, *bad), strict=True):
            table[(ex.source, (f"c{i}",), target)] = score
    return examples, table


@pytest.mark.parametrize("batch_size", [1, 3, 100])
def test_accuracy_worked_out_by_hand(batch_size):
    examples, table = _examples()
    calls = []

    def score_fn(sources, contexts, targets):
        calls.append(len(targets))
        return [table[(s, tuple(c), t)] for s, c, t in zip(sources, contexts, targets, strict=True)]

    rep = contrastive_accuracy(score_fn, examples, batch_size=batch_size)
    assert (rep.overall.total, rep.overall.correct, rep.overall.ties) == (7, 3, 1)
    assert rep.accuracy == pytest.approx(3 / 7)
    got = {k: (g.total, g.correct, g.ties) for k, g in rep.by_phenomenon.items()}
    assert got == {"il": (2, 1, 1), "elle": (2, 1, 0), "ils": (1, 0, 0), "elles": (2, 1, 0)}
    assert rep.margins == pytest.approx([1.0, 0.0, -1.0, 0.2, -1.0, -1.5 + 1.0, 1.0])
    assert sum(calls) == 16 and len(calls) == -(-7 // batch_size)
    table_rows = {r[0]: r for r in rep.to_table().rows}
    assert table_rows["all"][1:] == [7, 3, 1, round(100 * 3 / 7, 2)]


def test_shorter_is_better_scorer_and_target_context():
    exs = [ContrastiveExample("s", [], ["x"], "il vient", "elle vient", "il"),
           ContrastiveExample("s", [], ["x"], "elles vont", "ils vont", "elles"),
           ContrastiveExample("s", [], ["y"], "ils sont", "elles sont", "ils")]
    seen = []

    def shorter(sources, contexts, targets):
        seen.extend(map(tuple, contexts))
        return [-float(len(t)) for t in targets]

    rep = contrastive_accuracy(shorter, exs, batch_size=2, context_side="tgt")
    assert rep.overall.correct == 2 and rep.by_phenomenon["elles"].correct == 0
    assert seen == [("x",)] * 4 + [("y",)] * 2


def test_progress_and_cancel():
    examples, table = _examples()
    rec = RecordingContext()
    score = lambda s, c, t: [table[(a, tuple(b), d)] for a, b, d in zip(s, c, t, strict=True)]  # noqa: E731
    contrastive_accuracy(score, examples, batch_size=3, ctx=rec)
    assert [(e.data["done"], e.data["total"]) for e in rec.of_kind("progress")] == [(3, 7), (6, 7), (7, 7)]
    rec = RecordingContext()
    calls = []

    def cancelling(s, c, t):
        calls.append(1)
        rec.cancel()
        return score(s, c, t)

    with pytest.raises(JobCancelled):
        contrastive_accuracy(cancelling, examples, batch_size=2, ctx=rec)
    assert len(calls) == 1


# ------------------------------------------------------------- model scorer


def _tiny_context_model(vocab_src: Vocab, vocab_tgt: Vocab):
    torch.manual_seed(0)
    cfg = ModelConfig(family="context_transformer", d_model=16, ff_size=32, heads=2, enc_layers=2,
                      dec_layers=1, ctx_layers=1, dropout=0.0)
    return build_model(cfg, len(vocab_src), len(vocab_tgt)).eval()


def _one_at_a_time(model, sv, tv, sp, tp, source, context, target, k) -> float:
    """Summed log-probability of `target` from one unbatched forward pass."""
    src = torch.tensor([sv.encode(sp.tokenize(source))])
    ctx_ids = [i for s in context[-k:] for i in sv.encode(sp.tokenize(s))] or [sv.stoi["<doc>"]]
    tgt = tv.encode(tp.tokenize(target))
    with torch.no_grad():
        out = model(src, torch.tensor([src.size(1)]), torch.tensor([[BOS, *tgt]]),
                    ctx=torch.tensor([ctx_ids]), ctx_lens=torch.tensor([len(ctx_ids)]))
    gold = torch.tensor([*tgt, EOS])
    return float(out.log_probs[0, torch.arange(len(gold)), gold].sum())


def test_make_score_fn_equals_unbatched_forced_decoding():
    sp, tp = Preprocessor("en"), Preprocessor("fr")
    en = ["The car is red.", "It is fast.", "The house is old.", "They are big.", "I like cats."]
    fr = ["La voiture est rouge.", "Elle est rapide.", "Il est rapide.", "Ils sont grands.",
          "Elles sont grandes.", "La maison est vieille."]
    sv = Vocab.build(sp.tokenize(s) for s in en)
    tv = Vocab.build(tp.tokenize(s) for s in fr)
    model = _tiny_context_model(sv, tv)
    fn = make_score_fn(model, sv, tv, sp, tp, "cpu", k_context=1)
    sources = ["It is fast.", "It is fast.", "They are big.", "They are big.", "It is fast."]
    contexts = [["The car is red."], ["The car is red."], [], [], ["I like cats.", "The house is old."]]
    targets = ["Elle est rapide.", "Il est rapide.", "Ils sont grands.", "Elles sont grandes.", "Il est rapide."]
    batched = fn(sources, contexts, targets)
    single = [_one_at_a_time(model, sv, tv, sp, tp, s, c, t, 1)
              for s, c, t in zip(sources, contexts, targets, strict=True)]
    assert batched == pytest.approx(single, abs=1e-4)
    # only the last k=1 sentence is context; the context reaches the model
    assert fn(["It is fast."], [["The house is old."]], ["Il est rapide."])[0] == pytest.approx(batched[4], abs=1e-4)
    assert abs(batched[1] - batched[4]) > 1e-4

    examples = [ContrastiveExample(sources[i], contexts[i], [], targets[i], targets[i + 1], "x")
                for i in (0, 2)]
    rep = contrastive_accuracy(fn, examples, batch_size=1)
    expected = sum(single[i] > single[i + 1] for i in (0, 2))
    assert rep.overall.correct == expected
    assert rep.margins == pytest.approx([single[0] - single[1], single[2] - single[3]], abs=1e-4)


def test_make_score_fn_breaks_and_following_side():
    """K = 2 joins the context sentences with the EOS break; a model with following
    context gets the document-end marker, as contrastive sets give no following text."""
    sp, tp = Preprocessor("en"), Preprocessor("fr")
    en = ["The car is red.", "It is fast.", "The house is old."]
    sv = Vocab.build(sp.tokenize(s) for s in en)
    tv = Vocab.build(tp.tokenize(s) for s in ["Elle est rapide.", "Il est rapide."])
    model = _tiny_context_model(sv, tv)
    src = torch.tensor([sv.encode(sp.tokenize("It is fast."))])
    tgt = tv.encode(tp.tokenize("Elle est rapide."))
    gold = torch.tensor([*tgt, EOS])

    def direct(ctx_ids):
        with torch.no_grad():
            out = model(src, torch.tensor([src.size(1)]), torch.tensor([[BOS, *tgt]]),
                        ctx=torch.tensor([ctx_ids]), ctx_lens=torch.tensor([len(ctx_ids)]))
        return float(out.log_probs[0, torch.arange(len(gold)), gold].sum())

    red, old = (sv.encode(sp.tokenize(s)) for s in ("The car is red.", "The house is old."))
    doc = sv.stoi["<doc>"]
    context = [["The car is red.", "The house is old."]]
    two = make_score_fn(model, sv, tv, sp, tp, "cpu", k_context=2)
    assert two(["It is fast."], context, ["Elle est rapide."])[0] == pytest.approx(
        direct([*red, EOS, *old]), abs=1e-4)
    ahead = make_score_fn(model, sv, tv, sp, tp, "cpu", k_context=1, k_following=1)
    got = ahead(["It is fast."], context, ["Elle est rapide."])[0]
    assert got == pytest.approx(direct([*old, EOS, doc]), abs=1e-4)
    assert got != pytest.approx(direct(old), abs=1e-4)
