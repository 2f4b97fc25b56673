"""The installed package: its wheel's tag, its stubs, its docstrings."""

import ast
import enum
import importlib.metadata
import inspect
import pathlib

import rtde_rs
import rtde_rs.ur_rtde
from rtde_rs import _rtde_rs

STUBS = pathlib.Path(_rtde_rs.__file__).with_name("_rtde_rs.pyi")


def test_the_wheel_is_one_abi3_wheel_for_cpython_3_9_and_later():
    dist = importlib.metadata.distribution("rtde-rs")
    wheel = dist.read_text("WHEEL")
    tags = [line.split(": ", 1)[1] for line in wheel.splitlines() if line.startswith("Tag: ")]
    assert tags and all(t.startswith("cp39-abi3-") for t in tags), tags
    assert pathlib.Path(_rtde_rs.__file__).name == "_rtde_rs.abi3.so"
    assert (pathlib.Path(rtde_rs.__file__).parent / "py.typed").exists()


def stub_names():
    tree = ast.parse(STUBS.read_text())
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            names.update({t.id: node for t in node.targets})
    return names


def test_the_stubs_name_every_public_name_and_no_other():
    stubs = {n for n in stub_names() if not n.startswith("_") or n in ("__version__", "_panic_for_test")}
    module = {n for n in dir(_rtde_rs) if not n.startswith("__") or n == "__version__"}
    assert stubs == module
    assert set(rtde_rs.__all__) <= module


def test_the_stubs_enums_are_the_modules():
    for name, node in stub_names().items():
        runtime = getattr(_rtde_rs, name, None)
        if isinstance(runtime, type) and issubclass(runtime, enum.IntEnum):
            members = {
                s.targets[0].id: ast.literal_eval(s.value) for s in node.body if isinstance(s, ast.Assign)
            }
            assert members == {m.name: m.value for m in runtime}, name


def test_the_stubs_methods_are_the_classes():
    for name, node in stub_names().items():
        if not isinstance(node, ast.ClassDef):
            continue
        runtime = getattr(_rtde_rs, name)
        if issubclass(runtime, (BaseException, enum.Enum)):
            continue
        stubbed = {f.name for f in node.body if isinstance(f, ast.FunctionDef)} - {"__init__"}
        public = {n for n in dir(runtime) if not n.startswith("_")}
        assert public <= stubbed | {"name"} and {n for n in stubbed if not n.startswith("_")} <= public, name


def test_help_reads_well():
    for cls in (rtde_rs.Client, rtde_rs.Sim, rtde_rs.ServoLoop, rtde_rs.Getter, rtde_rs.Robot, rtde_rs.Dashboard):
        doc = inspect.getdoc(cls)
        assert doc and len(doc) > 100, cls
        for name, member in inspect.getmembers(cls):
            if not name.startswith("_") and callable(member):
                assert inspect.getdoc(member), f"{cls.__name__}.{name}"
    assert "every package in order" in inspect.getdoc(rtde_rs.Client)
    assert inspect.getdoc(rtde_rs.MoveHandle.wait)
    ur_rtde = rtde_rs.ur_rtde
    for cls in (ur_rtde.RTDEReceiveInterface, ur_rtde.RTDEIOInterface, ur_rtde.RTDEControlInterface, ur_rtde.DashboardClient):
        for name, member in inspect.getmembers(cls):
            if name[0].islower() and callable(member):
                assert inspect.getdoc(member), f"{cls.__name__}.{name}"


def test_the_aio_stubs_name_its_classes_and_their_own_methods():
    import rtde_rs.aio

    tree = ast.parse(pathlib.Path(rtde_rs.aio.__file__).with_suffix(".pyi").read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    assert set(classes) == set(rtde_rs.aio.__all__)
    for name, node in classes.items():
        stubbed = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        runtime = getattr(rtde_rs.aio, name)
        # The class's own methods and those of aio's shared base.
        own = {
            n
            for c in runtime.__mro__
            if c is not object
            for n, v in vars(c).items()
            if (callable(v) or isinstance(v, property)) and (n.startswith("__") or not n.startswith("_"))
        }
        assert stubbed == own - {"__repr__"}, name
