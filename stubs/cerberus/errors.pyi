class ErrorDefinition:
    code: int
    rule: str | None
    def __init__(self, code: int, rule: str | None) -> None: ...

REGEX_MISMATCH: ErrorDefinition
UNKNOWN_FIELD: ErrorDefinition
CUSTOM: ErrorDefinition

class ValidationError:
    document_path: tuple[str | int, ...]
    schema_path: tuple[str | int, ...]
    code: int
    rule: str | None
    constraint: object
    value: object
    info: tuple[object, ...]
    @property
    def child_errors(self) -> list[ValidationError] | None: ...
    @property
    def is_group_error(self) -> bool: ...
