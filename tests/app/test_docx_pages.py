"""The .docx round trip picture (app.docx_pages, `make screenshots`: translate-docx.webp)
draws what is in the files: the exported document's paragraphs, styles and bold runs
where the source has them, a blank paragraph as a gap."""
from __future__ import annotations

from pathlib import Path

import docx

from app.docx_pages import docx_html, page_image, round_trip_image
from app.screenshots import letter_docx
from core.formats.records import TranslationRecord
from core.services import translation
from tests.app.pictures import ink_bands

#: a stand-in translation of letter_docx's sentences (what a model would write)
ENGLISH = {"Una carta para mi hermano": "A letter for my brother",
           "Ayer compré una mesa nueva.": "Yesterday I bought a new table.",
           "Es pequeña pero muy bonita.": "It is small but very pretty.",
           "Mi hermano la trajo en su coche.": "My brother brought it in his car.",
           "Comemos allí todos los días.": "We eat there every day.",
           "Tengo que trabajar mañana.": "I have to work tomorrow.",
           "Gracias por todo.": "Thank you for everything."}


def exported_letter(tmp_path: Path) -> tuple[Path, Path]:
    source = letter_docx(tmp_path / "carta.docx")
    document = translation.read_document(source, "es")
    records = [TranslationRecord(s, ENGLISH[s]) for s in document.sentences]
    out, = translation.write_export(tmp_path / "carta_en.docx", records, src_lang="es",
                                    tgt_lang="en", document=document)
    return source, out


def test_the_exported_letter_reads_back_with_the_sources_styles_and_runs(qapp, tmp_path):
    source, out = exported_letter(tmp_path)
    before, after = docx_html(source), docx_html(out)
    # the same paragraphs, sized and bulleted alike: only the words differ
    assert before.count("<p ") == after.count("<p ") == 6
    assert after.count("font-size:17pt") == before.count("font-size:17pt") == 1
    assert after.count("&#8226;") == before.count("&#8226;") == 2
    assert after.count("&nbsp;</p>") == before.count("&nbsp;</p>") == 1  # the blank one
    # the paragraph's translation went into its first run, bold as that run is
    assert ("<b>Yesterday I bought a new table. It is small but very pretty. My brother "
            "brought it in his car.</b>") in after
    assert "<i>" in before and "<i>" not in after  # the later runs lost their text
    assert ">A letter for my brother</p>" in after
    assert docx.Document(str(out)).paragraphs[4].runs[0].text == "I have to work tomorrow."


def test_the_picture_shows_the_same_layout_of_lines_on_both_pages(qapp, tmp_path):
    source, out = exported_letter(tmp_path)
    left, right = page_image(source, "before"), page_image(out, "after")
    bands_left, bands_right = ink_bands(left), ink_bands(right)
    # caption, heading, two lines of the long paragraph, two list items, closing line
    assert len(bands_left) == len(bands_right) == 7
    heights = [b - a + 1 for a, b in bands_right]
    assert heights[1] > 1.3 * heights[-1]  # the heading is drawn larger than body text
    # the blank paragraph: the gap after the long paragraph is the widest between lines
    gaps = [bands_right[i + 1][0] - bands_right[i][1] for i in range(1, 6)]
    assert max(gaps) == gaps[2]
    both = round_trip_image(source, out, "before", "after")
    assert both.width() == left.width() + 16 + right.width()
    assert both.height() == max(left.height(), right.height())
