import pytest

from herbrand.framework.errors import MissingDependencyError, UnknownComponentError
from herbrand.framework.registry import Registry


class Thing:
    pass


def test_register_and_get_a_class():
    registry = Registry("widget")
    registry.register("thing", Thing)
    assert registry.get("thing") is Thing
    assert "thing" in registry and registry.names() == ("thing",)


def test_lazy_path_is_imported_on_first_use():
    registry = Registry("widget")
    registry.register("ordered", "collections:OrderedDict")
    from collections import OrderedDict

    assert registry.get("ordered") is OrderedDict


def test_unknown_name_lists_the_known_ones():
    registry = Registry("index")
    registry.register("hash", Thing)
    registry.register("btree", Thing)
    with pytest.raises(UnknownComponentError, match=r"unknown index 'nope'; known: btree, hash"):
        registry.get("nope")


def test_missing_optional_dependency_names_the_extra():
    registry = Registry("backend")
    registry.register("spark", "herbrand_no_such_module.backend:Spark", extra="spark")
    with pytest.raises(MissingDependencyError, match=r"pip install 'herbrand\[spark\]'"):
        registry.get("spark")
