"""The package's version: the library's, whose ABI it is written for."""

__version__ = "0.1.0"

# While the library is 0.x every minor version may change its ABI: its
# SONAME is libocisbx.so.0.MINOR (libocisbx.so.MAJOR from 1.0 on), and that
# versioned name is what the system's loader is asked for.
_major, _minor = (int(x) for x in __version__.split(".")[:2])
SONAME = "libocisbx.so.%d.%d" % (_major, _minor) if _major == 0 else "libocisbx.so.%d" % _major
