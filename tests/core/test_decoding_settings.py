"""The decoding settings (core.infer.decoding) travel with what a translation writes:
TMX header props, XLIFF header tool and notes, each JSON line's meta["decoding"]; the
project's own readers read those files back, the settings equal to what was used."""
from __future__ import annotations

import json

import pytest

from core.cli import run_cli
from core.formats.export import read_translations, write_translations
from core.formats.records import TranslationRecord
from core.infer.decoding import KEYS, decoding_settings
from core.infer.session import TranslationSession
from core.workspace.store import Workspace
from tests.core.conftest import train_tiny_demo_run

SETTINGS = {"runs": ["luong-a", "luong-b"], "checkpoints": ["best-00000400.pt", "last.pt"],
            "steps": [400, 512], "beam": 7, "length_penalty": 0.6, "precision": "bf16",
            "device": "cpu", "shortlist": "50,100", "unk_replace": True,
            "target_context": False}
PAIRS = [("Hola.", "Hello."), ("Ça coûte 5 € <b>", "It costs €5 <b>")]


@pytest.mark.parametrize("name", ["out.tmx", "out.xlf", "out.jsonl"])
def test_an_export_holds_the_settings_and_reads_back(tmp_path, name):
    records = [TranslationRecord(s, t, meta={"edited": True} if k else {})
               for k, (s, t) in enumerate(PAIRS)]
    [path] = write_translations(tmp_path / name, records, src_lang="es", tgt_lang="en",
                                decoding=SETTINGS)
    back = read_translations(path)
    assert [(r.source, r.translation) for r in back] == PAIRS
    assert [r.meta["decoding"] for r in back] == [SETTINGS, SETTINGS]
    assert list(back[0].meta["decoding"]) == list(SETTINGS)  # the order kept
    raw = path.read_text(encoding="utf-8")
    if name.endswith(".tmx"):
        assert '<prop type="x-decoding-beam">7</prop>' in raw
        assert '<prop type="x-decoding-runs">["luong-a", "luong-b"]</prop>' in raw
    elif name.endswith(".xlf"):
        assert '<tool tool-id="nmt-workbench" tool-name="NMT Attention Workbench"' in raw
        assert '<note from="x-decoding-length_penalty">0.6</note>' in raw
    else:  # one whole record per line, the settings in each
        lines = [json.loads(line) for line in raw.splitlines()]
        assert len(lines) == 2 and lines[1]["meta"] == {"edited": True, "decoding": SETTINGS}


def test_exports_without_settings_have_none_and_foreign_notes_are_left_out(tmp_path):
    [tmx] = write_translations(tmp_path / "a.tmx", ["Hola."], ["Hello."], src_lang="es",
                               tgt_lang="en")
    assert "x-decoding" not in tmx.read_text(encoding="utf-8")
    assert read_translations(tmx)[0].meta == {}
    xlf = tmp_path / "b.xlf"
    xlf.write_text(
        '<?xml version="1.0"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:'
        'document:1.2"><file original="a" source-language="es" target-language="en" '
        'datatype="plaintext"><header><note from="reviewer">check row 2</note>'
        '<note from="x-decoding-beam">4</note><note from="x-decoding-runs">by hand'
        '</note></header><body><trans-unit id="1"><source>Hola.</source><target>Hello.'
        '</target><note from="x-decoding-beam">9</note></trans-unit></body></file>'
        '</xliff>\n', encoding="utf-8")
    [record] = read_translations(xlf)
    assert (record.source, record.translation) == ("Hola.", "Hello.")
    assert record.meta == {"decoding": {"beam": 4, "runs": "by hand"}}


@pytest.fixture(scope="module")
def tiny_ws(tmp_path_factory):
    return train_tiny_demo_run(tmp_path_factory.mktemp("decoding") / "ws", steps=3,
                               dev_sample=4)


def test_the_translate_command_records_the_settings_it_used(tiny_ws, tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("Hola.\nLa casa es verde.\n", encoding="utf-8")
    with Workspace.open(tiny_ws) as ws:
        session = TranslationSession.open(ws, ["tiny"])
    used = {"runs": ["tiny"], "checkpoints": [session.first.checkpoint.name],
            "steps": [session.first.step], "beam": 3, "length_penalty": 0.0,
            "precision": "fp32", "device": "cpu", "shortlist": None, "unk_replace": True,
            "target_context": False}
    assert used["steps"] == [3]
    assert decoding_settings(session, beam=3, unk_replace=True) == used
    assert tuple(used) == KEYS
    for name in ("out.tmx", "out.xlf", "out.jsonl"):
        out = tmp_path / name
        assert run_cli(["--workspace", str(tiny_ws), "translate", "--run", "tiny", "--beam",
                        "3", "--unk-replace", "--input", str(inp), "--output", str(out)]) == 0
        back = read_translations(out)
        assert [r.source for r in back] == ["Hola.", "La casa es verde."]
        assert [r.meta["decoding"] for r in back] == [used, used], name


def header_tables(page: str) -> list[list[list[str]]]:
    """The tables inside an HTML report's <header>, as rows of cell texts."""
    import re
    from html import unescape

    head = page[page.index("<header>"):page.index("</header>")]
    return [[[unescape(cell) for cell in re.findall(r"<t[dh]>(.*?)</t[dh]>", row)]
             for row in re.findall(r"<tr>(.*?)</tr>", table)]
            for table in re.findall(r"<table>(.*?)</table>", head, re.S)]


def test_the_evaluation_report_says_how_each_system_decoded(tiny_ws, tmp_path, capsys):
    report = tmp_path / "report.html"
    assert run_cli(["--workspace", str(tiny_ws), "evaluate", "--run", "tiny", "--test", "test",
                    "--beam", "2", "--max-sentences", "4", "--report", str(report)]) == 0
    capsys.readouterr()
    with Workspace.open(tiny_ws) as ws:
        checkpoint = TranslationSession.open(ws, ["tiny"]).first.checkpoint.name
        stored = ws.evaluations(ws.run_id("tiny"))[-1].metrics["decoding"]
    [table] = header_tables(report.read_text(encoding="utf-8"))
    assert table[0] == ["system", *KEYS]
    assert table[1] == ["tiny", "tiny", checkpoint, "3", "2", "0.0", "fp32", "cpu", "none",
                        "no", "no"]
    assert stored["beam"] == 2 and stored["checkpoints"] == [checkpoint]
    md = tmp_path / "report.md"
    assert run_cli(["--workspace", str(tiny_ws), "evaluate", "--run", "tiny", "--test", "test",
                    "--beam", "2", "--max-sentences", "4", "--report", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert text.index("### Decoding settings") < text.index("BLEU")
    assert f"| tiny | tiny | {checkpoint} | 3 | 2 | 0.0 | fp32 | cpu | none | no | no |" in text
