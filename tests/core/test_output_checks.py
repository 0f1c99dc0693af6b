"""Warnings where an output invents or drops content (core.evaluate.output_checks):
numbers, names, lengths, on hand-made sentences whose answer is known."""
from __future__ import annotations

from core.evaluate.output_checks import (
    check_translation,
    check_translations,
    names,
    numbers,
    typical_ratio,
)


def kinds(source, target, src="es", tgt="en", ratio=1.0):
    return [(w.kind, w.text) for w in check_translation(source, target, src, tgt, ratio)]


def test_a_dropped_or_invented_number_is_flagged_whatever_its_separators():
    assert kinds("Llegó en 1990 con 3 hijos.", "He came with 3 children.") == [
        ("number", "the number 1990 of the source is not in the output")]
    assert kinds("Cuesta 1.000,50 euros.", "It costs 1,000.50 euros.") == []
    assert kinds("Son 1 000 personas.", "They are 1000 people.") == []
    assert kinds("Vino ayer.", "He came on 12 May.") == [
        ("invented number", "the number 12 of the output is not in the source")]
    assert kinds("Tengo 2 y 2 gatos.", "I have 2 cats.") == [
        ("number", "the number 2 of the source is not in the output")]  # counted
    assert numbers("1,000 and 1 000 and 7") == {"1000": 2, "7": 1}


def test_a_name_inside_the_sentence_must_be_kept_where_the_script_keeps_it():
    assert kinds("Mañana voy a Málaga con Pedro.", "Tomorrow I go to Malaga.") == [
        ("name", "the name 'Pedro' of the source is not in the output")]
    assert kinds("Pedro come.", "He eats.") == []  # the first word is no name
    assert kinds("«Ana» llegó. Luego Ana se fue.", "She came. Then she left.") == [
        ("name", "the name 'Ana' of the source is not in the output")]
    assert names("Ich sehe den Hund von Peter.", "de") == []  # nouns are capitalised
    assert names("Then I saw Maria.", "en") == ["Maria"]  # 'I' is no name
    # an output in another script writes names its own way: only numbers are checked
    assert kinds("Vivo en Madrid desde 2001.", "Я живу в Мадриде.", "es", "ru") == [
        ("number", "the number 2001 of the source is not in the output")]
    assert kinds("Viajé a Londres.", "I went to London.") == []  # a form of the name


def test_an_output_much_shorter_or_longer_than_usual_is_flagged():
    source = "La comisión aprobó ayer el informe sobre el presupuesto."  # 56 characters
    assert kinds(source, "The committee.") == [
        ("short", "the output is short: 14 characters for the source's 56 (0.25 of the "
                  "usual length); content may be missing")]
    long = "The committee approved the report. " * 4
    assert [k for k, _ in kinds(source, long)] == ["long"]
    assert kinds(source, "The committee approved the budget report yesterday.") == []
    assert kinds("Sí.", "Yes, of course it is.") == []  # short sentences: no length check
    assert kinds("", "") == [] and kinds("Hola.", " ") == [("empty", "the output is empty")]
    # Chinese takes about 0.3 English characters per character: 16 for 52 is usual
    english = "The committee approved the report on the budget now."
    assert [k for k, _ in kinds(english, "委员会昨天批准了预算报告。我们很高兴", "en", "zh")] == ["short"]
    ratio = typical_ratio([english], ["委员会昨天批准了预算报告。我们很高兴"], "en", "zh")
    assert ratio == 0.3
    assert kinds(english, "委员会昨天批准了预算报告。我们很高兴", "en", "zh", ratio) == []


def test_the_usual_length_is_measured_on_the_translations_themselves():
    sources = [f"Esta es la frase {chr(97 + k)} del documento de hoy." for k in range(12)]
    targets = [s + " " + s for s in sources]  # every output 2 x + 1 characters long
    assert typical_ratio(sources, targets) > 2.0
    assert check_translations(sources, targets, "es", "es") == [[]] * 12
    # three sentences are not enough to measure: the fixed range flags them
    few = check_translations(sources[:3], [t + "!!!!!!!!!!" for t in targets[:3]], "es", "es")
    assert [[w.kind for w in row] for row in few] == [["long"]] * 3


def fake_translation(source: str, text: str):
    """A Translation of `source` whose output is `text` (uniform attention)."""
    import numpy as np

    from core.infer.translate import Translation

    src, tgt = source.split() or [""], text.split()
    return Translation(source, src, list(range(len(tgt))), tgt, text, 0.0, 0.0,
                       np.full((len(tgt) + 1, len(src)), 1.0 / len(src)))


OUTPUTS = {"Llegó en 1990 con Pedro.": "He came with Pedro.",
           "La casa es verde.": "The house is green.",
           "Mañana viene Ana.": "Tomorrow she comes."}


def test_translate_warnings_go_to_stderr_naming_the_line(tmp_path, capsys, monkeypatch):
    from core.cli import run_cli
    from core.infer.session import TranslationSession
    from tests.core.conftest import train_tiny_demo_run

    root = train_tiny_demo_run(tmp_path / "ws", steps=1, dev_sample=2)
    monkeypatch.setattr(TranslationSession, "translate", lambda self, sentences, **kw: [
        fake_translation(s, OUTPUTS[s]) for s in sentences])
    inp = tmp_path / "in.txt"
    inp.write_text("".join(s + "\n" for s in OUTPUTS), encoding="utf-8")
    args = ["--workspace", str(root), "translate", "--run", "tiny", "--input", str(inp)]
    assert run_cli(args + ["--warnings"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == list(OUTPUTS.values())
    assert [line for line in err.splitlines() if line.startswith("warning:")] == [
        f"warning: {inp}, line 1: the number 1990 of the source is not in the output",
        f"warning: {inp}, line 3: the name 'Ana' of the source is not in the output"]
    assert run_cli(args) == 0  # asked for only
    assert "warning:" not in capsys.readouterr().err
