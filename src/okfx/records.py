"""Model objects as columns of arrays and JSON: generic over :mod:`okfx.model`, never executed.

:class:`Encoder` turns a list of objects of one model class into one column per field;
:class:`Decoder` turns them back. Nothing lists the fields by hand: a class's fields are
read from the class (dataclass fields, NamedTuple fields, or ``__slots__``), so a field
added to a model class is stored and read back like the others. The class name and field
names are written beside the columns, and a file whose classes have other fields than
this okfx's is refused (:class:`~okfx.statefile.StateFormatError`), so it is rebuilt.

Each column is encoded by what its values are, checked value by value when writing:

========  ===================================================  ========================
kind      values                                               stored as
========  ===================================================  ========================
str       ``str`` (``None`` allowed)                           ids into one string table
int       ``int`` (64-bit)                                     ``array('q')``
bool      ``bool``                                             ``array('B')``
float     ``float``                                            ``array('d')``
none      only ``None``                                        nothing
datetime  ``datetime`` with a fixed offset or none, or None    ISO 8601 text ids
date      ``date`` or None                                     ISO 8601 text ids
tuple     tuples (``list``: lists) of anything below           lengths + one column
object    instances of one model class (``None`` allowed)      a table of its columns
any       anything else JSON can say with the tags below       tagged JSON, value by value
========  ===================================================  ========================

The ``any`` tags name containers and a few value types (list, tuple, dict with any keys,
set, frozenset, bytes, datetime, date, model objects); reading one builds only those.
A value of another type cannot be stored: :class:`Unstorable` is raised when writing.
"""

from __future__ import annotations

import base64
import dataclasses
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timezone
from functools import cache, partial
from itertools import accumulate, chain, repeat
from operator import call
from typing import Any

from okfx import model
from okfx.statefile import StateFormatError

__all__ = [
    "Decoder",
    "Encoder",
    "Unstorable",
    "decoding",
    "model_classes",
    "model_fields",
]

_NONE = type(None)
_INT64 = (-(1 << 63), 1 << 63)


class Unstorable(TypeError):
    """A value the state format has no encoding for (the state is then not written)."""


@cache
def model_classes() -> dict[str, type]:
    """The classes of :mod:`okfx.model` that records can hold, by name."""
    found: dict[str, type] = {}
    for name in model.__all__:
        cls = getattr(model, name)
        if isinstance(cls, type) and _fields_of(cls) is not None:
            found[name] = cls
    return found


def _fields_of(cls: type) -> tuple[str, ...] | None:
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return tuple(cls._fields)
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls))
    slots = cls.__dict__.get("__slots__")
    if isinstance(slots, tuple) and slots:
        return tuple(slots)
    return None


def model_fields(cls: type) -> tuple[str, ...]:
    """The fields of a model class, in their declared order."""
    fields = _fields_of(cls)
    if fields is None:
        raise Unstorable(f"{cls.__name__} is not a model class")
    return fields


def _class_name(cls: type) -> str | None:
    name = cls.__name__
    return name if model_classes().get(name) is cls else None


def _fixed_offset(value: datetime) -> bool:
    tz = value.tzinfo
    return tz is None or type(tz) is timezone


