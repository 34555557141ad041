"""Loads py-feat's readers and plotting (feat.data.Fex, feat.utils.io.read_openface / read_feat,
feat.plotting.draw_lineface) straight from the pinned py-feat wheel, without its model stack.

`import feat` runs feat/__init__.py, which imports torch, torchvision, torchcodec, xgboost and the
detectors: gigabytes of wheels the verification venv does not carry, and none of them used by the
code under test. So the package is registered without running its __init__, and the modules that
only the detectors and image/video decoding use are stubs (every attribute a do-nothing class).
The code that reads CSVs into a Fex, its column accessors and the landmark/bar-plot path of
Fex.plot_detections run for real on numpy, pandas and matplotlib. seaborn, used there only for
sns.set_context (font sizes), is stubbed too.
"""
import importlib.abc
import importlib.machinery
import os
import sys
import types
import zipfile

STUBBED = ("torch", "torchvision", "torchcodec", "xgboost", "plotly", "huggingface_hub", "skimage",
           "sklearn", "scipy", "seaborn", "joblib", "timm", "safetensors", "skops", "celluloid",
           "easing_functions", "kornia")


class _Anything(type):
    """A class whose attributes are classes: stands for any stubbed name (also as a base class)."""
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything(name, (), {})

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __call__(cls, *args, **kwargs):
        return cls if not args or not callable(args[0]) else args[0]


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything(name, (), {})


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


def load(wheel, workdir):
    """Extracts the wheel's feat/ into workdir and returns the `feat` package with Fex set."""
    # The real libraries first: pandas probes optional packages at import and must not see stubs.
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    with zipfile.ZipFile(wheel) as z:
        z.extractall(workdir, [n for n in z.namelist() if n.startswith("feat/")])
    for name in STUBBED:
        for m in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[m]
    sys.meta_path.insert(0, _StubFinder())
    feat = types.ModuleType("feat")
    feat.__path__ = [os.path.join(workdir, "feat")]
    feat.__version__ = "2.1.5"
    sys.modules["feat"] = feat
    import feat.data
    feat.Fex = feat.data.Fex
    import feat.utils.io
    import feat.utils
    return feat
