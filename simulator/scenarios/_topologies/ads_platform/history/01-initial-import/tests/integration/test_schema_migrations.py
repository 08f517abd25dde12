"""The migrations in migrations/, applied in order, give a schema every service can write to.

Parses the DDL our migrations use (CREATE TABLE, ALTER TABLE ... ADD COLUMN / ADD CONSTRAINT /
DROP CONSTRAINT) and checks the foreign keys: every reference resolves, and no chain of
NOT NULL foreign keys loops back to where it started, which would leave no order to insert
rows in (every INSERT into those tables would then violate a constraint).
"""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIGRATIONS = os.path.join(ROOT, "migrations")

CREATE = re.compile(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+) ?\((.*)\)$", re.I)
ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN (?:IF NOT EXISTS )?(\w+) (.*)$", re.I)
ADD_CONSTRAINT = re.compile(r"ALTER TABLE (\w+) ADD (CONSTRAINT \w+ .*)$", re.I)
DROP_CONSTRAINT = re.compile(r"ALTER TABLE (\w+) DROP CONSTRAINT (?:IF EXISTS )?(\w+)", re.I)
TABLE_FK = re.compile(
    r"(?:CONSTRAINT (\w+) )?FOREIGN KEY ?\((\w+)\) REFERENCES (\w+) ?\((\w+)\)(.*)$", re.I
)
COLUMN_FK = re.compile(r"REFERENCES (\w+) ?\((\w+)\)", re.I)


def _statements():
    for name in sorted(os.listdir(MIGRATIONS)):
        if name.endswith(".sql"):
            with open(os.path.join(MIGRATIONS, name), encoding="utf-8") as handle:
                text = re.sub(r"--[^\n]*", "", handle.read())
            for statement in text.split(";"):
                if statement := " ".join(statement.split()):
                    yield statement


def _add_definition(tables, table, definition):
    """Apply one column or table-constraint definition to `table`."""
    spec = tables[table]
    if fk := TABLE_FK.match(definition):
        name, column, ref_table, ref_column, rest = fk.groups()
        spec["fks"].append({
            "name": name or f"{table}_{column}_fkey", "column": column, "table": ref_table,
            "ref_column": ref_column,
            "required": spec["columns"].get(column, False) and "DEFERRABLE" not in rest.upper(),
        })
        return
    if definition.split(" ", 1)[0].upper() in ("CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK"):
        return
    column, rest = definition.split(" ", 1)
    upper = rest.upper()
    spec["columns"][column] = "NOT NULL" in upper or "PRIMARY KEY" in upper
    if ref := COLUMN_FK.search(rest):
        spec["fks"].append({
            "name": f"{table}_{column}_fkey", "column": column, "table": ref.group(1),
            "ref_column": ref.group(2),
            "required": spec["columns"][column] and "DEFERRABLE" not in upper,
        })


def load_schema():
    """Apply every migration, in file order, to an empty schema.

    Returns {table: {"columns": {name: not_null}, "fks": [{name, column, table, ref_column,
    required}]}}.
    """
    tables = {}
    for statement in _statements():
        if m := CREATE.match(statement):
            tables[m.group(1)] = {"columns": {}, "fks": []}
            for definition in re.split(r", ?(?![^()]*\))", m.group(2)):
                _add_definition(tables, m.group(1), definition.strip())
        elif m := ADD_COLUMN.match(statement):
            _add_definition(tables, m.group(1), f"{m.group(2)} {m.group(3)}")
        elif m := ADD_CONSTRAINT.match(statement):
            _add_definition(tables, m.group(1), m.group(2))
        elif m := DROP_CONSTRAINT.match(statement):
            spec = tables[m.group(1)]
            spec["fks"] = [fk for fk in spec["fks"] if fk["name"] != m.group(2)]
    return tables


def test_migrations_create_the_service_tables():
    tables = load_schema()
    for table in ("conversion_events", "ads", "ad_clicks", "wa_users", "wa_messages"):
        assert table in tables, f"table {table} missing after applying migrations/"


def test_foreign_keys_reference_existing_columns():
    tables = load_schema()
    for table, spec in tables.items():
        for fk in spec["fks"]:
            target = tables.get(fk["table"], {"columns": {}})
            assert fk["ref_column"] in target["columns"], (
                f"{table}.{fk['column']} references {fk['table']}.{fk['ref_column']},"
                " which does not exist"
            )


def test_every_table_has_a_parent_first_insert_order():
    tables = load_schema()
    # Only NOT NULL, non-deferrable keys constrain the order: a nullable one can be filled
    # in by a later UPDATE.
    parents = {
        table: {fk["table"] for fk in spec["fks"] if fk["required"] and fk["table"] != table}
        for table, spec in tables.items()
    }
    inserted = set()
    while len(inserted) < len(parents):
        ready = {t for t, deps in parents.items() if t not in inserted and deps <= inserted}
        stuck = sorted(set(parents) - inserted)
        assert ready, (
            f"circular NOT NULL foreign keys among {', '.join(stuck)}: no insert order"
            " satisfies them, so every write to these tables fails"
        )
        inserted |= ready
