"""Which code is the user's: not the standard library's, an installed package's or rulebridge's.

A lookup that rulebridge/writes/follow.py follows must come from the differentiated function's
own Python, through frames that are all the user's (a library's buffers stay plain ndarrays),
up to the call of the differentiated function. rulebridge's own modules that call the user's
function on its behalf (jacobian's and elementwise_grad's wrappers, check_grads' `at`) count as
the user's: the user's code beyond them is still followed.
"""

from __future__ import annotations

import os
import site
import sysconfig


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old site module
        pass
    roots.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # rulebridge itself
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


_ROOTS = _library_roots()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_CALLS_USER_CODE = frozenset(os.path.join(_PACKAGE, *path) for path in
                             (("api.py",), ("boundary.py",), ("checking", "gradcheck.py")))
_USER_FILE: dict[str, bool] = {}


def is_user_file(filename: str) -> bool:
    user = _USER_FILE.get(filename)
    if user is None:
        if filename.startswith("<frozen"):
            user = False
        else:
            path = os.path.realpath(filename) if not filename.startswith("<") else filename
            user = path in _CALLS_USER_CODE or not path.startswith(_ROOTS)
        _USER_FILE[filename] = user
    return user


def is_user_code(code) -> bool:
    return is_user_file(code.co_filename)
