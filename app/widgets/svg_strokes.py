"""SVG strokes that keep their width under a scaled transform, for every renderer.

pyqtgraph draws its lines, bars and markers in data coordinates (a cell of a heatmap is
1 x 1) under the view's scaling, with cosmetic pens (a width in pixels). QSvgGenerator
writes such a shape as `vector-effect="non-scaling-stroke"` under the scaling
transform; Qt and browsers honour it, librsvg (rsvg-convert, GNOME viewers) does not
and strokes it 1 data unit wide: a marker's outline covers its cell. Here each such
shape gets its coordinates in the page's units and the inverse of the transforms
above it, so it is drawn unscaled and its stroke is right even where vector-effect
is ignored.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
Matrix = tuple[float, float, float, float, float, float]  # SVG's matrix(a, b, c, d, e, f)
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_KAPPA = 0.5522847498  # cubic Bezier control distance for a quarter circle


def flatten_non_scaling_strokes(svg: bytes) -> bytes:
    """`svg` (QSvgGenerator's output) with every non-scaling-stroke shape under a
    transform rewritten in page coordinates; unchanged where there is none."""
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(svg)
    if not _flatten(root, IDENTITY):
        return svg
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _flatten(element: ET.Element, ctm: Matrix) -> bool:
    """Rewrite the shapes under `element` (whose parents' transform is `ctm`); True
    when something changed."""
    changed = False
    for child in element:
        own = _parse_matrix(child.get("transform"))
        if own is None:  # a transform written otherwise than matrix(): left alone
            continue
        here = _multiply(ctm, own)
        if child.get("vector-effect") == "non-scaling-stroke" and here != IDENTITY:
            changed |= _to_page(child, here, ctm)
        else:
            changed |= _flatten(child, here)
    return changed


def _to_page(shape: ET.Element, ctm: Matrix, parents: Matrix) -> bool:
    """Give `shape` page coordinates (its points mapped by `ctm`, its parents' and its
    own transform) and, as its transform, the inverse of its parents' `parents`."""
    inverse = _invert(parents)
    path = _shape_path(shape)
    if inverse is None or path is None:
        return False
    tag = shape.tag.split("}")[-1]
    if tag == "polyline" or tag == "polygon":
        shape.set("points", " ".join(f"{x:.6g},{y:.6g}" for x, y in _apply(ctm, path)))
    else:
        for name in ("x", "y", "width", "height", "cx", "cy", "r", "rx", "ry"):
            shape.attrib.pop(name, None)
        shape.tag = f"{{{SVG_NS}}}path"
        shape.set("d", _transformed_d(path, ctm))
    shape.set("transform", "matrix({})".format(",".join(f"{v + 0.0:.9g}" for v in inverse)))
    return True


def _shape_path(shape: ET.Element) -> list | None:
    """The shape as [(command, [(x, y), ...]), ...] with M, L, C, Z (absolute), or its
    points for a polyline/polygon; None for what this module does not rewrite."""
    tag = shape.tag.split("}")[-1]
    num = lambda name: float(shape.get(name, "0"))  # noqa: E731
    if tag in ("polyline", "polygon"):
        values = [float(v) for v in re.findall(_NUMBER, shape.get("points", ""))]
        return list(zip(values[::2], values[1::2], strict=True)) if len(values) % 2 == 0 else None
    if tag == "path":
        return _parse_d(shape.get("d", ""))
    if tag == "rect" and shape.get("rx") is None and shape.get("ry") is None:
        x, y, w, h = num("x"), num("y"), num("width"), num("height")
        return [("M", [(x, y)]), ("L", [(x + w, y)]), ("L", [(x + w, y + h)]),
                ("L", [(x, y + h)]), ("Z", [])]
    if tag == "line":
        return [("M", [(num("x1"), num("y1"))]), ("L", [(num("x2"), num("y2"))])]
    if tag in ("circle", "ellipse"):
        rx = num("r") if tag == "circle" else num("rx")
        ry = num("r") if tag == "circle" else num("ry")
        return _ellipse(num("cx"), num("cy"), rx, ry)
    return None


def _parse_d(d: str) -> list | None:
    """QSvgGenerator's path data (absolute M, L, C and Z) as commands with points."""
    tokens = re.findall(rf"[A-Za-z]|{_NUMBER}", d)
    out: list = []
    for token in tokens:
        if token.isalpha():
            if token not in "MLCZ":
                return None
            out.append((token, []))
        elif not out:
            return None
        else:
            out[-1][1].append(float(token))
    path = []
    for command, values in out:
        if len(values) % 2 or (command == "Z") != (not values):
            return None
        path.append((command, list(zip(values[::2], values[1::2], strict=True))))
    return path


def _ellipse(cx: float, cy: float, rx: float, ry: float) -> list:
    k, path = _KAPPA, [("M", [(cx + rx, cy)])]
    for (x0, y0), (x1, y1) in (((1, 0), (0, 1)), ((0, 1), (-1, 0)), ((-1, 0), (0, -1)),
                               ((0, -1), (1, 0))):
        path.append(("C", [(cx + rx * (x0 + k * x1), cy + ry * (y0 + k * y1)),
                           (cx + rx * (x1 + k * x0), cy + ry * (y1 + k * y0)),
                           (cx + rx * x1, cy + ry * y1)]))
    return path + [("Z", [])]


def _transformed_d(path: list, m: Matrix) -> str:
    parts = []
    for command, points in path:
        parts.append(command + " ".join(f"{x:.6g},{y:.6g}" for x, y in _apply(m, points)))
    return " ".join(parts)


def _apply(m: Matrix, points) -> list[tuple[float, float]]:
    a, b, c, d, e, f = m
    return [(a * x + c * y + e, b * x + d * y + f) for x, y in points]


def _parse_matrix(text: str | None) -> Matrix | None:
    if not text:
        return IDENTITY
    found = re.fullmatch(rf"\s*matrix\(\s*((?:{_NUMBER}[\s,]*){{6}})\)\s*", text)
    if found is None:
        return None
    return tuple(float(v) for v in re.findall(_NUMBER, found.group(1)))  # type: ignore[return-value]


def _multiply(outer: Matrix, inner: Matrix) -> Matrix:
    """The transform of `inner` applied first, then `outer`."""
    a1, b1, c1, d1, e1, f1 = outer
    a2, b2, c2, d2, e2, f2 = inner
    return (a1 * a2 + c1 * b2, b1 * a2 + d1 * b2, a1 * c2 + c1 * d2, b1 * c2 + d1 * d2,
            a1 * e2 + c1 * f2 + e1, b1 * e2 + d1 * f2 + f1)


def _invert(m: Matrix) -> Matrix | None:
    a, b, c, d, e, f = m
    det = a * d - b * c
    if abs(det) < 1e-12:
        return None
    return (d / det, -b / det, -c / det, a / det, (c * f - d * e) / det, (b * e - a * f) / det)
