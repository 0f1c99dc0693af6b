"""A translated document comes back in the form it came in: a .docx with its paragraphs,
styles and first runs' formatting, a text file with its blank lines, an XLIFF with its
ids; from the `translate` command and from the service the Translate screen uses."""
from __future__ import annotations

import re
from pathlib import Path

import docx
import pytest

from core.cli import run_cli
from core.errors import ConfigError, CorpusError
from core.formats.records import TranslationRecord
from core.formats.xliff import read_xliff
from core.services import translation

#: the 359-pair toy runs (tests/fixtures/toy-models/README.md): small, fast, es -> en
TOY_MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "toy-models"
#: a stand-in translation: what each source sentence becomes
ENGLISH = {"Informe anual": "Annual report", "La casa es verde.": "The house is green.",
           "Mi hermana vive en Madrid.": "My sister lives in Madrid.",
           "El perro come.": "The dog eats.", "Hola.": "Hello."}


def make_docx(path: Path) -> Path:
    """A heading, a paragraph whose first run is bold (two sentences, three runs), an
    empty paragraph, a list item whose first run is not bold but its second is."""
    d = docx.Document()
    d.add_heading("Informe anual", level=1)
    p = d.add_paragraph()
    p.add_run("La casa es ").bold = True
    p.add_run("verde.").italic = True
    p.add_run(" Mi hermana vive en Madrid.")
    d.add_paragraph("")
    item = d.add_paragraph("El perro ", style="List Bullet")
    item.add_run("come.").bold = True
    d.save(path)
    return path


def records_of(document: translation.Document) -> list[TranslationRecord]:
    return [TranslationRecord(s, ENGLISH[s]) for s in document.sentences]


def test_a_docx_comes_back_with_its_paragraphs_styles_and_bold(tmp_path):
    source = make_docx(tmp_path / "informe.docx")
    with_table = docx.Document(source)
    with_table.add_table(rows=1, cols=2).cell(0, 1).text = "Hola."
    with_table.save(source)
    document = translation.read_document(source, "es")
    assert document.paragraphs == [["Informe anual"],
                                   ["La casa es verde.", "Mi hermana vive en Madrid."],
                                   ["El perro come."], ["Hola."]]
    out = tmp_path / "informe_en.docx"
    assert translation.write_export(out, records_of(document), src_lang="es", tgt_lang="en",
                                    document=document) == [out]
    before, after = docx.Document(source), docx.Document(out)
    assert len(after.paragraphs) == len(before.paragraphs) == 4
    assert [p.style.name for p in after.paragraphs] == [p.style.name for p in before.paragraphs]
    assert [p.style.name for p in after.paragraphs] == ["Heading 1", "Normal", "Normal",
                                                        "List Bullet"]
    assert [p.text for p in after.paragraphs] == [
        "Annual report", "The house is green. My sister lives in Madrid.", "",
        "The dog eats."]
    assert [c.text for c in after.tables[0].rows[0].cells] == ["", "Hello."]
    # the translation is in the first run, with that run's formatting
    second, item = after.paragraphs[1].runs, after.paragraphs[3].runs
    assert second[0].text == "The house is green. My sister lives in Madrid."
    assert second[0].bold is True and [r.text for r in second[1:]] == ["", ""]
    assert item[0].text == "The dog eats." and not item[0].bold
    # the parts besides the text are the source's, byte for byte
    import zipfile
    with zipfile.ZipFile(source) as a, zipfile.ZipFile(out) as b:
        assert a.namelist() == b.namelist()
        assert all(a.read(n) == b.read(n) for n in a.namelist() if n != "word/document.xml")


