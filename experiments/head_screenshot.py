"""Screenshot of the Attention screen: a run's attention beside its alignment head on a
WPT-03 gold pair (experiments/RESULTS.md, section E, fifth session).

    xvfb-run -s "-screen 0 1700x1000x24" python experiments/head_screenshot.py \\
        --workspace /tmp/ref-ws-hansards --runs ref-hansards-guided-w2 ref-hansards-head-w2 \\
        --gold ../shared/data/gold-en-fr-wpt03-trial --pair 5 --out docs/screenshots/x.png

The gold set is imported into the workspace as 'wpt03-trial' when it is not there yet.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--runs", nargs="+", required=True)
    ap.add_argument("--gold", type=Path, required=True, help="folder with trial.en/.fr/.talp")
    ap.add_argument("--pair", type=int, default=0)
    ap.add_argument("--size", default="1600x900")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow, apply_style
    from app.screenshots import shoot, wait
    from core.evaluate.goldsets import import_gold_set, list_gold_sets
    from core.workspace.store import Workspace

    with Workspace.open(args.workspace, create=False) as ws:
        if "wpt03-trial" not in [g.name if hasattr(g, "name") else g
                                 for g in list_gold_sets(ws)]:
            g = args.gold
            import_gold_set(ws, "wpt03-trial", g / "trial.en", g / "trial.fr", g / "trial.talp",
                            fmt="talp", src_lang="en", tgt_lang="fr")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    apply_style(app)
    window = MainWindow(args.workspace)
    width, height = (int(x) for x in args.size.split("x"))
    window.resize(width, height)
    window.show()
    ids = [window.workspace.run_id(r) for r in args.runs]
    att = window.attention
    window.tabs.setCurrentWidget(att)
    att.models.set_checked(ids)
    att.pair_source.setCurrentText("Gold set")
    att.gold_set.setCurrentText("wpt03-trial")
    wait(app, att.load_pairs())
    wait(app, att.compute())
    att.pair_list.setCurrentRow(args.pair)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    shot = shoot(app, window, args.out.parent, args.out.stem)
    window.close()
    print(f"wrote {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
