"""The ``{{ … }}`` expression language.

A string that is exactly one ``{{ expr }}`` renders to the expression's native value; text with
embedded expressions renders to a string. Compile once with :func:`compile_template` (cached),
render with :meth:`CompiledTemplate.render`, or walk a whole value with :func:`render`.
"""

from __future__ import annotations

from tarry.language.expressions.context import EvalContext, WorkMeter
from tarry.language.expressions.template import (
    CompiledTemplate,
    compile_template,
    is_template,
    render,
)

__all__ = ["CompiledTemplate", "EvalContext", "WorkMeter", "compile_template", "is_template",
           "render"]
