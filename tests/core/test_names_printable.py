"""Names and text from the workspace reach the terminal without control characters."""
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


def test_names_have_a_length_limit_and_lists_cut_long_stored_ones(workspace, capsys):
    """A 5,000-character run name widened every `runs list` row (round 2, item 9): new
    names over 200 characters are refused; one stored before is cut in the lists (its
    whole self kept in the database and in --json)."""
    corpus = workspace.load_corpus("demo")
    long = "r" * 5000
    with pytest.raises(StoreError, match=r"a run name may have 200 characters \(the limit\), "
                                         r"this one has 5,000"):
        workspace.create_run(long, {"model": {}}, "demo")
    with pytest.raises(StoreError, match=r"a corpus name may have 200 characters \(the limit\)"):
        workspace.add_corpus(corpus, name="c" * 201)
    run_id = workspace.create_run("r" * 200, {"model": {}}, "demo")
    with pytest.raises(StoreError, match=r"may have 200 characters"):
        workspace.update_run(run_id, name="s" * 201)
    with workspace._write() as conn:  # stored by an older version
        conn.execute("UPDATE runs SET name = ? WHERE id = ?", (long, run_id))
    workspace.create_run("short", {"model": {}}, "demo")
    assert run_cli(["--workspace", str(workspace.root), "runs", "list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and max(len(x) for x in lines) < 200
    assert "r" * 59 + "…" in lines[1] + lines[2] and "r" * 60 not in "".join(lines)
    assert run_cli(["--workspace", str(workspace.root), "runs", "list", "--json"]) == 0
    assert long in capsys.readouterr().out