def test_the_translate_command_writes_the_translated_docx(tmp_path, capsys):
    """`translate --input x.docx --output y.docx` with a toy run: no --document needed;
    the output's paragraphs are the model's translations of the source's, styled as
    they were."""
    from core.services.demo import ensure_demo_workspace
    from core.workspace.store import Workspace

    root = ensure_demo_workspace(tmp_path / "demo", models_dir=TOY_MODELS)
    source = make_docx(tmp_path / "informe.docx")
    out = tmp_path / "informe_en.docx"
    assert run_cli(["--workspace", str(root), "translate", "--run", "demo-rnnsearch",
                    "--beam", "1", "--input", str(source), "--output", str(out)]) == 0
    assert f"wrote 4 translations to {out}" in capsys.readouterr().err
    with Workspace.open(root) as ws:
        session = translation.open_session(ws, ["demo-rnnsearch"])
        document = translation.read_document(source, "es")
        expected = [" ".join(t.text for t in para)
                    for para in translation.translate_document(session, document, beam=1)]
    after = docx.Document(out)
    assert [p.text for p in after.paragraphs] == [expected[0], expected[1], "", expected[2]]
    assert all(expected) and expected[1] != "La casa es verde. Mi hermana vive en Madrid."
    assert [p.style.name for p in after.paragraphs] == ["Heading 1", "Normal", "Normal",
                                                        "List Bullet"]
    assert after.paragraphs[1].runs[0].bold is True
    # a text document to stdout: a line per paragraph, the blank lines where they were
    letter = tmp_path / "carta.txt"
    letter.write_text("Hola.\n\n\nEl perro come. La casa es verde.\n", encoding="utf-8")
    assert run_cli(["--workspace", str(root), "translate", "--run", "demo-rnnsearch",
                    "--beam", "1", "--document", "--input", str(letter)]) == 0
    with Workspace.open(root) as ws:
        session = translation.open_session(ws, ["demo-rnnsearch"])
        hello, second = translation.translate_document(
            session, translation.read_document(letter, "es"), beam=1)
    assert capsys.readouterr().out == (f"{hello[0].text}\n\n\n{second[0].text} "
                                       f"{second[1].text}\n")


def test_a_text_document_keeps_its_blank_lines(tmp_path, capsys):
    source = tmp_path / "carta.txt"
    source.write_text("La casa es verde. Mi hermana vive en Madrid.\n\n\nEl perro come.\n"
                      "\nHola.\n", encoding="utf-8")
    document = translation.read_document(source, "es")
    out = tmp_path / "carta_en.txt"
    translation.write_export(out, records_of(document), src_lang="es", tgt_lang="en",
                             document=document)
    assert out.read_text(encoding="utf-8") == (
        "The house is green. My sister lives in Madrid.\n\n\nThe dog eats.\n\nHello.\n")
    # typed text too
    typed = translation.text_document("Hola.\n\nEl perro come.", "es")
    assert translation.document_text(typed, ["Hello.", "The dog eats."]) == \
        "Hello.\n\nThe dog eats.\n"


def test_an_xliff_keeps_its_ids(tmp_path):
    source = tmp_path / "job.xlf"
    source.write_text("""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="job" source-language="es" target-language="en" datatype="plaintext">
  <body>
   <trans-unit id="intro-7"><source>Hola.</source></trans-unit>
   <trans-unit id="p2.s1"><source>El perro come.</source></trans-unit>
  </body></file></xliff>
""", encoding="utf-8")
    document = translation.read_document(source, "es")
    out = tmp_path / "job_en.xlf"
    translation.write_export(out, records_of(document), src_lang="es", tgt_lang="en",
                             document=document)
    assert [(r.id, r.source, r.translation) for r in read_xliff(out)] == [
        ("intro-7", "Hola.", "Hello."), ("p2.s1", "El perro come.", "The dog eats.")]


def test_a_docx_export_needs_the_docx_it_translates(tmp_path, capsys):
    text = tmp_path / "carta.txt"
    text.write_text("Hola.\n", encoding="utf-8")
    document = translation.read_document(text, "es")
    with pytest.raises(ConfigError, match="carta.txt is not one: export it as .txt"):
        translation.write_export(tmp_path / "x.docx", records_of(document), src_lang="es",
                                 tgt_lang="en", document=document)
    # the command refuses before loading any run
    assert run_cli(["--workspace", str(tmp_path / "none"), "translate", "--run", "tiny",
                    "--input", str(text), "--output", str(tmp_path / "x.docx")]) == 2
    assert "a Word document is written by translating a .docx --input" in \
        capsys.readouterr().err
    # a source changed since it was read is not rebuilt from the wrong paragraphs
    source = make_docx(tmp_path / "informe.docx")
    document = translation.read_document(source, "es")
    d = docx.Document(source)
    d.add_paragraph("Una más.")
    d.save(source)
    with pytest.raises(CorpusError, match="changed since it was read"):
        translation.write_export(tmp_path / "y.docx", records_of(document), src_lang="es",
                                 tgt_lang="en", document=document)
    assert not (tmp_path / "x.docx").exists() and not (tmp_path / "y.docx").exists()


