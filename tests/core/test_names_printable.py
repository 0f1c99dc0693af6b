"""Names and text from the workspace reach the terminal without control characters
(#13 item 5)."""
from __future__ import annotations

import pytest

from core.cli import run_cli
from core.errors import StoreError
from core.textsafe import printable, unprintable_chars


def test_printable_escapes_control_and_bidi_characters():
    assert printable("plain café") == "plain café"
    assert printable("a\x1b[31mred\nb\u202ec\x00") == "a\\x1b[31mred\\nb\\u202ec\\x00"
    assert printable("x\ty", keep="\t") == "x\ty"
    assert unprintable_chars("a\nb\n\x1b") == ["\\n", "\\x1b"]


@pytest.mark.parametrize("name", ["evil\x1b[2J", "two\nlines", "rtl\u202eexe", "nul\x00"])
def test_new_names_with_control_characters_are_refused(workspace, name):
    corpus = workspace.load_corpus("demo")
    with pytest.raises(StoreError, match="control characters"):
        workspace.add_corpus(corpus, name=name)
    with pytest.raises(StoreError, match="control characters"):
        workspace.create_run(name, {"model": {}}, "demo")


def test_corpus_list_and_show_escape_what_is_stored(workspace, capsys):
    with workspace._write() as conn:  # a name stored by an older version
        conn.execute("UPDATE corpora SET name = ? WHERE id = 1", ("demo\x1b]0;pwned\x07\nfake",))
    with workspace._write() as conn:
        conn.execute("INSERT INTO runs (name, config, created) VALUES ('ok', '{}', 0)")
    assert run_cli(["--workspace", str(workspace.root), "corpus", "list"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "demo\\x1b]0;pwned\\x07\\nfake" in out and len(out.strip().splitlines()) == 2
    # an error message naming it stays one line
    assert run_cli(["--workspace", str(workspace.root), "corpus", "show", "nope"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1
