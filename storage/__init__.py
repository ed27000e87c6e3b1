"""Database helpers every app may use and that know no app: statements sent together (`storage.batch`) and
append-only models (`storage.append_only`). The bottom of the import layers, beside `cards`."""
