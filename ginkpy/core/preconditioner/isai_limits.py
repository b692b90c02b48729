"""The limit of an ISAI row, shared by ``gk.preconditioner.Isai`` and
``gk.batch.preconditioner.Isai``: each row of the approximate inverse solves a small dense
system of its own pattern's size (m^2 entries, m^3 work), so a row of more than ``ROW_LIMIT``
entries is refused (or, for the single-system ISAI, sent to its excess system)."""

ROW_LIMIT = 128  # the most entries a row of the inverse may have (its system is dense: m^2 entries, m^3 work)