class Encoder:
    """Encodes tables of model objects into arrays and a JSON spec.

    ``add_array(array) -> section index`` stores an array and returns how the spec refers
    to it; strings of every column share :attr:`strings`.
    """

    def __init__(self) -> None:
        self.strings: dict[str, int] = {}
        self.arrays: list[array[Any]] = []

    def _array(self, values: array[Any]) -> int:
        self.arrays.append(values)
        return len(self.arrays) - 1

    def _ids(self, values: Iterable[str | None]) -> int:
        table = self.strings
        ids = array("i")
        for value in values:
            if value is None:
                ids.append(0)
                continue
            found = table.get(value)
            if found is None:
                found = table[value] = len(table) + 1  # 0 stands for None
            ids.append(found)
        return self._array(ids)

    def string_table(self) -> list[str]:
        """Every string stored, in id order (id ``i`` is ``table[i - 1]``; 0 is None)."""
        return list(self.strings)

    def table(
        self, objects: Sequence[Any], cls: type, fields: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """The spec of ``objects`` (all of class ``cls``) as one column per field."""
        name = _class_name(cls)
        if name is None:
            raise Unstorable(f"{cls.__name__} is not a class of okfx.model")
        names = tuple(model_fields(cls) if fields is None else fields)
        if issubclass(cls, tuple):
            index = {field: i for i, field in enumerate(model_fields(cls))}
            columns = [[o[index[f]] for o in objects] for f in names]
        else:
            columns = [[getattr(o, f) for o in objects] for f in names]
        return {
            "class": name,
            "n": len(objects),
            "fields": list(names),
            "columns": [self.column(values) for values in columns],
        }

    def column(self, values: list[Any]) -> dict[str, Any]:
        kinds = set(map(type, values))
        nullable = _NONE in kinds
        kinds.discard(_NONE)
        if not kinds:
            return {"k": "none"}
        if len(kinds) == 1:
            (kind,) = kinds
            simple = self._simple(kind, values, nullable)
            if simple is not None:
                return simple
        return {"k": "any", "v": [self.any(value) for value in values]}

    def _simple(self, kind: type, values: list[Any], nullable: bool) -> dict[str, Any] | None:
        if kind is str:
            return {"k": "str", "a": self._ids(values)}
        if kind is datetime and all(v is None or _fixed_offset(v) for v in values):
            texts = [None if v is None else v.isoformat() for v in values]
            return {"k": "datetime", "a": self._ids(texts)}
        if kind is date:
            texts = [None if v is None else v.isoformat() for v in values]
            return {"k": "date", "a": self._ids(texts)}
        if nullable:
            cls_name = _class_name(kind)
            if cls_name is None:
                return None
            present = [v for v in values if v is not None]
            where = array("i")
            at = 0
            for v in values:
                at += v is not None
                where.append(at if v is not None else 0)  # 0 stands for None
            return {"k": "object", "t": self.table(present, kind), "a": self._array(where)}
        if kind is bool:
            return {"k": "bool", "a": self._array(array("B", values))}
        if kind is int:
            if min(values) < _INT64[0] or max(values) >= _INT64[1]:
                return None
            return {"k": "int", "a": self._array(array("q", values))}
        if kind is float:
            return {"k": "float", "a": self._array(array("d", values))}
        if kind is tuple or kind is list:
            flat = list(chain.from_iterable(values))
            lengths = self._array(array("i", map(len, values)))
            name = "tuple" if kind is tuple else "list"
            return {"k": name, "n": lengths, "items": self.column(flat)}
        if _class_name(kind) is not None:
            return {"k": "object", "t": self.table(values, kind)}
        return None

    def any(self, value: Any) -> Any:
        """One value as tagged JSON (see the module docstring)."""
        kind = type(value)
        if value is None or kind in (str, int, float, bool):
            return value
        if kind is list:
            return ["l", *map(self.any, value)]
        if kind is tuple:
            return ["t", *map(self.any, value)]
        if kind is dict:
            return ["d", *chain.from_iterable((self.any(k), self.any(v)) for k, v in value.items())]
        if kind is set or kind is frozenset:
            items = sorted(map(self.any, value), key=repr)
            return ["s" if kind is set else "f", *items]
        if kind is bytes:
            return ["b", base64.b64encode(value).decode("ascii")]
        if kind is datetime and _fixed_offset(value):
            return ["dt", value.isoformat()]
        if kind is date:
            return ["da", value.isoformat()]
        name = _class_name(kind)
        if name is not None:
            fields = model_fields(kind)
            if issubclass(kind, tuple):
                return ["o", name, *map(self.any, value)]
            return ["o", name, *(self.any(getattr(value, f)) for f in fields)]
        raise Unstorable(f"cannot store a value of type {kind.__name__}")


Builder = Callable[[Iterable[tuple[Any, ...]]], list[Any]]


@cache
def builder(cls: type) -> Builder:
    """Build objects of ``cls`` from tuples of field values, without calling ``__init__``
    (the values were validated when the object was first made)."""
    if issubclass(cls, tuple):
        return lambda rows: list(map(partial(tuple.__new__, cls), rows))
    fields = model_fields(cls)
    setters = [_setter(cls, f) for f in fields]
    new = object.__new__

    def make(values: tuple[Any, ...]) -> Any:
        obj = new(cls)
        any(map(call, setters, repeat(obj), values))
        return obj

    return lambda rows: list(map(make, rows))


def _setter(cls: type, field: str) -> Callable[[Any, Any], None]:
    for klass in cls.__mro__:
        descriptor = klass.__dict__.get(field)
        if descriptor is not None and hasattr(descriptor, "__set__"):
            setter: Callable[[Any, Any], None] = descriptor.__set__
            return setter
    return partial(_set_dict, field)


def _set_dict(field: str, obj: Any, value: Any) -> None:
    obj.__dict__[field] = value


def _split(items: list[Any], lengths: Sequence[int], kind: type) -> list[Any]:
    ends = list(accumulate(lengths))
    if ends and ends[-1] != len(items):
        raise StateFormatError("a tuple column's lengths do not add up")
    starts = [0, *ends[:-1]]
    parts = map(items.__getitem__, map(slice, starts, ends))
    return list(parts) if kind is list else list(map(tuple, parts))


@contextmanager
def decoding() -> Iterator[None]:
    """Turn the errors a damaged table can cause into :class:`StateFormatError`."""
    try:
        yield
    except (IndexError, KeyError, TypeError, ValueError, OverflowError, RecursionError) as exc:
        if isinstance(exc, StateFormatError):
            raise
        raise StateFormatError(f"a table does not decode: {exc!r}") from None


class Decoder:
    """Reads back what :class:`Encoder` wrote: ``arrays[i]`` is the encoder's i-th array,
    ``strings`` its string table. Anything that does not fit raises
    :class:`~okfx.statefile.StateFormatError` (or, for an id past a table, ``IndexError``:
    see :func:`decoding`)."""

    def __init__(self, strings: list[str], arrays: Sequence[Sequence[Any]]) -> None:
        if not isinstance(strings, list) or not set(map(type, strings)) <= {str}:
            raise StateFormatError("the string table is not a list of strings")
        # Id 0 is None, id i the string i - 1; an id past the end raises IndexError.
        self.strings: list[str | None] = [None, *strings]
        self.arrays = arrays

    def _array(self, ref: Any, typecode: str) -> Sequence[Any]:
        if type(ref) is not int or not 0 <= ref < len(self.arrays):
            raise StateFormatError("a column refers to a missing array")
        values = self.arrays[ref]
        code = values.typecode if isinstance(values, array) else getattr(values, "format", "")
        if code != typecode:
            raise StateFormatError("a column's array has the wrong type")
        return values

    def _texts(self, ref: Any) -> list[str | None]:
        # Ids past the table raise IndexError (see decoding()); the writer writes no
        # negative id, and the section's checksum vouches that none was written since.
        return list(map(self.strings.__getitem__, self._array(ref, "i")))

    def table(
        self,
        spec: Any,
        cls: type,
        fields: Sequence[str] | None = None,
        build: Builder | None = None,
    ) -> list[Any]:
        """The objects of a :meth:`Encoder.table` spec, which must be of ``cls`` with
        exactly ``fields`` (default: all of them); ``build`` makes them from rows."""
        names = list(model_fields(cls) if fields is None else fields)
        if not isinstance(spec, dict) or spec.get("class") != _class_name(cls):
            raise StateFormatError(f"a table is not of class {cls.__name__}")
        if spec.get("fields") != names:
            raise StateFormatError(f"stored {cls.__name__} fields differ from this okfx's")
        n, columns = spec.get("n"), spec.get("columns")
        if type(n) is not int or not isinstance(columns, list) or len(columns) != len(names):
            raise StateFormatError(f"a {cls.__name__} table is malformed")
        decoded = [self.column(column, n) for column in columns]
        rows = zip(*decoded, strict=True) if decoded else repeat((), n)
        return (build or builder(cls))(rows)

    def column(self, spec: Any, n: int) -> list[Any]:
        if not isinstance(spec, dict):
            raise StateFormatError("a column is malformed")
        kind = spec.get("k")
        values: list[Any]
        if kind == "none":
            values = [None] * n
        elif kind == "str":
            values = self._texts(spec.get("a"))
        elif kind == "datetime":
            values = [t if t is None else datetime.fromisoformat(t) for t in self._texts(spec["a"])]
        elif kind == "date":
            values = [t if t is None else date.fromisoformat(t) for t in self._texts(spec["a"])]
        elif kind == "bool":
            values = list(map(bool, self._array(spec.get("a"), "B")))
        elif kind == "int":
            values = list(self._array(spec.get("a"), "q"))
        elif kind == "float":
            values = list(self._array(spec.get("a"), "d"))
        elif kind in ("tuple", "list"):
            lengths = self._array(spec.get("n"), "i")
            if len(lengths) and min(lengths) < 0:
                raise StateFormatError("a tuple column has a negative length")
            items = self.column(spec.get("items"), sum(lengths))
            values = _split(items, lengths, tuple if kind == "tuple" else list)
        elif kind == "object":
            values = self._objects(spec, n)
        elif kind == "any":
            raw = spec.get("v")
            if not isinstance(raw, list):
                raise StateFormatError("an 'any' column is malformed")
            values = [self.any(v) for v in raw]
        else:
            raise StateFormatError(f"unknown column kind {kind!r}")
        if len(values) != n:
            raise StateFormatError("a column has the wrong length")
        return values

    def _objects(self, spec: dict[str, Any], n: int) -> list[Any]:
        table = spec.get("t")
        name = table.get("class") if isinstance(table, dict) else None
        cls = model_classes().get(name) if isinstance(name, str) else None
        if cls is None:
            raise StateFormatError(f"unknown class {name!r}")
        objects = self.table(table, cls)
        if "a" not in spec:
            return objects
        where = self._array(spec["a"], "i")
        return list(map([None, *objects].__getitem__, where))

    def any(self, value: Any) -> Any:
        if not isinstance(value, list):
            if isinstance(value, dict):
                raise StateFormatError("an untagged mapping in an 'any' value")
            return value
        if not value or not isinstance(value[0], str):
            raise StateFormatError("an 'any' value has no tag")
        tag, rest = value[0], value[1:]
        try:
            return self._tagged(tag, rest)
        except (TypeError, ValueError, IndexError) as exc:
            if isinstance(exc, StateFormatError):
                raise
            raise StateFormatError(f"a {tag!r} value does not decode: {exc}") from None

    def _tagged(self, tag: str, rest: list[Any]) -> Any:
        if tag == "l":
            return [self.any(v) for v in rest]
        if tag == "t":
            return tuple(self.any(v) for v in rest)
        if tag == "d":
            if len(rest) % 2:
                raise StateFormatError("a mapping has a key without a value")
            items = [self.any(v) for v in rest]
            return dict(zip(items[0::2], items[1::2], strict=True))
        if tag in ("s", "f"):
            items = [self.any(v) for v in rest]
            return set(items) if tag == "s" else frozenset(items)
        if tag == "b" and len(rest) == 1 and isinstance(rest[0], str):
            return base64.b64decode(rest[0], validate=True)
        if tag == "dt" and len(rest) == 1 and isinstance(rest[0], str):
            return datetime.fromisoformat(rest[0])
        if tag == "da" and len(rest) == 1 and isinstance(rest[0], str):
            return date.fromisoformat(rest[0])
        if tag == "o" and rest and isinstance(rest[0], str):
            cls = model_classes().get(rest[0])
            if cls is None:
                raise StateFormatError(f"unknown class {rest[0]!r}")
            values = tuple(self.any(v) for v in rest[1:])
            if len(values) != len(model_fields(cls)):
                raise StateFormatError(f"a {rest[0]} has the wrong number of fields")
            return builder(cls)([values])[0]
        raise StateFormatError(f"unknown tag {tag!r}")
