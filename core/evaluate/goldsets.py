"""Gold word-alignment sets kept in a workspace, for AER of attention and baselines.

A gold set lives in `<workspace>/gold/<name>/`:

    src.txt, tgt.txt   the sentences, tokenised, one per line, tokens joined by spaces
    links.pharaoh      0-based Pharaoh links in the (src, tgt) orientation, `i-j` sure,
                       `i?j` possible
    meta.json          languages, counts, where the files came from and how they were read

Importing reads the links in any of the formats of core.evaluate.alignment (Pharaoh,
TALP, WPT), checks every link against the sentence lengths (an AlignmentError names
the sentence and the link) and writes the folder in one atomic step (a temporary
folder renamed into place), so a half-imported set never shows up in the list.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from core.atomic import write_text_atomic
from core.data.textio import CONVERT_TO_UTF8, decode_text, read_bytes, split_lines
from core.errors import AlignmentError, ConfigError, CorpusError, StoreError
from core.evaluate.alignment import (
    Alignment,
    AlignmentCorpus,
    read_pharaoh,
    read_talp,
    read_wpt,
    write_pharaoh,
)
from core.safepath import inside, remove_tree, within
from core.workspace.gold_folders import (
    GOLD_DIR,
    LINKS_FILE,
    META_FILE,
    SRC_FILE,
    TGT_FILE,
)
from core.workspace.store import Workspace

FORMATS = ("pharaoh", "talp", "wpt")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


#: a gold set is an alignment corpus with its tokenised sentences, name and languages:
#: GoldSet(name, src_tokens, tgt_tokens, alignments, src_lang, tgt_lang)
GoldSet = AlignmentCorpus


def gold_root(ws: Workspace) -> Path:
    """`<workspace>/gold`; `ws` is a core.workspace.store.Workspace (or anything with
    `.root`).
    StoreError when it leads outside the workspace through a link (core.safepath)."""
    return within(ws.root, GOLD_DIR, "the gold-set folder", StoreError)


def _check_name(name: str) -> str:
    name = name.strip()
    if not _NAME_RE.match(name):
        raise ConfigError(f"gold set name {name!r}: use letters, digits, '.', '_' or '-' "
                          "(starting with a letter or digit)")
    return name


def read_token_lines(path: str | Path) -> list[list[str]]:
    """One tokenised sentence per line (tokens split on whitespace). Lines end at '\\n'
    only: a U+2028 or a form feed inside a sentence is not a line break (splitting
    there made the sentence count differ and the error blame the links file)."""
    text, _ = decode_text(read_bytes(path), path, advice=CONVERT_TO_UTF8)  # no lenient mode
    return [line.split() for line in split_lines(text)]


def read_gold_links(path: str | Path, fmt: str, one_based: bool, swap: bool,
                src: list[list[str]], tgt: list[list[str]]) -> list[Alignment]:
    """Gold alignments of the sentence pairs `src`/`tgt` (token lists) from a pharaoh,
    talp or wpt file; ConfigError for another format, AlignmentError when the sentence
    counts differ. Errors about 0- or 1-based indices name `align`'s options (the one
    front that reads gold links in a chosen format)."""
    if fmt == "pharaoh":
        corpus = read_pharaoh(path, one_based=one_based, swap=swap, src_tokens=src,
                              tgt_tokens=tgt, as_zero_based="the links are 0-based: leave "
                              "out --one-based", as_one_based="give --one-based")
    elif fmt == "talp":
        corpus = read_talp(path, swap=swap, src_tokens=src, tgt_tokens=tgt,
                           as_zero_based="TALP links are 1-based, these are 0-based: give "
                           "--format pharaoh instead of --format talp")
    elif fmt == "wpt":
        # WPT files leave out sentences without links; ids are sentence numbers
        # (1-based, maybe zero-padded): sentence k gets the id that reads as k.
        seen = {int(i): i for i in (read_wpt(path).ids or []) if i.isdigit()}
        ids = [seen.get(k, str(k)) for k in range(1, len(src) + 1)]
        corpus = read_wpt(path, sent_ids=ids, swap=swap, src_tokens=src, tgt_tokens=tgt)
    else:
        raise ConfigError(f"gold link format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if len(corpus) != len(src):
        raise AlignmentError(path, None, f"{len(corpus)} sentences of links but {len(src)} "
                             "sentence pairs: the files must be line-parallel")
    return list(corpus)


def read_gold_files(src_path: str | Path, tgt_path: str | Path, links_path: str | Path,
                    fmt: str = "pharaoh", one_based: bool = False, swap: bool = False
                    ) -> tuple[list[list[str]], list[list[str]], list[Alignment]]:
    """The tokenised sentences and gold links of three gold files, checked: the sentence
    files line-parallel and not empty (CorpusError naming the files), every link inside
    its sentence pair (read_gold_links)."""
    src, tgt = read_token_lines(src_path), read_token_lines(tgt_path)
    if len(src) != len(tgt):
        raise CorpusError(tgt_path, None, f"{len(tgt)} target sentences but {len(src)} source "
                          f"sentences in {src_path}: the files must be line-parallel")
    if not src:
        raise CorpusError(src_path, None, f"holds no sentences, nor does {tgt_path}: a gold "
                          "set needs at least one sentence pair; give non-empty gold files")
    return src, tgt, read_gold_links(links_path, fmt, one_based, swap, src, tgt)


def import_gold_set(ws: Workspace, name: str, src_path: str | Path, tgt_path: str | Path,
                    links_path: str | Path, fmt: str = "pharaoh", one_based: bool = False,
                    swap: bool = False, src_lang: str = "", tgt_lang: str = "",
                    replace: bool = False) -> GoldSet:
    """Read tokenised sentences and their links, check them, store them as gold set
    `name` of workspace `ws`. `swap` turns links written target-first (e.g. English
    first) into (src, tgt) links; the sentence files are given in (src, tgt) order.
    An existing set of that name is an error unless `replace`."""
    name = _check_name(name)
    if not replace:
        _check_free(gold_root(ws) / name, name)
    src, tgt, alignments = read_gold_files(src_path, tgt_path, links_path, fmt, one_based,
                                           swap)
    gold = GoldSet(name, src, tgt, alignments, src_lang, tgt_lang)
    meta = {"name": name, "src_lang": src_lang, "tgt_lang": tgt_lang, "sentences": len(src),
            "sure": gold.n_sure, "possible": gold.n_possible, "imported": time.time(),
            "provenance": {"src": str(Path(src_path).resolve()),
                           "tgt": str(Path(tgt_path).resolve()),
                           "links": str(Path(links_path).resolve()), "format": fmt,
                           "one_based": one_based, "swap": swap}}
    _write_folder(gold_root(ws) / name, gold, meta, replace)
    return gold


def _check_free(folder: Path, name: str) -> None:
    """ConfigError when gold set `name` (its folder) exists already."""
    if folder.exists():
        raise ConfigError(f"{folder}: a gold set named {name!r} already exists; to use it, "
                          f"give --gold-set {name} without --gold-src/--gold-tgt/--gold-links, "
                          "or import the files under another --gold-set name")


def _write_folder(folder: Path, gold: GoldSet, meta: dict, replace: bool) -> None:
    """Write the set into a temporary sibling folder, then rename it into place."""
    if not replace:
        _check_free(folder, gold.name)  # again: another import may have come first
    folder.parent.mkdir(parents=True, exist_ok=True)
    # the PID in the name lets the next open of the workspace tell a killed writer's
    # folder from a live one's (recover_gold_folders)
    tmp = Path(tempfile.mkdtemp(prefix=f".{gold.name}.tmp-{os.getpid()}-", dir=folder.parent))
    try:
        write_text_atomic(tmp / SRC_FILE, "".join(" ".join(s) + "\n" for s in gold.src_tokens))
        write_text_atomic(tmp / TGT_FILE, "".join(" ".join(t) + "\n" for t in gold.tgt_tokens))
        write_pharaoh(tmp / LINKS_FILE, gold.alignments)
        write_text_atomic(tmp / META_FILE, json.dumps(meta, indent=2, ensure_ascii=False))
        os.chmod(tmp, 0o755)
        if folder.exists():  # replace: move the old one aside first
            old = folder.with_name(f".{gold.name}.old-{os.getpid()}")
            os.replace(folder, old)
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


SAME, REVERSED, NO_MATCH = "same", "reversed", "no match"


def _pair(langs: Sequence[str]) -> tuple[str, str]:
    return langs[0].strip().lower(), langs[1].strip().lower()


def gold_orientation(run_langs: Sequence[str], gold_langs: Sequence[str]) -> str:
    """How a run translating run_langs = (source, target) reads a gold set of gold_langs:
    SAME (its pairs as they are; also when a language is not known), REVERSED (the
    gold's target is the run's source: reverse_gold) or NO_MATCH (another language pair:
    its attention on these pairs means nothing)."""
    run, gold = _pair(run_langs), _pair(gold_langs)
    if not all(run + gold) or run == gold:
        return SAME
    return REVERSED if run == gold[::-1] else NO_MATCH


def orientation_note(run_langs: Sequence[str], gold_name: str, gold_langs: Sequence[str],
                     kind: str = "gold set") -> str:
    """'es -> en run; gold set wpt03-trial is en -> fr': why a run is not scored on a gold
    set (`kind` 'test split': 'es -> en run; test split demo-en-fr:test is en -> fr')."""
    return (f"{run_langs[0]} -> {run_langs[1]} run; {kind} {gold_name} is "
            f"{gold_langs[0]} -> {gold_langs[1]}")


def gold_set_languages(ws: Workspace, name: str) -> tuple[str, str]:
    """(source, target) languages gold set `name` was imported with ('' where not told);
    StoreError naming its meta.json when that cannot be read (a damaged or hand-made set)."""
    meta = read_gold_meta(ws, name)
    return str(meta.get("src_lang", "")), str(meta.get("tgt_lang", ""))


def read_gold_meta(ws: Workspace, name: str) -> dict:
    """Gold set `name`'s meta.json (languages, counts, provenance); StoreError naming the
    file and what to do when it cannot be read as a table."""
    meta_path = inside(gold_root(ws) / _check_name(name), META_FILE, "gold set meta", StoreError)
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"{meta_path}: cannot be read ({exc}); remove gold set {name!r} and "
                         "import it again") from None
    if not isinstance(meta, dict):
        raise StoreError(f"{meta_path}: holds a {type(meta).__name__}, not a table; remove "
                         f"gold set {name!r} and import it again")
    return meta


def gold_set_for(ws: Workspace, run_langs: Sequence[str], preferred: str | None = None
                 ) -> str | None:
    """The gold set a run translating run_langs = (source, target) is scored on:
    `preferred` when its pair is the run's (either way round), else the first such set
    by name; a set of unknown languages only when no set names the run's pair; None when
    no set fits (another pair's attention AER would be a number that means nothing). A
    set whose name or meta.json cannot be read is passed over."""
    names = list_gold_sets(ws)
    if preferred in names:
        names.remove(preferred)
        names.insert(0, preferred)
    known, unknown = [], []
    for name in names:
        try:
            langs = gold_set_languages(ws, name)
        except (StoreError, ConfigError):  # a damaged or hand-copied set scores no run
            continue
        if gold_orientation(run_langs, langs) == NO_MATCH:
            continue
        (known if all(_pair(langs)) and all(_pair(run_langs)) else unknown).append(name)
    found = known or unknown
    return found[0] if found else None


def list_gold_sets(ws: Workspace) -> list[str]:
    """Names of the workspace's gold sets (complete folders only, of names an import
    gives: not a half-written `.NAME.tmp-PID` nor a folder copied in by hand), sorted."""
    root = gold_root(ws)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and _NAME_RE.match(p.name) and (p / META_FILE).exists())


def load_gold_set(ws: Workspace, name: str) -> GoldSet:
    """The stored gold set `name` (links re-checked against the sentences); StoreError
    when its folder is a link out of the workspace."""
    folder = gold_root(ws) / _check_name(name)
    within(ws.root, folder, "the gold set's folder", StoreError)
    if not (folder / META_FILE).exists():
        known = ", ".join(list_gold_sets(ws)) or "none yet"
        raise ConfigError(f"{ws.root}: no gold set named {name!r} (known: {known}); import "
                          "one with `align --gold-set NAME ...` or the Attention screen's "
                          "Gold sets… button")
    def part(name: str) -> Path:  # a file of the set linked out of it is not read
        return inside(folder, name, f"gold set {name!r} file", StoreError)

    meta = read_gold_meta(ws, name)
    src, tgt = read_token_lines(part(SRC_FILE)), read_token_lines(part(TGT_FILE))
    links = read_pharaoh(part(LINKS_FILE), src_tokens=src, tgt_tokens=tgt)
    return GoldSet(name, src, tgt, list(links), meta.get("src_lang", ""),
                   meta.get("tgt_lang", ""))


def delete_gold_set(ws: Workspace, name: str) -> None:
    """Remove gold set `name` and its folder; ConfigError when there is no such set. The
    folder is first renamed aside (an OSError there leaves the set whole and listed),
    then deleted; what a kill leaves is a `.NAME.tmp-PID-removed` leftover that the next
    open of the workspace removes (core.workspace.gold_folders)."""
    folder = gold_root(ws) / _check_name(name)
    if not (folder / META_FILE).exists():
        raise ConfigError(f"{ws.root}: no gold set named {name!r}")
    aside = folder.with_name(f".{folder.name}.tmp-{os.getpid()}-removed")
    os.replace(folder, aside)  # a link is renamed itself, its target stays
    remove_tree(aside)
