# Types for the part of cerberus attend uses (cerberus ships neither types nor stubs); read by mypy only
# (pyproject.toml: mypy_path). spec/validate/shape.py subclasses Validator; tests/spec/test_schema.py
# checks the schema with it.
from collections.abc import Mapping
from typing import NamedTuple

from cerberus import errors as errors
from cerberus.errors import ValidationError

class TypeDefinition(NamedTuple):
    name: str
    included_types: tuple[type, ...]
    excluded_types: tuple[type, ...]

class Validator:
    types_mapping: dict[str, TypeDefinition]
    _errors: list[ValidationError]
    def __init__(self, schema: Mapping[str, object] | None = ..., **kwargs: object) -> None: ...
    def validate(
        self, document: Mapping[str, object], schema: Mapping[str, object] | None = ..., update: bool = ...,
        normalize: bool = ...,
    ) -> bool: ...
    def _error(self, field: str, code: str | errors.ErrorDefinition, /, *args: object) -> None: ...
