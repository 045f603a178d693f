"""The Rosenbrock function minimised with SciPy's trust-region Newton-CG, which asks for the
gradient and for Hessian-vector products: `jac=rulebridge.grad(f)`, `hessp=rulebridge.hvp(f)`.

`hvp(f)(x, v)` is the gradient of `<grad f(x), v>`: a differentiation nested in another
(reverse over reverse), never forming the Hessian.
"""

import numpy as np
import scipy.optimize

import rulebridge


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def main(n=10, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1.5, 1.5, size=n)
    result = scipy.optimize.minimize(rosenbrock, x0, method="trust-ncg",
                                     jac=rulebridge.grad(rosenbrock),
                                     hessp=rulebridge.hvp(rosenbrock),
                                     options={"gtol": 1e-10})
    assert result.success, result.message
    np.testing.assert_allclose(result.x, np.ones(n), atol=1e-8)  # the minimum is at (1, ..., 1)

    # Hessian-vector products against SciPy's own closed-form ones, at a random point
    x, v = rng.normal(size=n), rng.normal(size=n)
    np.testing.assert_allclose(rulebridge.hvp(rosenbrock)(x, v),
                               scipy.optimize.rosen_hess_prod(x, v), rtol=1e-10)
    np.testing.assert_allclose(rulebridge.hessian(rosenbrock)(x),
                               scipy.optimize.rosen_hess(x), rtol=1e-10)
    print(f"trust-ncg: f {rosenbrock(x0):.3g} -> {result.fun:.1e} in {result.nit} iterations, "
          f"{result.nhev} Hessian-vector products")
    return result


if __name__ == "__main__":
    main()
