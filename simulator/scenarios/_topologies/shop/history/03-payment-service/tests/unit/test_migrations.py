"""Unit tests of the payment-service migration runner, on a fake database."""

from contextlib import contextmanager

from payment_service.migrate import Migration, MigrationError, apply_pending, load_migrations


class FakeDatabase:
    """Records statements; a statement containing "BOOM" fails; transactions roll back."""

    def __init__(self, applied=()):
        self.history = list(applied)
        self.statements = []
        self._pending = None

    def execute(self, sql, params=()):
        if "BOOM" in sql:
            raise RuntimeError("syntax error at or near BOOM")
        if sql.startswith("SELECT id FROM schema_migrations"):
            return [(i,) for i in self.history]
        target = self._pending if self._pending is not None else self.statements
        target.append((sql, params))
        return []

    @contextmanager
    def transaction(self):
        self._pending = []
        try:
            yield self
        except Exception:
            self._pending = None
            raise
        for sql, params in self._pending:
            self.statements.append((sql, params))
            if sql.startswith("INSERT INTO schema_migrations"):
                self.history.append(params[0])
        self._pending = None


def test_applies_pending_in_order_and_skips_applied():
    db = FakeDatabase(applied=["0001_a"])
    applied = apply_pending(db, [Migration("0001_a", "CREATE a"), Migration("0002_b", "CREATE b"),
                                 Migration("0003_c", "CREATE c")])
    assert applied == ["0002_b", "0003_c"], applied
    assert db.history == ["0001_a", "0002_b", "0003_c"], db.history


def test_failed_migration_stops_the_run():
    db = FakeDatabase()
    try:
        apply_pending(db, [Migration("0001_a", "CREATE a"), Migration("0002_b", "BOOM"),
                           Migration("0003_c", "CREATE c")])
    except MigrationError as exc:
        assert exc.migration.id == "0002_b", exc
    else:
        raise AssertionError("a failing migration must raise MigrationError")
    assert db.history == ["0001_a"], db.history


def test_repository_migrations_load_in_order():
    ids = [m.id for m in load_migrations()]
    assert ids and ids == sorted(ids), ids
    assert ids[0] == "0001_create_payments", ids
