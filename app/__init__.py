"""Qt desktop application over core/."""
