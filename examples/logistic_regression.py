"""Logistic regression fitted with SciPy's L-BFGS-B, the gradient from rulebridge.

`rulebridge.value_and_grad(loss)` returns `(loss, gradient)` in one call, which is what
`scipy.optimize.minimize(..., jac=True)` asks for.
"""

import numpy as np
import scipy.optimize

import rulebridge


def loss(w, X, y, l2):
    """Mean negative log-likelihood of labels `y` in {0, 1}, plus an L2 penalty."""
    z = X @ w
    # log(1 + exp(z)) - y z, written with logaddexp so large |z| neither overflows nor loses digits
    return np.mean(np.logaddexp(0.0, z) - y * z) + l2 * np.sum(w ** 2)


def central_differences(f, w, h=1e-6):
    """The gradient of `f` at `w` by central differences: a reference independent of rulebridge."""
    steps = np.eye(len(w)) * h
    return np.array([(f(w + e) - f(w - e)) / (2 * h) for e in steps])


def main(n_samples=500, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    w_true = rng.normal(size=n_features) * 2
    y = (rng.random(n_samples) < 1 / (1 + np.exp(-(X @ w_true)))).astype(np.float64)
    l2 = 1e-3

    loss_and_grad = rulebridge.value_and_grad(loss)
    w0 = np.zeros(n_features)
    result = scipy.optimize.minimize(loss_and_grad, w0, args=(X, y, l2), jac=True,
                                     method="L-BFGS-B")
    assert result.success, result.message

    # the optimiser's gradient is the true one: compare at a random point with central differences
    w = rng.normal(size=n_features)
    _, g = loss_and_grad(w, X, y, l2)
    reference = central_differences(lambda v: loss(v, X, y, l2), w)
    assert np.allclose(g, reference, rtol=1e-6, atol=1e-8), (g, reference)

    # the fit: at the optimum the (independently computed) gradient vanishes, the loss fell well
    # below that of w = 0 (log 2), and the predicted labels mostly agree with the data
    assert np.max(np.abs(central_differences(lambda v: loss(v, X, y, l2), result.x))) < 1e-4
    assert result.fun < 0.75 * loss(w0, X, y, l2)
    accuracy = np.mean((X @ result.x > 0) == (y == 1))
    assert accuracy > 0.75, accuracy
    cosine = result.x @ w_true / (np.linalg.norm(result.x) * np.linalg.norm(w_true))
    assert cosine > 0.9, cosine  # the direction of the true weights is recovered
    print(f"loss {loss(w0, X, y, l2):.4f} -> {result.fun:.4f} in {result.nit} iterations, "
          f"accuracy {accuracy:.2f}")
    print("fitted w:", np.round(result.x, 2), " true w:", np.round(w_true, 2))
    return result


if __name__ == "__main__":
    main()
