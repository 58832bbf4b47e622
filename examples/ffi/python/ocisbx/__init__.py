"""ocisbx: Python bindings of libocisbx over ctypes (no compiled extension).

    import ocisbx
    with ocisbx.Backend.create(project_id, expiration="PT30M") as b:
        h = ocisbx.Harness(b, gate=lambda call: "allow")
        print(b.sandbox_id, b.label, h.tools, h.prompt)
        print(h.call("exec", {"command": "python3 -V"}))

The library is found through $OCISBX_LIBRARY, else next to the package,
else the system's loader by its versioned name (ocisbx.SONAME; see
docs/ffi.md). Library failures raise ocisbx.Error; a tool's own failure is
a result {"error": {"code", "message"}}.

The package is a module per part of the C API; each declares the
prototypes of the functions it calls (_native.declare) and its public names
(__all__), which this file gathers. A new part is a new module listed in
_MODULES.
"""

from typing import List

from . import _native
from ._native import lib, text
from ._version import SONAME, __version__

from . import _client, _errors, backend, evidence, fleet, harness, log  # noqa: E402
from ._client import *  # noqa: F401,F403,E402
from ._errors import *  # noqa: F401,F403,E402
from .backend import *  # noqa: F401,F403,E402
from .evidence import *  # noqa: F401,F403,E402
from .fleet import *  # noqa: F401,F403,E402
from .harness import *  # noqa: F401,F403,E402
from .log import *  # noqa: F401,F403,E402

_MODULES = (_errors, _client, backend, harness, evidence, fleet, log)

# what ocisbx_features() says (include/ocisbx/common.h)
FEATURE_YAML_POLICY = 1 << 0
FEATURE_LOCAL_BACKEND = 1 << 1
FEATURE_HTTP2 = 1 << 2

library_path: str = _native.path

# Once per process, before any thread uses the library (common.h); never
# cleaned up: objects may still be freed during interpreter exit.
if lib.ocisbx_global_init() < 0:
    raise ImportError("ocisbx: ocisbx_global_init failed")


def version() -> str:
    """The running library's version ("0.1.0")."""
    return text(lib.ocisbx_version()) or ""


def features() -> int:
    """ocisbx_features(): a bit set of FEATURE_* (0 from a library without it)."""
    return 0 if "ocisbx_features" in _native.missing else int(lib.ocisbx_features())


__all__: List[str] = ["version", "features", "library_path", "SONAME", "__version__", "FEATURE_YAML_POLICY",
                      "FEATURE_LOCAL_BACKEND", "FEATURE_HTTP2"]
for _m in _MODULES:
    __all__ += list(_m.__all__)
del _m
