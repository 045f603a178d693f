"""A Gaussian process's hyperparameters fitted by maximising the log marginal likelihood.

The kernel is RBF (squared exponential) plus noise; the likelihood goes through
`np.linalg.cholesky` and `np.linalg.solve` exactly as one would write it without gradients.
The parameters are optimised in log space so that they stay positive.
"""

import numpy as np
import scipy.optimize

import rulebridge


def rbf_kernel(x1, x2, lengthscale, variance):
    sq_dist = (x1[:, None] - x2[None, :]) ** 2
    return variance * np.exp(-0.5 * sq_dist / lengthscale ** 2)


def negative_log_marginal_likelihood(log_params, x, y):
    lengthscale, variance, noise = np.exp(log_params[0]), np.exp(log_params[1]), np.exp(log_params[2])
    n = len(x)
    K = rbf_kernel(x, x, lengthscale, variance) + noise * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))  # K^-1 y with two triangular systems
    return 0.5 * (y @ alpha) + np.sum(np.log(np.diagonal(L))) + 0.5 * n * np.log(2 * np.pi)


def central_differences(f, p, h=1e-6):
    """The gradient of `f` at `p` by central differences: a reference independent of rulebridge."""
    return np.array([(f(p + e) - f(p - e)) / (2 * h) for e in np.eye(len(p)) * h])


def main(n_points=60, seed=0):
    rng = np.random.default_rng(seed)
    true = {"lengthscale": 0.7, "variance": 1.5, "noise": 0.01}
    x = np.sort(rng.uniform(-4, 4, size=n_points))
    K = rbf_kernel(x, x, true["lengthscale"], true["variance"]) + true["noise"] * np.eye(n_points)
    y = np.linalg.cholesky(K) @ rng.normal(size=n_points)  # a sample of that very process

    nll_and_grad = rulebridge.value_and_grad(negative_log_marginal_likelihood)
    start = np.log([2.0, 0.5, 0.1])
    # bounds keep the line search's trial points where exp() neither overflows nor underflows
    result = scipy.optimize.minimize(nll_and_grad, start, args=(x, y), jac=True, method="L-BFGS-B",
                                     bounds=[(-6.0, 4.0)] * 3)
    assert result.success, result.message

    f = lambda p: negative_log_marginal_likelihood(p, x, y)  # noqa: E731
    _, g = nll_and_grad(start, x, y)
    assert np.allclose(g, central_differences(f, start), rtol=1e-5, atol=1e-6)
    assert np.max(np.abs(central_differences(f, result.x))) < 1e-3  # a stationary point

    lengthscale, variance, noise = np.exp(result.x)
    # the fit is at least as likely as the parameters the data were drawn with, and the
    # lengthscale, which the data pin down best, is near the one they were drawn with
    assert result.fun <= f(np.log([true["lengthscale"], true["variance"], true["noise"]])) + 1e-9
    assert 1 / 1.5 < lengthscale / true["lengthscale"] < 1.5, lengthscale
    print(f"-log p(y) {f(start):.2f} -> {result.fun:.2f}; lengthscale {lengthscale:.3f} "
          f"(true {true['lengthscale']}), variance {variance:.3f} (true {true['variance']}), "
          f"noise {noise:.4f} (true {true['noise']})")
    return result


if __name__ == "__main__":
    main()