def test_a_docx_whose_other_parts_unpack_to_too_much_is_not_copied(tmp_path, monkeypatch):
    """The parts copied as they are count too: 5 MB of zeros packed into a few KB (a zip
    bomb's ratio) with NMT_WB_MAX_INPUT_MB=1 is refused, naming the limit; nothing is
    written."""
    import zipfile

    source = make_docx(tmp_path / "informe.docx")
    with zipfile.ZipFile(source, "a", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("word/media/zeros.bin", bytes(5 << 20))
    document = translation.read_document(source, "es")
    monkeypatch.setenv("NMT_WB_MAX_INPUT_MB", "1")
    out = tmp_path / "informe_en.docx"
    with pytest.raises(CorpusError, match=r"other than the text unpack to 5\.\d MB.*"
                       "NMT_WB_MAX_INPUT_MB"):
        translation.write_export(out, records_of(document), src_lang="es", tgt_lang="en",
                                 document=document)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["informe.docx"]


def test_an_xliff_of_several_documents_keeps_them_apart(tmp_path, monkeypatch):
    """Each <file> is translated on its own (a context model's context never crosses
    into the next document) and comes back as its own <file>, its original name kept;
    a one-document XLIFF is translated in one piece, as before."""
    source = tmp_path / "package.xlf"
    source.write_text("""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="library.txt" source-language="es" target-language="en" datatype="plaintext">
  <body><trans-unit id="1"><source>Hola.</source></trans-unit>
   <trans-unit id="2"><source>La casa es verde.</source></trans-unit></body></file>
 <file original="ferry.txt" source-language="es" target-language="en" datatype="plaintext">
  <body><trans-unit id="1"><source>El perro come.</source></trans-unit></body></file>
</xliff>
""", encoding="utf-8")
    document = translation.read_document(source, "es")
    assert document.doc_ids == ["library.txt", "library.txt", "ferry.txt"]
    calls = []
    monkeypatch.setattr(translation, "translate", lambda session, sentences, **_: (
        calls.append(list(sentences)) or [ENGLISH[s] for s in sentences]))
    paragraphs = translation.translate_document(None, document)
    assert calls == [["Hola.", "La casa es verde."], ["El perro come."]]
    assert [p[0] for p in paragraphs] == ["Hello.", "The house is green.", "The dog eats."]
    out = tmp_path / "package_en.xlf"
    translation.write_export(out, records_of(document), src_lang="es", tgt_lang="en",
                             document=document)
    back = read_xliff(out)
    assert [(r.doc_id, r.id, r.translation) for r in back] == [
        ("library.txt", "1", "Hello."), ("library.txt", "2", "The house is green."),
        ("ferry.txt", "1", "The dog eats.")]
    calls.clear()
    one = translation.read_document(source, "es")
    one.doc_ids = None  # as a single-document source reads: one call, as before
    translation.translate_document(None, one)
    assert calls == [["Hola.", "La casa es verde.", "El perro come."]]


def test_a_comparison_keeps_the_documents_apart_and_its_events_in_their_rows(monkeypatch):
    """Compare with baseline on a several-document source: each document translated on
    its own by both runs, and the job's events say each sentence's row in the whole
    list (not in its document) and its progress over both phases."""
    from types import SimpleNamespace

    from core.jobs import RecordingContext

    calls = []

    def fake_translate(session, sentences, ctx=None, **_):
        calls.append((session.names[0], list(sentences)))
        for k, s in enumerate(sentences):
            ctx.emit("translation", index=k, translation=SimpleNamespace(text=ENGLISH[s]))
            ctx.progress(k + 1, len(sentences))
        return [SimpleNamespace(text=ENGLISH[s]) for s in sentences]

    monkeypatch.setattr(translation, "translate", fake_translate)
    sentences = ["Hola.", "La casa es verde.", "El perro come."]
    ctx = RecordingContext()
    result = translation.compare(SimpleNamespace(names=["ctx"]), SimpleNamespace(names=["base"]),
                                 sentences, ctx=ctx,
                                 doc_ids=["library.txt", "library.txt", "ferry.txt"])
    assert calls == [("ctx", sentences[:2]), ("ctx", sentences[2:]),
                     ("base", sentences[:2]), ("base", sentences[2:])]
    assert [t.text for t in result.main] == [ENGLISH[s] for s in sentences]
    for kind in ("translation", "baseline_translation"):
        events = ctx.of_kind(kind)
        assert [e.data["index"] for e in events] == [0, 1, 2]
        assert [e.data["translation"].text for e in events] == [ENGLISH[s] for s in sentences]
    progress = [(e.data["done"], e.data["total"]) for e in ctx.of_kind("progress")]
    assert progress == [(1, 6), (2, 6), (3, 6), (4, 6), (5, 6), (6, 6)]


GERMAN_XLIFF = """<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="brief.txt" source-language="de" target-language="en" datatype="plaintext">
  <body><trans-unit id="1"><source>Das Haus ist gr\u00fcn.</source></trans-unit></body></file>
</xliff>
"""

MEMORY = """<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header srclang="fr" datatype="plaintext" segtype="sentence"
 adminlang="en" o-tmf="x" creationtool="t" creationtoolversion="1"/><body>
 <tu tuid="1"><tuv xml:lang="fr"><seg>La maison est verte.</seg></tuv>
  <tuv xml:lang="en-GB"><seg>The house is green.</seg></tuv></tu>
</body></tmx>
"""


def test_a_tmx_or_xliff_in_another_language_than_the_run_reads_is_refused(tmp_path):
    """The languages a TMX / XLIFF declares are kept; a run that translates from another
    language is refused with what to do; a TMX is read from the run's side where the
    memory has it (the header's source otherwise)."""
    german = tmp_path / "brief.xlf"
    german.write_text(GERMAN_XLIFF, encoding="utf-8")
    document = translation.read_document(german, "es")
    assert document.src_langs == ("de",) and document.sentences == ["Das Haus ist gr\u00fcn."]
    with pytest.raises(ConfigError, match="brief.xlf says its source text is in 'de', but run "
                       "'tatoeba-luong' translates from 'es': choose a run that translates "
                       "from 'de'"):
        translation.check_document_language(document, "es", "tatoeba-luong")
    translation.check_document_language(document, "de", "r")  # its own language passes
    translation.check_document_language(document, "xx", "imported")  # unknown: passes
    memory = tmp_path / "memory.tmx"
    memory.write_text(MEMORY, encoding="utf-8")
    english = translation.read_document(memory, "en")  # the English side, en-GB
    assert english.sentences == ["The house is green."] and english.src_langs == ("en",)
    translation.check_document_language(english, "en", "r")
    spanish = translation.read_document(memory, "es")  # no Spanish side: the header's
    assert spanish.sentences == ["La maison est verte."] and spanish.src_langs == ("fr",)
    with pytest.raises(ConfigError, match="memory.tmx says its source text is in 'fr'"):
        translation.check_document_language(spanish, "es", "r")
    plain = tmp_path / "plain.txt"
    plain.write_text("Das Haus ist gr\u00fcn.\n", encoding="utf-8")
    assert translation.read_document(plain, "es").src_langs == ()  # a text says nothing


def test_translate_refuses_a_document_in_another_language(tmp_path, capsys):
    from core.services.demo import ensure_demo_workspace

    root = ensure_demo_workspace(tmp_path / "demo")
    german = tmp_path / "brief.xlf"
    german.write_text(GERMAN_XLIFF, encoding="utf-8")
    out = tmp_path / "brief_en.xlf"
    assert run_cli(["--workspace", str(root), "translate", "--run", "tatoeba-luong",
                    "--document", "--input", str(german), "--output", str(out)]) != 0
    assert "brief.xlf says its source text is in 'de'" in capsys.readouterr().err
    assert not out.exists()


SPANISH_TMX = """<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header srclang="es" datatype="plaintext" segtype="sentence"
 adminlang="en" o-tmf="x" creationtool="t" creationtoolversion="1"/><body>
 <tu tuid="a7"><tuv xml:lang="es"><seg>Hola.</seg></tuv></tu>
 <tu tuid="b9"><tuv xml:lang="es"><seg>El perro come.</seg></tuv></tu>
</body></tmx>
"""


def test_a_tmx_or_xliff_input_is_read_as_segments_without_document(tmp_path, capsys):
    """`translate --input x.tmx` (no --document) translates the memory's segments, not
    its lines of XML (which it used to, markup and all), and a TMX in another language
    than the run's is refused as with --document."""
    from core.services.demo import ensure_demo_workspace
    from core.workspace.store import Workspace

    root = ensure_demo_workspace(tmp_path / "demo", models_dir=TOY_MODELS)
    memory = tmp_path / "memoria.tmx"
    memory.write_text(SPANISH_TMX, encoding="utf-8")
    with Workspace.open(root) as ws:
        session = translation.open_session(ws, ["demo-rnnsearch"])
        expected = [t.text for para in translation.translate_document(
            session, translation.read_document(memory, "es"), beam=1) for t in para]
    capsys.readouterr()
    base = ["--workspace", str(root), "translate", "--run", "demo-rnnsearch", "--beam", "1"]
    assert run_cli([*base, "--input", str(memory)]) == 0
    assert capsys.readouterr().out == f"{expected[0]}\n{expected[1]}\n"
    out = tmp_path / "memoria_en.xlf"
    assert run_cli([*base, "--input", str(memory), "--output", str(out)]) == 0
    assert [(r.id, r.source, r.translation) for r in read_xliff(out)] == [
        ("a7", "Hola.", expected[0]), ("b9", "El perro come.", expected[1])]
    german = tmp_path / "brief.xlf"
    german.write_text(GERMAN_XLIFF, encoding="utf-8")
    assert run_cli([*base, "--input", str(german)]) == 2
    assert "brief.xlf says its source text is in 'de'" in capsys.readouterr().err


def test_a_tmx_segment_not_translated_yet_is_read_with_the_others(tmp_path):
    """A memory's <tu> with only its source side is what a user wants translated: it
    used to be dropped (one of three segments read), and a memory with no target side
    at all was refused as having no languages."""
    memory = tmp_path / "partial.tmx"
    memory.write_text(SPANISH_TMX.replace(
        '<tuv xml:lang="es"><seg>Hola.</seg></tuv>',
        '<tuv xml:lang="es"><seg>Hola.</seg></tuv><tuv xml:lang="en"><seg>Hi.</seg></tuv>'),
        encoding="utf-8")
    document = translation.read_document(memory, "es")
    assert document.sentences == ["Hola.", "El perro come."]
    assert document.ids == ["a7", "b9"] and document.src_langs == ("es",)
    only = tmp_path / "only.tmx"
    only.write_text(SPANISH_TMX, encoding="utf-8")
    # read from the header's srclang when the run's language is not there
    assert translation.read_document(only, "en").sentences == ["Hola.", "El perro come."]
    nameless = tmp_path / "nameless.tmx"
    nameless.write_text(SPANISH_TMX.replace(' srclang="es"', ""), encoding="utf-8")
    with pytest.raises(CorpusError, match="no <tuv> is in 'en' and the <header> names no "
                       "srclang: add srclang="):
        translation.read_document(nameless, "en")



@pytest.mark.parametrize("srclang", ["*all*", "de"])
def test_a_tmx_with_no_side_to_read_names_the_languages_it_holds(tmp_path, srclang):
    """A memory in neither the run's language nor its header's srclang (TMX's '*all*',
    or a language none of its <tuv>s is in) is one error naming the languages it does
    hold: it read as a document of no sentences, which translate then called empty."""
    memory = tmp_path / "memoria.tmx"
    memory.write_text(SPANISH_TMX.replace(' srclang="es"', f' srclang="{srclang}"'),
                      encoding="utf-8")
    with pytest.raises(CorpusError, match=f"no <tuv> is in 'en' or in the header's srclang "
                       f"'{re.escape(srclang)}': it holds es; translate it with a run from es"):
        translation.read_document(memory, "en")

def test_an_input_with_no_text_is_refused_and_nothing_is_written(tmp_path, capsys):
    """An empty or blank-only input (file or stdin) is one error line naming it, and no
    output file appears (it used to write an empty XLIFF and say 'wrote 0
    translations'); a document of an unknown suffix names every suffix it could be."""
    from core.services.demo import ensure_demo_workspace

    root = ensure_demo_workspace(tmp_path / "demo", models_dir=TOY_MODELS)
    base = ["--workspace", str(root), "translate", "--run", "demo-rnnsearch", "--beam", "1"]
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n\n", encoding="utf-8")
    out = tmp_path / "blank_en.xlf"
    assert run_cli([*base, "--input", str(blank), "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"error: {blank}: no text to translate (empty, or blank lines only): " \
                      "nothing was written"
    assert not out.exists()
    notes = tmp_path / "notes.es"
    notes.write_text("Hola.\n", encoding="utf-8")
    assert run_cli([*base, "--document", "--input", str(notes)]) == 2
    assert "cannot read .es as a document: open a .txt, .md, .docx, .tmx, .xlf, .xliff " \
           "file" in capsys.readouterr().err
