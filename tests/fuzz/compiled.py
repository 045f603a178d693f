"""Fuzzed calls of compiled code inside the differentiated function and in another thread while
it runs (issue 22): numpy.random (Generator and legacy) and scipy (ndimage, special, Cython's
sosfilt) allocate through the numpy module with no Python frame of their own, and must get real
ndarrays, never a box. Each draw is seeded inside the program, so finite differences of the
same program see the same numbers; a dead process is a failed run."""

from __future__ import annotations


def _noise(b, template):
    a = b.var()
    if a is None:
        return False
    seed = b.integer(0, 9)
    return b.emit(template.format(a=a, seed=seed))


_FLAT = "np.linspace(0.5, 1.5, np.size({a})).reshape(np.shape({a}))"
TEMPLATES = {
    "generator": "{{out}} = {a} * np.random.default_rng({seed}).normal(size=np.shape({a}))"
                 ".astype({a}.dtype)",
    "legacy": "np.random.seed({seed})\n"
              "{{out}} = {a} + 0.1 * np.random.standard_normal(np.shape({a})).astype({a}.dtype)",
    "random_state": "{{out}} = np.sin({a}) * np.random.RandomState({seed}).uniform("
                    "size=np.shape({a})).astype({a}.dtype)",
    "ndimage": "import scipy.ndimage\n"
               "{{out}} = {a} * scipy.ndimage.gaussian_filter(" + _FLAT + ", 1.0)"
               ".astype({a}.dtype)",
    "special": "import scipy.special\n"
               "{{out}} = {a} * scipy.special.gammaln(" + _FLAT + " + 1.0).astype({a}.dtype)",
    "cython_sosfilt": "import scipy.signal\n"
                      "{{out}} = {a} * scipy.signal.sosfilt(scipy.signal.butter(2, 0.3, "
                      "output='sos'), np.ravel(" + _FLAT + ")).reshape(np.shape({a}))"
                      ".astype({a}.dtype)",
    "noise_into_buffer": "{{out}} = np.zeros(np.shape({a}), dtype={a}.dtype)\n"
                         "{{out}}[...] = {a} * np.random.default_rng({seed}).random("
                         "np.shape({a})).astype({a}.dtype)",
    "other_thread": "_drawn = []\n"
                    "_thread = __import__('threading').Thread(target=lambda: _drawn.append("
                    "np.sum(np.random.default_rng({seed}).normal(size=3)) + np.sum(np.zeros(2))"
                    " + np.sum(np.array([1.0])) + float(np.mean([0.5]))))\n"
                    "_thread.start()\n_thread.join()\n"
                    "{{out}} = {a} * (1.0 + 0.01 * float(_drawn[0]))",
}

STEPS = {name: (lambda template: lambda b: _noise(b, template))(template)
         for name, template in TEMPLATES.items()}
