"""tools/autograd_suite.py's drop-in swap of autograd's imports (the rewrite alone: running
autograd's suite takes minutes and is not part of the default run)."""

from __future__ import annotations

from tools.autograd_suite import _generic, rewrite

SOURCE = '''import autograd.numpy as np
import autograd.numpy.random as npr
import autograd.scipy.stats.norm as norm
from autograd.scipy.special import logsumexp
from autograd import grad, make_vjp, value_and_grad as vgrad
from autograd import (
    elementwise_grad,
    deriv,
)
from autograd.misc import const_graph, flatten
from autograd.test_util import check_grads  # , nd
    from autograd.misc.optimizers import adam
y = autograd.scipy.signal.convolve(a, b) + np.sum(x)
'''

EXPECTED = '''import numpy as np
import numpy.random as npr
from rulebridge.scipy.stats import norm as norm
from rulebridge.scipy.special import logsumexp
from _rulebridge_swap import grad, value_and_grad as vgrad
from autograd import make_vjp
from _rulebridge_swap import elementwise_grad
from autograd import deriv
from _rulebridge_swap import flatten
from autograd.misc import const_graph
from _rulebridge_swap import check_grads  # , nd
    from _rulebridge_swap import adam
y = rulebridge.scipy.signal.convolve(a, b) + np.sum(x)
'''


def test_the_swap_rewrites_imports_only_and_keeps_autograd_only_names():
    assert rewrite(SOURCE) == EXPECTED


def test_failure_classes_group_one_cause():
    a = _generic("t.py:3: np.asarray converted a traced value (float64[:, :] of shape (2, 3)) to")
    b = _generic("u.py:9: np.asarray converted a traced value (float64 of shape ()) to")
    assert a == b == "np.asarray converted a traced value (<value>) to"
    assert _generic("VJP check failed: analytic -1.5, numeric 2e-05") == \
        "VJP check failed: analytic N, numeric N"
