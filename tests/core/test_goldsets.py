"""Gold alignment sets in a workspace (core.evaluate.goldsets): import, store, load, validate."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import AlignmentError, ConfigError, StoreError
from core.evaluate.goldsets import (
    delete_gold_set,
    gold_set_for,
    gold_set_languages,
    import_gold_set,
    list_gold_sets,
    load_gold_set,
)
from core.workspace.store import Workspace

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


@pytest.fixture
def ws(tmp_path):
    with Workspace.open(tmp_path / "ws") as w:
        yield w


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_import_and_load_round_trip(ws, tmp_path):
    src = write(tmp_path / "s", ["¿Dónde está ?", "Hola"])
    tgt = write(tmp_path / "t", ["Where is it ?", "Hello"])
    links = write(tmp_path / "l", ["0-0 1-1 1?2 2-3", "0-0"])
    imported = import_gold_set(ws, "g1", src, tgt, links, src_lang="es", tgt_lang="en")
    assert list_gold_sets(ws) == ["g1"]
    gold = load_gold_set(ws, "g1")
    assert gold.src_tokens == [["¿Dónde", "está", "?"], ["Hola"]]
    assert gold.tgt_tokens == [["Where", "is", "it", "?"], ["Hello"]]
    assert gold.alignments[0].sure == {(0, 0), (1, 1), (2, 3)}
    assert gold.alignments[0].possible == {(0, 0), (1, 1), (1, 2), (2, 3)}
    assert gold.alignments[1].sure == {(0, 0)}
    assert (gold.src_lang, gold.tgt_lang) == ("es", "en")
    assert gold.n_sure == imported.n_sure == 4 and gold.n_possible == 5
    stored = (ws.root / "gold" / "g1" / "links.pharaoh").read_text(encoding="utf-8")
    assert stored == "0-0 1-1 1?2 2-3\n0-0\n"


def test_one_based_swapped_talp_links_are_turned_round(ws, tmp_path):
    # English first and 1-based: 'e-f' where e indexes the target side of an es->en set
    src = write(tmp_path / "s", ["a b c"])
    tgt = write(tmp_path / "t", ["x y"])
    links = write(tmp_path / "l", ["1-3 2p1"])
    import_gold_set(ws, "talp", src, tgt, links, fmt="talp", swap=True)
    al = load_gold_set(ws, "talp").alignments[0]
    assert al.sure == {(2, 0)}
    assert al.possible == {(2, 0), (0, 1)}


def test_wpt_sentences_without_links_keep_their_place(ws, tmp_path):
    src = write(tmp_path / "s", ["a b", "c", "d e"])
    tgt = write(tmp_path / "t", ["x", "y", "z w"])
    links = write(tmp_path / "l", ["0001 1 1 S", "0003 2 1 P", "0003 1 2"])
    gold = import_gold_set(ws, "wpt", src, tgt, links, fmt="wpt")
    assert [a.sure for a in gold.alignments] == [{(0, 0)}, set(), {(0, 1)}]
    assert gold.alignments[2].possible == {(0, 1), (1, 0)}


def test_out_of_range_link_names_sentence_and_link_and_writes_nothing(ws, tmp_path):
    src = write(tmp_path / "s", ["a b", "c d e"])
    tgt = write(tmp_path / "t", ["x y", "z"])
    links = write(tmp_path / "l", ["0-0 1-1", "0-0 3-0"])
    with pytest.raises(AlignmentError) as err:
        import_gold_set(ws, "bad", src, tgt, links)
    assert err.value.line == 2
    assert "sentence 2" in str(err.value) and "'3-0'" in str(err.value)
    assert list_gold_sets(ws) == []
    assert not (ws.root / "gold" / "bad").exists()


def test_line_counts_must_match_and_names_are_unique(ws, tmp_path):
    src = write(tmp_path / "s", ["a", "b"])
    tgt = write(tmp_path / "t", ["x", "y"])
    with pytest.raises(AlignmentError, match="1 sentences of links but 2"):
        import_gold_set(ws, "short", src, tgt, write(tmp_path / "l", ["0-0"]))
    links = write(tmp_path / "l2", ["0-0", "0-0"])
    import_gold_set(ws, "ok", src, tgt, links)
    with pytest.raises(ConfigError, match="already exists"):
        import_gold_set(ws, "ok", src, tgt, links)
    with pytest.raises(ConfigError, match="no gold set named 'nope'"):
        load_gold_set(ws, "nope")


def test_bundled_demo_gold_set_imports_with_its_documented_counts(ws):
    # resources/demo/README.md: 56 pairs, 528 sure links, 183 possible-only links
    gold = import_gold_set(ws, "demo-gold", DEMO / "gold.es", DEMO / "gold.en",
                           DEMO / "gold.links", src_lang="es", tgt_lang="en")
    assert len(gold) == 56
    assert gold.n_sure == 528
    assert gold.n_possible == 528 + 183
    assert gold.src_tokens[0] == "Compré una mesa nueva para la cocina .".split()


def test_each_run_is_scored_on_the_gold_set_of_its_own_pair(ws, tmp_path):
    """gold_set_for: the preferred set only when its pair is the run's (either way round),
    else the first fitting set by name; a set of unknown languages only when no set
    names the run's pair; None when nothing fits."""
    src, tgt = write(tmp_path / "s", ["a b"]), write(tmp_path / "t", ["x y"])
    links = write(tmp_path / "l", ["0-0 1-1"])
    for name, langs in (("b-en-fr", ("en", "fr")), ("c-es-en", ("es", "en")),
                        ("d-en-es", ("en", "es")), ("a-unknown", ("", ""))):
        import_gold_set(ws, name, src, tgt, links, src_lang=langs[0], tgt_lang=langs[1])
    assert gold_set_for(ws, ("en", "fr")) == "b-en-fr"
    assert gold_set_for(ws, ("fr", "en")) == "b-en-fr"  # read from the other side
    assert gold_set_for(ws, ("en", "es")) == "c-es-en"  # the first by name of the two
    assert gold_set_for(ws, ("en", "es"), preferred="d-en-es") == "d-en-es"
    assert gold_set_for(ws, ("es", "en"), preferred="b-en-fr") == "c-es-en"  # not its pair
    assert gold_set_for(ws, ("de", "en")) == "a-unknown"
    assert gold_set_languages(ws, "d-en-es") == ("en", "es")
    delete_gold_set(ws, "a-unknown")
    assert gold_set_for(ws, ("de", "en")) is None
    assert list_gold_sets(ws) == ["b-en-fr", "c-es-en", "d-en-es"]
    with pytest.raises(ConfigError, match="no gold set named 'a-unknown'"):
        delete_gold_set(ws, "a-unknown")


