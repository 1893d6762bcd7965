"""Test-wide setup: litellm must never try to fetch its cost map over the network."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
