"""Make the guide's example plugins importable, as an installed plugin package would be."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "plugins"))
