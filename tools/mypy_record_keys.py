"""A mypy plugin: `.get("key")` on a TypedDict that has no such key is an error.

mypy checks `record["key"]` against a TypedDict's keys but lets `record.get("key")` with any
other key pass (a TypedDict may hold more keys at run time), so a misspelled field read with
`.get` went unnoticed. smevals reads its records (smevals/store/records.py) mostly with
`.get`, and they hold no keys but those their types list, so here the same rule applies to
both: a literal key the TypedDict does not have is reported, as mypy reports it for `[]`.
The type of the call is then what mypy gives it.

Enabled in pyproject.toml (`[tool.mypy] plugins`); a development tool, not shipped.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.plugin import MethodContext, Plugin
from mypy.plugins.default import typed_dict_get_callback
from mypy.typeops import try_getting_str_literals
from mypy.types import Type, TypedDictType

GET = "typing.Mapping.get"


def _checked_get(ctx: MethodContext) -> Type:
    if isinstance(ctx.type, TypedDictType) and ctx.args and len(ctx.args[0]) == 1:
        keys = try_getting_str_literals(ctx.args[0][0], ctx.arg_types[0][0]) or []
        for key in keys:
            if key not in ctx.type.items:
                ctx.api.msg.typeddict_key_not_found(ctx.type, key, ctx.context)
    return typed_dict_get_callback(ctx)


class RecordKeys(Plugin):
    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return _checked_get if fullname == GET else None


def plugin(version: str) -> type[Plugin]:
    return RecordKeys
