"""`attend spec schema`: the JSON Schema of spec v1, for editors."""

from __future__ import annotations

import json
import sys
from typing import Any

from attend.spec.jsonschema import json_schema


def main(args: Any) -> int:
    """The `attend spec schema` handler: print the JSON Schema."""
    sys.stdout.write(json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n")
    return 0