def test_a_damaged_or_hand_copied_set_is_passed_over_not_fatal(ws, tmp_path):
    """A set whose meta.json cannot be read scores no run (the others still do) and its
    languages are a StoreError naming the file; a folder copied in by hand under a name
    an import never gives is not listed."""
    src, tgt = write(tmp_path / "s", ["a b"]), write(tmp_path / "t", ["x y"])
    links = write(tmp_path / "l", ["0-0 1-1"])
    for name in ("a-broken", "b-good"):
        import_gold_set(ws, name, src, tgt, links, src_lang="en", tgt_lang="fr")
    meta = ws.root / "gold" / "a-broken" / "meta.json"
    meta.write_text('{"src_lang": "en", ', encoding="utf-8")
    assert gold_set_for(ws, ("en", "fr")) == "b-good"
    with pytest.raises(StoreError, match=r"a-broken/meta.json: cannot be read .*remove gold "
                                         r"set 'a-broken' and import it again"):
        gold_set_languages(ws, "a-broken")
    meta.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(StoreError, match="holds a list, not a table"):
        gold_set_languages(ws, "a-broken")
    import shutil

    shutil.copytree(ws.root / "gold" / "b-good", ws.root / "gold" / "b-good copy")
    assert list_gold_sets(ws) == ["a-broken", "b-good"]
    delete_gold_set(ws, "a-broken")  # a damaged set can still be removed
    assert list_gold_sets(ws) == ["b-good"]
