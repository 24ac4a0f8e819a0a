from __future__ import annotations

import os
import sys
from pathlib import Path

# Windows open on a dummy video driver in tests (no display on CI).
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
sys.path.insert(0, str(Path(__file__).parent))
