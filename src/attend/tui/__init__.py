"""The sensors tab (`attend tui`): a Textual app over the same functions the CLI calls (ADR-403 §5).

`attend.tui.SensorsApp(project_dir)` is the public entry point; its sensor list is a `DataTable` with
id `sensors` whose row keys are sensor names. Importing this package imports textual, so only the
`tui` command does (the CLI and the lint path never import it).
"""

from attend.tui.app import SensorsApp

__all__ = ["SensorsApp"]
