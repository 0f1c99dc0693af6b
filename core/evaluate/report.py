"""Result tables written as CSV, Markdown or JSON (atomically)."""
from __future__ import annotations

import base64
import csv
import html
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import write_text_atomic
from core.errors import ConfigError
from core.infer.decoding import KEYS, setting_text


@dataclass
class Table:
    """A titled table: column names and rows of plain values (str, int, float, None)."""

    columns: list[str]
    rows: list[list[Any]]
    title: str = ""
    notes: list[str] = field(default_factory=list)  # e.g. sacrebleu signatures
    # column -> format of its floats in Markdown/HTML (".2f" by default), e.g. AER % ".1f"
    formats: dict[str, str] = field(default_factory=dict)

    def _text(self, column: str, v: Any) -> str:
        if v is None:
            return "–"
        return format(v, self.formats.get(column, ".2f")) if isinstance(v, float) else str(v)

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts keyed by column name."""
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]

    def to_csv(self) -> str:
        """The columns and rows as CSV text (None cells empty); title and notes are left out."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for r in self.rows:
            w.writerow(["" if v is None else v for v in r])
        return buf.getvalue()

    def to_markdown(self) -> str:
        """A '### title' heading (when titled), a Markdown table (pipes escaped) and the notes."""
        def cell(v: Any, column: str = "") -> str:
            return self._text(column, v).replace("|", "\\|").replace("\n", " ")

        lines = [f"### {self.title}", ""] if self.title else []
        lines.append("| " + " | ".join(cell(c) for c in self.columns) + " |")
        lines.append("|" + "|".join(" --- " for _ in self.columns) + "|")
        lines += ["| " + " | ".join(cell(v, c) for c, v in zip(self.columns, r, strict=True))
                  + " |" for r in self.rows]
        lines += [""] + [f"{n}" for n in self.notes] if self.notes else []
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        """{'title', 'columns', 'rows' (as records), 'notes'} as indented JSON text."""
        return json.dumps({"title": self.title, "columns": self.columns,
                           "rows": self.records(), "notes": self.notes},
                          ensure_ascii=False, indent=2) + "\n"

    def to_html(self) -> str:
        """An HTML fragment: <h2> title, <table>, notes as <p>."""
        def cell(v: Any, column: str = "") -> str:
            return html.escape(self._text(column, v))

        out = [f"<h2>{html.escape(self.title)}</h2>"] if self.title else []
        out.append("<table>\n<tr>" + "".join(f"<th>{cell(c)}</th>" for c in self.columns)
                   + "</tr>")
        out += ["<tr>" + "".join(f"<td>{cell(v, c)}</td>" for c, v in zip(self.columns, r, strict=True))
                + "</tr>" for r in self.rows]
        out.append("</table>")
        out += [f"<p>{html.escape(n)}</p>" for n in self.notes]
        return "\n".join(out) + "\n"

    def save(self, path: str | Path, fmt: str | None = None) -> Path:
        """Write as `fmt` ('csv', 'md', 'json'), by default from the file suffix."""
        fmt = (fmt or Path(path).suffix.lstrip(".")).lower()
        writers = {"csv": self.to_csv, "md": self.to_markdown, "markdown": self.to_markdown,
                   "json": self.to_json, "html": self.to_html}
        if fmt not in writers:
            raise ConfigError(f"{path}: unknown report format {fmt!r}: use .csv, .md, .json or .html")
        return write_text_atomic(path, writers[fmt]())


#: a system whose evaluation was stored before the settings were
NOT_RECORDED = "not recorded"


def decoding_table(decoding: Mapping[str, Mapping[str, Any] | None]) -> Table:
    """'Decoding settings': one row per system ({name: core.infer.decoding settings,
    or None where they were not recorded}), one column per setting."""

    keys = list(KEYS) + sorted({k for s in decoding.values() if s for k in s} - set(KEYS))
    rows = [[name, *([setting_text(s[k]) if k in s else "–" for k in keys] if s
                     else [NOT_RECORDED] + [None] * (len(keys) - 1))]
            for name, s in decoding.items()]
    return Table(["system", *keys], rows, "Decoding settings")


def write_html_report(path: str | Path, tables: list[Table], title: str = "Evaluation report",
                      figures: Sequence[tuple[str, bytes]] = (),
                      decoding: Mapping[str, Mapping[str, Any] | None] | None = None) -> Path:
    """One self-contained HTML page holding the tables and the figures, (caption, PNG
    bytes) embedded as data: URIs, atomically. `decoding` ({system: settings}, see
    decoding_table): how each system translated, in the page's header."""
    header = decoding_table(decoding).to_html() if decoding else ""
    body = "\n".join(t.to_html() for t in tables)
    for caption, png in figures:
        data = base64.b64encode(png).decode("ascii")
        body += (f"<figure><img alt=\"{html.escape(caption)}\" src=\"data:image/png;base64,"
                 f"{data}\"><figcaption>{html.escape(caption)}</figcaption></figure>\n")
    page = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(title)}</title>\n<style>table{{border-collapse:collapse}}"
            "td,th{border:1px solid #999;padding:2px 6px;text-align:right}</style></head>\n"
            f"<body>\n<header>\n<h1>{html.escape(title)}</h1>\n{header}</header>\n{body}"
            "</body></html>\n")
    return write_text_atomic(path, page)
