"""Regenerate the expression parser's tables after editing its grammar or upgrading Lark.

    .venv/bin/python scripts/expression_tables.py

(src/tarry/language/expressions/tables.py says what the file is; a test fails while it is
not current.)
"""

from tarry.language.expressions.tables import write_tables

if __name__ == "__main__":
    print(f"wrote {write_tables()}")
