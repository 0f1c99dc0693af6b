"""The service layer: what the CLI and the GUI both do, once, without Qt.

Each module takes a Workspace (or sessions) and plain values and returns typed results;
`core/cli/*` turns argparse into calls and prints, `app/` runs the same calls in jobs.
"""
