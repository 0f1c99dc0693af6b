"""Translation exports: plain text, Moses, TSV (text.py), TMX 1.4 (tmx.py), XLIFF 1.2
(xliff.py), JSON lines (jsonl.py). Word alignments (Pharaoh/TALP/WPT) live in
core/evaluate/alignment.py."""
